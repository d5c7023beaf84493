internal import ArgumentParser
internal import Foundation
internal import HomeModel

/// When a trigger fires and may fire: the options `triggers create` and
/// `triggers set` share.
struct TimingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "When it fires: a time of day (07:00, daily unless --recurrence), sunrise or sunset with an offset (sunset-30m), or a date and time (ISO 8601: 2027-01-15T07:00, read in --time-zone, or with Z or an offset).",
            valueName: "TIME"))
    var at: String?

    @Option(help: "Timer: none, hourly, daily or weekly (default: daily for a time of day, none for a date).")
    var recurrence: String?

    @Option(
        help:
            "An IANA time zone such as Europe/Berlin (default: this machine's): what --at, --days, --from and --until are reckoned in."
    )
    var timeZone: String?

    @Option(
        help: ArgumentHelp(
            "Only on these days of the week: mon-fri, sat,sun, weekdays, weekends (a timer or sun trigger is due only on them).",
            valueName: "DAYS"))
    var days: String?

    @Option(help: ArgumentHelp("Only from this time of day (22:00, sunset-30m); with --until.", valueName: "TIME"))
    var from: String?

    @Option(
        help: ArgumentHelp(
            "Only until this time of day (06:00, sunrise); before --from, the window crosses midnight.",
            valueName: "TIME"))
    var until: String?

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp(
            "Event: fire once the event has held this long (10m, 1h30m); the wait restarts when the value leaves.",
            valueName: "DURATION"))
    var holdFor: String?

    @Option(
        name: .customLong("condition"),
        help: ArgumentHelp(
            "Event: fire only if this holds, 'PATH OP VALUE' with OP one of == != < <= > >=; repeatable, all must hold.",
            valueName: "CONDITION"))
    var conditions: [String] = []

    @Option(
        help: ArgumentHelp(
            "Undo what its scenes changed this long after it fires (or, with --undo-when-ended, after its event ends); a value someone else changed since is kept.",
            valueName: "DURATION"))
    var undoAfter: String?

    @Flag(help: "Event: undo what its scenes changed once the event ends (the value leaves what it fired on).")
    var undoWhenEnded = false

    @Option(
        help: ArgumentHelp(
            "A program to run when it fires, after its scenes (an absolute path; no shell): its exit and output go in the history.",
            valueName: "PROGRAM"))
    var run: String?

    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("An argument for --run; repeatable, in order.", valueName: "ARG"))
    var runArguments: [String] = []

    @Option(help: ArgumentHelp("How long --run may take before it is stopped (default 30s).", valueName: "DURATION"))
    var runTimeout: String?

    /// The command these options give, or nil without `--run`.
    var command: TriggerCommand? {
        run.map {
            TriggerCommand(
                program: $0, arguments: runArguments,
                timeoutMs: runTimeout.flatMap(parseDurationMs) ?? TriggerCommand.defaultTimeoutMs)
        }
    }

    /// The end these options give, or nil without them.
    var end: TriggerEnd? {
        if undoAfter == nil && !undoWhenEnded { return nil }
        return TriggerEnd(afterMs: undoAfter.flatMap(parseDurationMs) ?? 0, whenEventEnds: undoWhenEnded)
    }

    /// Whether any option that shapes the time condition was given.
    var touchesCondition: Bool { days != nil || from != nil || until != nil }

    var zoneName: String { timeZone ?? TimeZone.current.identifier }

    func validate() throws {
        if let timeZone, TimeZone(identifier: timeZone) == nil {
            throw ValidationError("unknown time zone '\(timeZone)'; use an IANA name such as Europe/Berlin or UTC")
        }
        if let recurrence, Recurrence(rawValue: recurrence) == nil {
            throw ValidationError(
                "--recurrence takes \(Recurrence.allCases.map(\.rawValue).joined(separator: ", ")), not '\(recurrence)'"
            )
        }
        if let at, (try? DayTime(parsing: at)) == nil,
            TimeText.parse(at, in: TimeZone(identifier: zoneName) ?? .current) == nil
        {
            throw ValidationError(
                "--at takes a time of day (07:00), sunrise or sunset with an offset (sunset-30m), or an ISO 8601 date "
                    + "and time such as 2027-01-15T07:00, not '\(at)'")
        }
        if let at, case .sun? = try? DayTime(parsing: at), recurrence != nil {
            throw ValidationError("a sunrise or sunset trigger fires every day it happens; it takes no --recurrence")
        }
        if (from == nil) != (until == nil) {
            throw ValidationError("a window needs both ends: --from TIME --until TIME")
        }
        for (name, text) in [("--from", from), ("--until", until)] {
            guard let text else { continue }
            do throws(HomeError) { _ = try DayTime(parsing: text) } catch {
                throw ValidationError("\(name): \(error.message)")
            }
        }
        if let days {
            do throws(HomeError) { _ = try Weekdays(parsing: days) } catch {
                throw ValidationError("--days: \(error.message)")
            }
        }
        if let undoAfter, parseDurationMs(undoAfter) == nil || (!undoWhenEnded && parseDurationMs(undoAfter) == 0) {
            throw ValidationError(
                "--undo-after takes a duration such as 5m (above 0 without --undo-when-ended), not '\(undoAfter)'")
        }
        if run == nil && (!runArguments.isEmpty || runTimeout != nil) {
            throw ValidationError("--arg and --run-timeout belong to --run PROGRAM")
        }
        if let runTimeout, (parseDurationMs(runTimeout) ?? 0) <= 0 {
            throw ValidationError("--run-timeout takes a duration above 0 such as 30s or 2m, not '\(runTimeout)'")
        }
        if let holdFor, (parseDurationMs(holdFor) ?? 0) <= 0 {
            throw ValidationError("--for takes a duration above 0 such as 10m or 1h30m, not '\(holdFor)'")
        }
    }

    /// The kind `--at` describes, or nil without `--at`.
    func kind(nowMs: Int64) -> TriggerKind? {
        guard let at else { return nil }
        let zone = TimeZone(identifier: zoneName) ?? .current
        switch try? DayTime(parsing: at) {
        case .sun(let event, let offsetMs)?:
            return .sun(event, offsetMs: offsetMs, timeZone: zoneName)
        case .clock(let msOfDay)?:
            // A time of day: today's, as the timer's first moment; it recurs daily
            // unless told otherwise (a past first moment of a recurring timer is fine).
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let seconds = Int(msOfDay / 1000)
            let today = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(nowMs) / 1000))
            let first =
                calendar.date(bySettingHour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60, of: today)
                ?? today
            return .timer(
                fireDateMs: Int64((first.timeIntervalSince1970 * 1000).rounded()), timeZone: zoneName,
                recurrence: recurrence.flatMap(Recurrence.init(rawValue:)) ?? .daily)
        case nil:
            return .timer(
                fireDateMs: TimeText.parse(at, in: zone) ?? 0, timeZone: zoneName,
                recurrence: recurrence.flatMap(Recurrence.init(rawValue:)) ?? .none)
        }
    }

    /// `base` with the days and window these options give (in `--time-zone`).
    func condition(from base: TimeCondition) -> TimeCondition {
        guard touchesCondition || (timeZone != nil && !base.isAlways) else { return base }
        var condition = base
        if let days { condition.days = (try? Weekdays(parsing: days)) ?? base.days }
        if let from, let until, let start = try? DayTime(parsing: from), let end = try? DayTime(parsing: until) {
            condition.window = (start, end)
        }
        condition.timeZone = condition.isAlways ? "" : zoneName
        return condition
    }

    /// The hold `--for` gives, or nil without it.
    var holdMs: Int64? { holdFor.flatMap(parseDurationMs) }

    /// The characteristic conditions `--condition` gives, resolved in `graph`.
    func characteristicConditions(in graph: HomeGraph) throws(HomeError) -> [CharacteristicCondition] {
        var result: [CharacteristicCondition] = []
        for text in conditions {
            result.append(try Self.condition(text, in: graph))
        }
        return result
    }

    /// "Hall/Motion/MotionDetected == true" as a condition.
    static func condition(_ text: String, in graph: HomeGraph) throws(HomeError) -> CharacteristicCondition {
        // Longest operators first, so "<=" is not read as "<".
        for comparison in [Comparison.lessOrEqual, .greaterOrEqual, .equal, .notEqual, .less, .greater] {
            guard let range = text.range(of: " \(comparison.rawValue) ") ?? text.range(of: comparison.rawValue)
            else { continue }
            let path = text[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
            let valueText = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
            guard !path.isEmpty, !valueText.isEmpty else { break }
            let id = try graph.resolveCharacteristic(path)
            guard let characteristic = graph.characteristics[id] else { break }
            return CharacteristicCondition(
                characteristicID: id, comparison: comparison,
                value: try ValueParser.parse(valueText, for: characteristic))
        }
        throw HomeError(
            .invalidArgument,
            "--condition '\(text)' is not 'PATH OP VALUE' with OP one of == != < <= > >= "
                + "(Hall/Motion/MotionDetected == true)")
    }
}
