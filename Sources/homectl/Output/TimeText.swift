internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// ISO 8601 dates and times for timers.
enum TimeText {
    /// Milliseconds since the epoch for `2027-01-15T07:00[:00[.000]]` (in `zone`) or
    /// the same followed by `Z` or an offset (`+01:00`, `+0100`); nil if malformed.
    static func parse(_ text: String, in zone: TimeZone) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == " " }).map(String.init)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard date.count == 3, let year = date[0], let month = date[1], let day = date[2] else { return nil }
        var time = parts[1]
        var offset: Int?
        if time.hasSuffix("Z") || time.hasSuffix("z") {
            offset = 0
            time.removeLast()
        } else if let sign = time.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let digits = time[time.index(after: sign)...].filter { $0 != ":" }
            guard digits.count == 4, let hours = Int(digits.prefix(2)), let minutes = Int(digits.suffix(2)),
                hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (time[sign] == "-" ? -1 : 1)
            time = String(time[..<sign])
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(clock.count), let hour = Int(clock[0]), let minute = Int(clock[1]) else { return nil }
        var second = 0
        var millisecond = 0
        if clock.count == 3 {
            let secondParts = clock[2].split(separator: ".", omittingEmptySubsequences: false)
            guard let whole = Int(secondParts[0]), secondParts.count <= 2 else { return nil }
            second = whole
            if secondParts.count == 2 {
                let fraction = String(secondParts[1].prefix(3))
                guard let value = Int(fraction) else { return nil }
                millisecond = value * [1, 100, 10, 1][fraction.count]
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = offset.flatMap { TimeZone(secondsFromGMT: $0) } ?? zone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let result = calendar.date(from: components) else { return nil }
        // Calendar rolls 2027-02-30 over into March: refuse what does not round-trip.
        let back = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: result)
        guard back.year == year, back.month == month, back.day == day, back.hour == hour, back.minute == minute,
            back.second == second
        else { return nil }
        return Int64((result.timeIntervalSince1970 * 1000).rounded()) + Int64(millisecond)
    }

    /// "2027-01-15 07:00" in the named time zone (UTC if unknown).
    static func local(_ ms: Int64, in zoneName: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zoneName) ?? TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second],
            from: Date(timeIntervalSince1970: Double(ms) / 1000))
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        let seconds = (parts.second ?? 0) == 0 ? "" : ":" + two(parts.second)
        return
            "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute))\(seconds)"
    }
}
