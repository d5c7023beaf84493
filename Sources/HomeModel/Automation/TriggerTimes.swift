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
    public static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// The day of an ISO weekday number (1 = Monday … 7 = Sunday).
    public init(isoWeekday: Int) {
        self.init(rawValue: (1...7).contains(isoWeekday) ? UInt8(1) << UInt8(isoWeekday - 1) : 0)
    }

    /// Reads "mon-fri", "sat,sun", "mon,wed-fri", "weekdays", "weekends", "all".
    ///
    /// - Throws: `.invalidArgument` naming the part that is not a day.
    public init(parsing text: String) throws(HomeError) {
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
    public var text: String {
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
    public init(parsing text: String) throws(HomeError) {
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
    public var text: String {
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
    public var usesSun: Bool {
        [windowFrom, windowTo].contains { if case .sun = $0 { true } else { false } }
    }

    /// "mon-fri 22:00–06:00", "sunset–sunrise": for listings and the history.
    public var text: String {
        var parts: [String] = []
        if days != .everyDay { parts.append(days.text) }
        if let window { parts.append("\(window.from.text)–\(window.to.text)") }
        return parts.isEmpty ? "always" : parts.joined(separator: " ")
    }
}

/// When a trigger undoes what its scenes did (HomeKit's end events): after a
/// duration from its firing, or once its event ends (the value leaves what it fired
/// on: motion stops), `afterMs` later. It restores each value its scenes changed,
/// unless someone else changed it since.
public struct TriggerEnd: Hashable, Sendable {
    /// How long after the firing (or after the event ended) it undoes them.
    public var afterMs: Int64
    /// Undo once the event ends rather than after the firing (event triggers only).
    public var whenEventEnds: Bool

    /// No end: what the scenes did stays.
    public static let none = TriggerEnd(afterMs: 0, whenEventEnds: false)

    public init(afterMs: Int64, whenEventEnds: Bool) {
        self.afterMs = afterMs
        self.whenEventEnds = whenEventEnds
    }

    public var isNone: Bool { afterMs == 0 && !whenEventEnds }

    /// "undo after 30m", "undo 5m after it ends", "undo when it ends".
    public var text: String {
        if whenEventEnds {
            return afterMs > 0 ? "undo \(formatDurationMs(UInt64(afterMs))) after it ends" : "undo when it ends"
        }
        return "undo after \(formatDurationMs(UInt64(max(afterMs, 0))))"
    }
}

/// A program a trigger runs when it fires, besides its scenes: with `arguments`,
/// an environment describing the firing, stopped after `timeoutMs`.
public struct TriggerCommand: Hashable, Sendable {
    /// An absolute path.
    public var program: String
    public var arguments: [String]
    public var timeoutMs: Int64

    /// How long a command may run unless told otherwise.
    public static let defaultTimeoutMs: Int64 = 30_000
    /// The longest a command may be given.
    public static let maxTimeoutMs: Int64 = 600_000

    public init(program: String, arguments: [String] = [], timeoutMs: Int64 = TriggerCommand.defaultTimeoutMs) {
        self.program = program
        self.arguments = arguments
        self.timeoutMs = timeoutMs
    }

    /// "/usr/local/bin/notify 'back door' open": for listings and the history.
    public var text: String {
        ([program] + arguments).map { $0.isEmpty || $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    /// Refuses a program that is not an absolute path, text with control characters,
    /// too many or too long arguments, a timeout outside 1 ms…10 min; naming it.
    package func checked(trigger name: String) throws(HomeError) -> TriggerCommand {
        func clean(_ text: String) -> Bool {
            text.utf8.count <= 4096 && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        }
        guard program.hasPrefix("/"), clean(program) else {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): a command is an absolute path such as /usr/local/bin/notify, not "
                    + quoted(program))
        }
        guard arguments.count <= 64 else {
            throw HomeError(
                .invalidArgument, "trigger \(quoted(name)): \(arguments.count) arguments are more than 64")
        }
        for (index, argument) in arguments.enumerated() where !clean(argument) {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): argument \(index + 1) has a control character or is longer than 4096 bytes")
        }
        guard (1...Self.maxTimeoutMs).contains(timeoutMs) else {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): a command's timeout of \(timeoutMs) ms is outside 1…600000 ms")
        }
        return self
    }
}

/// Where a home is, for the sun's times.
public struct GeoLocation: Hashable, Sendable {
    /// Degrees north (negative: south), -90…90.
    public var latitude: Double
    /// Degrees east (negative: west), -180…180.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Refuses a latitude or longitude out of range (or not a number), naming it.
    package func checked() throws(HomeError) -> GeoLocation {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw HomeError(.invalidArgument, "latitude \(formatNumber(latitude)) is outside -90…90 degrees")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw HomeError(.invalidArgument, "longitude \(formatNumber(longitude)) is outside -180…180 degrees")
        }
        return self
    }
}

/// "10m", "1h30m", "45s", "2h", "500ms" in milliseconds; nil if it is not one.
package func parseDurationMs(_ text: String) -> Int64? {
    var total: Int64 = 0
    var number: Int64?
    var index = text.startIndex
    var any = false
    while index < text.endIndex {
        let character = text[index]
        if let digit = character.wholeNumberValue, character.isASCII {
            let (shifted, overflow) = (number ?? 0).multipliedReportingOverflow(by: 10)
            if overflow || shifted > Int64.max / 1_000_000 { return nil }
            number = shifted + Int64(digit)
            index = text.index(after: index)
            continue
        }
        guard let value = number else { return nil }
        let rest = text[index...]
        let unit: Int64
        if rest.hasPrefix("ms") {
            unit = 1
            index = text.index(index, offsetBy: 2)
        } else {
            switch character {
            case "s": unit = 1000
            case "m": unit = 60_000
            case "h": unit = 3_600_000
            case "d": unit = 86_400_000
            default: return nil
            }
            index = text.index(after: index)
        }
        total += value * unit
        number = nil
        any = true
    }
    return any && number == nil ? total : nil
}

/// "1h15m", "30m", "45s", "500ms": the shortest form `parseDurationMs` reads back.
package func formatDurationMs(_ ms: UInt64) -> String {
    if ms == 0 { return "0s" }
    if ms % 1000 != 0 { return "\(ms)ms" }
    var seconds = ms / 1000
    var text = ""
    for (unit, size) in [("d", UInt64(86_400)), ("h", 3600), ("m", 60), ("s", 1)] where seconds >= size {
        text += "\(seconds / size)\(unit)"
        seconds %= size
    }
    return text
}

private func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }

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
