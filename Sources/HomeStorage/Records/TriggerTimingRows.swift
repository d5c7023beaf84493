internal import HomeModel

// How the rows of a trigger's timing (its time conditions, its command, times of day) read back.

extension HomeDatabase {
    /// A trigger row's time condition (columns 17 to 20).
    static func condition(_ row: Statement, of id: ObjectID) throws(HomeError) -> TimeCondition {
        var condition = TimeCondition(
            days: Weekdays(rawValue: UInt8(truncatingIfNeeded: row.int64(17))),
            timeZone: row.isNull(20) ? "" : row.string(20))
        for (column, path) in [(Int32(18), \TimeCondition.windowFrom), (19, \TimeCondition.windowTo)]
        where !row.isNull(column) {
            guard let time = DayTime(storedText: row.string(column)) else {
                throw HomeError(.dataLoss, "trigger \(id) has an unreadable window end \(row.string(column))")
            }
            condition[keyPath: path] = time
        }
        return condition
    }
}

extension HomeDatabase {
    /// A trigger row's command (columns 24 to 26), or nil.
    static func command(_ row: Statement, of id: ObjectID) throws(HomeError) -> TriggerCommand? {
        if row.isNull(24) { return nil }
        var arguments: [String] = []
        var rest = Substring(row.string(25))
        while !rest.isEmpty {
            guard let colon = rest.firstIndex(of: ":"), let length = Int(rest[..<colon]), length >= 0,
                case let start = rest.index(after: colon),
                let end = rest.utf8.index(start, offsetBy: length, limitedBy: rest.utf8.endIndex)
            else {
                throw HomeError(.dataLoss, "trigger \(id) has unreadable command arguments")
            }
            // By UTF-8 offsets, not characters: an argument ending in a letter that
            // the next one's combining mark would join is still cut where it ends.
            arguments.append(String(decoding: rest.utf8[start..<end], as: UTF8.self))
            rest = rest[end...]
        }
        return TriggerCommand(program: row.string(24), arguments: arguments, timeoutMs: row.int64(26))
    }
}

extension DayTime {
    /// "clock MS", "sunrise MS", "sunset MS": how a window's end is stored.
    var storedText: String {
        switch self {
        case .clock(let msOfDay): "clock \(msOfDay)"
        case .sun(let event, let offsetMs): "\(event.rawValue) \(offsetMs)"
        }
    }

    init?(storedText: String) {
        let parts = storedText.split(separator: " ")
        guard parts.count == 2, let number = Int64(parts[1]) else { return nil }
        if parts[0] == "clock" {
            self = .clock(msOfDay: number)
        } else if let event = SunEvent(rawValue: String(parts[0])) {
            self = .sun(event, offsetMs: number)
        } else {
            return nil
        }
    }
}
