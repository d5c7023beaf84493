internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl triggers`: timers and event triggers that run scenes.
struct Triggers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List triggers, or create, enable, disable or remove one.",
        discussion:
            "TRIGGER is an id, a name, or Home/Trigger. The daemon runs enabled triggers: a timer at its moment, an event when its characteristic's value matches; each runs its scenes.",
        subcommands: [List.self, Create.self, Enable.self, Disable.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the triggers (the default).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        func run() async throws {
            let graph = try await options.fetchGraph()
            let homes: [Home]
            do throws(HomeError) { homes = try graph.listedHomes(home.home) } catch { throw Failure(error) }
            let items: [JSON] =
                homes.flatMap { home in
                    home.triggerIDs.compactMap { graph.triggers[$0] }.map { Triggers.json($0, in: graph) }
                }
            let columns = [
                Column("NAME", "name"),
                Column("ENABLED", "enabled"),
                Column("KIND", "kind"),
                Column("HOME", "home"),
                Column("ID", "id", wide: true),
                Column("PATH", "path", wide: true),
                Column("FIRE DATE", "fire_date", wide: true),
                Column("RECURRENCE", "recurrence", wide: true),
            ]
            if Output.list(items, columns: columns, options) { return }
            for home in homes {
                if homes.count > 1 || self.home.home != nil { Output.line("# \(home.name)") }
                let triggers = home.triggerIDs.compactMap { graph.triggers[$0] }
                if triggers.isEmpty { Output.line("no triggers") }
                let rows = triggers.map { trigger in
                    let scenes = trigger.actionSetIDs.compactMap { graph.actionSets[$0]?.name }
                    return [
                        trigger.name, trigger.isEnabled ? "enabled" : "disabled",
                        Triggers.describe(trigger.kind, in: graph),
                        scenes.isEmpty ? "runs nothing" : "runs " + scenes.joined(separator: ", "),
                        "id \(trigger.id)",
                    ]
                }
                for line in Output.table(rows) { Output.line(line) }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a timer or an event trigger.",
            discussion: """
                A timer fires --at a date and time (ISO 8601: 2027-01-15T07:00, read in --time-zone, \
                or with Z or an offset), then per --recurrence. An event trigger fires --when a \
                characteristic --equals a value, or enters a range given by --above and/or --below \
                (bounds included), or, with neither, whenever it changes.
                """)

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Argument(help: "The trigger's name, unique in its home.")
        var name: String

        @Option(help: "Timer: when it first fires (ISO 8601).")
        var at: String?

        @Option(help: "Timer: none, hourly, daily or weekly.")
        var recurrence: String = Recurrence.none.rawValue

        @Option(help: "Timer: an IANA time zone such as Europe/Berlin (default: this machine's).")
        var timeZone: String?

        @Option(help: "Event: the characteristic to watch, by PATH or id.", completion: .homeNames(.characteristic))
        var when: String?

        // Unconditional: the word after the option is its value even when it starts
        // with a dash (--below -5).
        @Option(
            parsing: .unconditional, help: "Event: fire when the value becomes this.",
            completion: .homeNames(.valueOf(option: "--when")))
        var equals: String?

        @Option(parsing: .unconditional, help: "Event: fire when the value is at or above this number.")
        var above: Double?

        @Option(parsing: .unconditional, help: "Event: fire when the value is at or below this number.")
        var below: Double?

        @Option(
            name: .customLong("scene"), help: "A scene the trigger runs; repeatable.", completion: .homeNames(.scene))
        var scenes: [String] = []

        @Flag(help: "Create it disabled.")
        var disabled = false

        func validate() throws {
            switch (at, when) {
            case (nil, nil):
                throw ValidationError("say when the trigger fires: --at TIME (a timer) or --when PATH (an event)")
            case (.some, .some): throw ValidationError("a trigger is a timer (--at) or an event (--when), not both")
            default: break
            }
            if at != nil && (equals != nil || above != nil || below != nil) {
                throw ValidationError("--equals, --above and --below belong to an event trigger (--when)")
            }
            if when != nil && (timeZone != nil || recurrence != Recurrence.none.rawValue) {
                throw ValidationError("--recurrence and --time-zone belong to a timer (--at)")
            }
            if equals != nil && (above != nil || below != nil) {
                throw ValidationError(
                    "an event trigger fires on a value (--equals) or a range (--above/--below), not both")
            }
            if Recurrence(rawValue: recurrence) == nil {
                throw ValidationError(
                    "--recurrence takes \(Recurrence.allCases.map(\.rawValue).joined(separator: ", ")), not '\(recurrence)'"
                )
            }
            if let timeZone, TimeZone(identifier: timeZone) == nil {
                throw ValidationError("unknown time zone '\(timeZone)'; use an IANA name such as Europe/Berlin or UTC")
            }
            if let at, TimeText.parse(at, in: TimeZone(identifier: timeZone ?? "UTC") ?? .current) == nil {
                throw ValidationError(
                    "--at takes an ISO 8601 date and time such as 2027-01-15T07:00 or "
                        + "2027-01-15T07:00:00Z, not '\(at)'")
            }
        }

        func run() async throws {
            let zoneName = timeZone ?? TimeZone.current.identifier
            let fireDateMs = at.flatMap { TimeText.parse($0, in: TimeZone(identifier: zoneName) ?? .current) }
            let recurrence = Recurrence(rawValue: self.recurrence) ?? .none
            try await options.applyChange { graph throws(HomeError) in
                let kind: TriggerKind
                var homeID = try home.home.map { (text) throws(HomeError) in try graph.resolveHome(text) }
                if let when {
                    let characteristicID = try graph.resolveCharacteristic(when)
                    let value = try equals.map { (text) throws(HomeError) in
                        try ValueParser.parse(text, for: graph.characteristics[characteristicID]!)
                    }
                    kind = .event(
                        characteristicID: characteristicID, value: value, rangeMin: above, rangeMax: below,
                        conditions: [])
                    homeID = homeID ?? graph.homeID(of: characteristicID)
                } else {
                    kind = .timer(fireDateMs: fireDateMs ?? 0, timeZone: zoneName, recurrence: recurrence)
                }
                let home = try graph.resolveHome(homeID.map { String($0) })
                var sceneIDs: [ObjectID] = []
                for scene in scenes {
                    sceneIDs.append(try graph.resolveNamed(scene, .actionSet, in: home))
                }
                return .addTrigger(name: name, homeID: home, kind: kind, actionSetIDs: sceneIDs, enabled: !disabled)
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a trigger.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The trigger.", completion: .homeNames(.trigger))
        var trigger: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .setTriggerEnabled(triggerID: try graph.resolveNamed(trigger, .trigger), enabled: true)
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a trigger; it stays, but does not fire.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The trigger.", completion: .homeNames(.trigger))
        var trigger: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .setTriggerEnabled(triggerID: try graph.resolveNamed(trigger, .trigger), enabled: false)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a trigger; its scenes stay.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The trigger.", completion: .homeNames(.trigger))
        var trigger: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .remove(id: try graph.resolveNamed(trigger, .trigger))
            }
        }
    }

    // MARK: Output

    /// "at 2027-01-15 07:00 Europe/Berlin, daily"; "when Bedroom/…/CurrentTemperature ≤ 16".
    static func describe(_ kind: TriggerKind, in graph: HomeGraph) -> String {
        switch kind {
        case .timer(let fireDateMs, let timeZone, let recurrence):
            let local = TimeText.local(fireDateMs, in: timeZone)
            return "at \(local) \(timeZone)" + (recurrence == .none ? "" : ", \(recurrence.rawValue)")
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
            let path = graph.path(of: characteristicID) ?? "characteristic \(characteristicID)"
            var text: String
            switch (value, rangeMin, rangeMax) {
            case (let value?, _, _): text = "when \(path) = \(graph.shown(value, of: characteristicID))"
            case (nil, let low?, let high?): text = "when \(path) in \(number(low))…\(number(high))"
            case (nil, let low?, nil): text = "when \(path) ≥ \(number(low))"
            case (nil, nil, let high?): text = "when \(path) ≤ \(number(high))"
            case (nil, nil, nil): text = "when \(path) changes"
            }
            for condition in conditions {
                let conditionPath =
                    graph.path(of: condition.characteristicID) ?? "characteristic \(condition.characteristicID)"
                text +=
                    " if \(conditionPath) \(condition.comparison.rawValue) "
                    + graph.shown(condition.value, of: condition.characteristicID)
            }
            return text
        }
    }

    static func json(_ trigger: Trigger, in graph: HomeGraph) -> JSON {
        var fields: [(String, JSON)] = [
            ("id", .uint(trigger.id)),
            ("name", .string(trigger.name)),
            ("enabled", .bool(trigger.isEnabled)),
            ("home_id", .uint(trigger.homeID)),
            ("home", .string(graph.homeName(trigger.homeID))),
        ]
        switch trigger.kind {
        case .timer(let fireDateMs, let timeZone, let recurrence):
            fields += [
                ("kind", .string("timer")),
                ("fire_date", .string(isoTime(fireDateMs))),
                ("fire_date_ms", .int(fireDateMs)),
                ("time_zone", .string(timeZone)),
                ("recurrence", .string(recurrence.rawValue)),
            ]
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
            fields += [
                ("kind", .string("event")),
                ("characteristic_id", .uint(characteristicID)),
                ("path", .string(graph.path(of: characteristicID) ?? "")),
                ("value", value?.json ?? .null),
                ("min", rangeMin.map { .double($0) } ?? .null),
                ("max", rangeMax.map { .double($0) } ?? .null),
                (
                    "conditions",
                    .array(
                        conditions.map { condition in
                            .object([
                                ("characteristic_id", .uint(condition.characteristicID)),
                                ("path", .string(graph.path(of: condition.characteristicID) ?? "")),
                                ("comparison", .string(condition.comparison.rawValue)),
                                ("value", condition.value.json),
                            ])
                        })
                ),
            ]
        }
        fields.append(("action_set_ids", .array(trigger.actionSetIDs.map { .uint($0) })))
        fields.append(("action_sets", .array(trigger.actionSetIDs.map { .string(graph.actionSets[$0]?.name ?? "") })))
        return .object(fields)
    }
}

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
