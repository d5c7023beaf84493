/// Days of the week, as a set: what a trigger's days condition allows.
///
/// Bit 0 is Monday, bit 6 Sunday (ISO 8601's order), the same number on the wire
/// (`TimeCondition.days`), where 0 means every day.
public struct Weekdays: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }

    public static let monday = Weekdays(rawValue: 1 << 0)
    public static let tuesday = Weekdays(rawValue: 1 << 1)
    public static let wednesday = Weekdays(rawValue: 1 << 2)
    public static let thursday = Weekdays(rawValue: 1 << 3)
    public static let friday = Weekdays(rawValue: 1 << 4)
    public static let saturday = Weekdays(rawValue: 1 << 5)
    public static let sunday = Weekdays(rawValue: 1 << 6)
    public static let everyDay = Weekdays(rawValue: 0x7F)

    /// The short names, Monday first, as `homectl` reads and writes them.
    package static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// The day of an ISO weekday number (1 = Monday … 7 = Sunday).
    package init(isoWeekday: Int) {
        self.init(rawValue: (1...7).contains(isoWeekday) ? UInt8(1) << UInt8(isoWeekday - 1) : 0)
    }

    /// Reads "mon-fri", "sat,sun", "mon,wed-fri", "weekdays", "weekends", "all".
    ///
    /// - Throws: `.invalidArgument` naming the part that is not a day.
    package init(parsing text: String) throws(HomeError) {
        var days = Weekdays()
        for part in text.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
            let part = part.trimmingSpaces
            switch part {
            case "weekdays": days.formUnion([.monday, .tuesday, .wednesday, .thursday, .friday])
            case "weekends": days.formUnion([.saturday, .sunday])
            case "all", "daily": days.formUnion(.everyDay)
            default:
                let ends = part.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                guard (1...2).contains(ends.count),
                    let first = Self.index(of: ends[0]), let last = Self.index(of: ends[ends.count - 1])
                else {
                    throw HomeError(
                        .invalidArgument,
                        "\(quoted(String(part))) is not a day or range of days (mon, tue, wed, thu, fri, sat, sun, "
                            + "mon-fri, weekdays, weekends)")
                }
                // A range may wrap past Sunday: fri-mon is Friday to Monday.
                var day = first
                while true {
                    days.insert(Weekdays(isoWeekday: day + 1))
                    if day == last { break }
                    day = (day + 1) % 7
                }
            }
        }
        self = days
    }

    private static func index(of name: String) -> Int? {
        names.firstIndex(of: String(name.prefix(3))).flatMap { name.count >= 3 ? $0 : nil }
    }

    /// "mon-fri", "sat,sun", "every day": the shortest form `init(parsing:)` reads back.
    package var text: String {
        if self == .everyDay { return "every day" }
        if isEmpty { return "no day" }
        var parts: [String] = []
        var index = 0
        while index < 7 {
            guard contains(Weekdays(isoWeekday: index + 1)) else {
                index += 1
                continue
            }
            var end = index
            while end + 1 < 7, contains(Weekdays(isoWeekday: end + 2)) { end += 1 }
            parts.append(end - index >= 2 ? "\(Self.names[index])-\(Self.names[end])" : Self.names[index])
            if end - index == 1 { parts.append(Self.names[end]) }
            index = end + 1
        }
        return parts.joined(separator: ",")
    }
}

/// The sun's events a trigger may fire at or a window may start or end at.
public enum SunEvent: String, Hashable, Sendable, CaseIterable {
    case sunrise, sunset
}

/// A moment of a day: a time on the clock, or the sun's rise or set with an offset.
public enum DayTime: Hashable, Sendable {
    /// Milliseconds after the local midnight (0 ..< 86 400 000).
    case clock(msOfDay: Int64)
    /// The sun's event that day, moved by `offsetMs` (negative: before).
    case sun(SunEvent, offsetMs: Int64)

    /// The longest offset from a sun event: a day either way.
    package static let maxSunOffsetMs: Int64 = 86_400_000

    /// Reads "07:00", "22:30:15", "sunset", "sunrise+30m", "sunset-1h15m".
    ///
    /// - Throws: `.invalidArgument` naming the text.
    package init(parsing text: String) throws(HomeError) {
        let text = text.lowercased().trimmingSpaces
        for event in SunEvent.allCases where text.hasPrefix(event.rawValue) {
            let rest = text.dropFirst(event.rawValue.count)
            if rest.isEmpty {
                self = .sun(event, offsetMs: 0)
                return
            }
            guard let sign = rest.first, sign == "+" || sign == "-",
                let duration = parseDurationMs(String(rest.dropFirst())), duration <= Self.maxSunOffsetMs
            else {
                throw HomeError(
                    .invalidArgument,
                    "\(quoted(text)): an offset from \(event.rawValue) is written +30m, -1h or -1h15m, "
                        + "at most a day")
            }
            self = .sun(event, offsetMs: sign == "-" ? -duration : duration)
            return
        }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        let numbers = fields.map { Int64($0) }
        guard (2...3).contains(fields.count), fields.allSatisfy({ (1...2).contains($0.count) }),
            let hours = numbers[0], let minutes = numbers[1], (0..<24).contains(hours), (0..<60).contains(minutes),
            fields.count == 2 || (numbers[2].map { (0..<60).contains($0) } ?? false)
        else {
            throw HomeError(
                .invalidArgument,
                "\(quoted(text)) is not a time of day (HH:MM or HH:MM:SS, 00:00 to 23:59:59) "
                    + "nor sunrise/sunset with an offset (sunset-30m)")
        }
        let seconds = fields.count == 3 ? (numbers[2] ?? 0) : 0
        self = .clock(msOfDay: ((hours * 60 + minutes) * 60 + seconds) * 1000)
    }

    /// "07:00", "sunset-30m": what `init(parsing:)` reads back.
    package var text: String {
        switch self {
        case .clock(let ms):
            let seconds = ms / 1000
            let hhmm = "\(twoDigits(seconds / 3600)):\(twoDigits(seconds / 60 % 60))"
            return seconds % 60 == 0 ? hhmm : "\(hhmm):\(twoDigits(seconds % 60))"
        case .sun(let event, let offsetMs):
            if offsetMs == 0 { return event.rawValue }
            return event.rawValue + (offsetMs < 0 ? "-" : "+") + formatDurationMs(offsetMs.magnitude)
        }
    }
}

/// When a trigger may fire: on some days of the week, within a window of the day.
/// A trigger whose moment comes outside it does not fire, and the history says why.
///
/// For a timer or sun trigger the days are also the days it is due on: it is not
/// due on the others at all (its next fire skips them).
public struct TimeCondition: Hashable, Sendable {
    public var days: Weekdays
    /// From `from` (included) to `to` (excluded) on the local clock; when `to` comes
    /// before `from` the window crosses midnight (22:00–06:00, sunset–sunrise).
    public var window: (from: DayTime, to: DayTime)? {
        get { windowFrom.flatMap { from in windowTo.map { (from, $0) } } }
        set {
            windowFrom = newValue?.from
            windowTo = newValue?.to
        }
    }
    public var windowFrom: DayTime?
    public var windowTo: DayTime?
    /// The IANA zone the days and the window are reckoned in; empty for a
    /// condition that restricts nothing.
    public var timeZone: String

    /// No restriction.
    public static let always = TimeCondition(days: .everyDay, window: nil, timeZone: "")

    public init(days: Weekdays = .everyDay, window: (from: DayTime, to: DayTime)? = nil, timeZone: String) {
        self.days = days
        self.windowFrom = window?.from
        self.windowTo = window?.to
        self.timeZone = timeZone
    }

    /// Whether it restricts anything.
    public var isAlways: Bool { days == .everyDay && windowFrom == nil && windowTo == nil }

    /// Whether it uses the sun (and so the home's location).
    package var usesSun: Bool {
        [windowFrom, windowTo].contains { if case .sun = $0 { true } else { false } }
    }

    /// "mon-fri 22:00–06:00", "sunset–sunrise": for listings and the history.
    package var text: String {
        var parts: [String] = []
        if days != .everyDay { parts.append(days.text) }
        if let window { parts.append("\(window.from.text)–\(window.to.text)") }
        return parts.isEmpty ? "always" : parts.joined(separator: " ")
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

extension String {
    fileprivate var trimmingSpaces: String { self[...].trimmingSpaces }
}

extension Trigger {
    /// Every condition on a characteristic: its event's, or a timer's or sun trigger's own.
    package var characteristicConditions: [CharacteristicCondition] {
        if case .event(_, _, _, _, let conditions) = kind { return conditions }
        return conditions
    }
}

extension TriggerKind {
    package var isEvent: Bool {
        if case .event = self { return true }
        return false
    }

    /// The IANA time zone a timer or sun trigger is reckoned in; empty for an event trigger.
    package var timeZone: String {
        switch self {
        case .timer(_, let timeZone, _), .sun(_, _, let timeZone): timeZone
        case .event: ""
        }
    }
}

private func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
