internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl triggers`: timers and event triggers that run scenes.
struct Triggers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List triggers, or create, change, test, enable, disable or remove one.",
        discussion:
            "TRIGGER is an id, a name, or Home/Trigger. The daemon runs enabled triggers: a timer at its moment, a sun trigger at sunrise or sunset, an event when its characteristic's value matches (and has held, with --for); each runs its scenes if its conditions hold. Every firing, and every firing a condition stopped, is in the history (homectl history --kind audit) with its reason.",
        subcommands: [
            List.self, Create.self, Set.self, Test.self, Trace.self, Enable.self, Disable.self, Remove.self,
        ],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the triggers (the default).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        func run() async throws {
            let (graph, lastFired) = try await options.withClient { client throws(HomeError) in
                (try await client.getHome().graph, try await Triggers.lastFirings(client))
            }
            let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            let homes: [Home]
            do throws(HomeError) { homes = try graph.listedHomes(home.home) } catch { throw Failure(error) }
            let items: [JSON] =
                homes.flatMap { home in
                    home.triggerIDs.compactMap { graph.triggers[$0] }.map {
                        Triggers.json($0, in: graph, nowMs: nowMs, lastFiredMs: lastFired[$0.id])
                    }
                }
            let columns = [
                Column("NAME", "name"),
                Column("ENABLED", "enabled"),
                Column("KIND", "kind"),
                Column("HOME", "home"),
                Column("NEXT FIRE", "next_fire"),
                Column("LAST FIRED", "last_fired"),
                Column("ID", "id", wide: true),
                Column("PATH", "path", wide: true),
                Column("FIRE DATE", "fire_date", wide: true),
                Column("RECURRENCE", "recurrence", wide: true),
                Column("WHEN", "kind", wide: true) { item in
                    guard case .uint(let id)? = item["id"], let trigger = graph.triggers[id] else { return "" }
                    return Triggers.describe(trigger, in: graph, nowMs: nowMs)
                },
                Column("RUNS", "action_sets", wide: true) { item in
                    guard case .uint(let id)? = item["id"], let trigger = graph.triggers[id] else { return "" }
                    let scenes = trigger.actionSetIDs.compactMap { graph.actionSets[$0]?.name }
                    return scenes.isEmpty ? "nothing" : scenes.joined(separator: ", ")
                },
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
                        Triggers.describe(trigger, in: graph, nowMs: nowMs),
                        scenes.isEmpty ? "runs nothing" : "runs " + scenes.joined(separator: ", "),
                        "next " + Triggers.nextText(trigger, location: home.location, nowMs: nowMs),
                        "last "
                            + (lastFired[trigger.id].map { TimeText.local($0, in: Triggers.zone(of: trigger)) }
                                ?? "never"),
                        "id \(trigger.id)",
                    ]
                }
                for line in Output.table(rows) { Output.line(line) }
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

    /// When each trigger last fired, from the history's newest 1 000 firings
    /// (a trigger not among them shows as never fired).
    static func lastFirings(_ client: HomeClient) async throws(HomeError) -> [ObjectID: Int64] {
        var filter = SubscriptionFilter()
        filter.kinds = [.triggerFired]
        let page = try await client.readHistory(ReadHistoryRequest(filter: filter, limit: 1000, newestFirst: true))
        var last: [ObjectID: Int64] = [:]
        for event in page.events {
            if case .triggerFired(let id) = event.body, last[id] == nil { last[id] = event.timeMs }
        }
        return last
    }

    /// "2026-11-27 07:00", "on its event", "never (disabled)": when it fires next.
    static func nextText(_ trigger: Trigger, location: GeoLocation?, nowMs: Int64) -> String {
        if !trigger.isEnabled { return "never (disabled)" }
        if case .event = trigger.kind { return "on its event" }
        guard let next = TriggerSchedule.nextFire(of: trigger, location: location, after: nowMs) else {
            return "never"
        }
        return TimeText.local(next, in: zone(of: trigger))
    }

    /// The zone a trigger's times are shown in: its own, its condition's, or this machine's.
    static func zone(of trigger: Trigger) -> String {
        if !trigger.kind.timeZone.isEmpty { return trigger.kind.timeZone }
        if !trigger.condition.timeZone.isEmpty { return trigger.condition.timeZone }
        return TimeZone.current.identifier
    }

    /// "at 2027-01-15 07:00 Europe/Berlin, daily"; "when Bedroom/…/CurrentTemperature ≤ 16 for 10m,
    /// mon-fri 22:00–06:00".
    static func describe(_ trigger: Trigger, in graph: HomeGraph, nowMs: Int64) -> String {
        var text = describe(trigger.kind, in: graph, location: graph.homes[trigger.homeID]?.location, nowMs: nowMs)
        text += describe(trigger.conditions, in: graph)
        if trigger.holdMs > 0 { text += " for \(formatDurationMs(UInt64(trigger.holdMs)))" }
        if trigger.executeOnce { text += ", once" }
        if !trigger.end.isNone { text += ", \(trigger.end.text)" }
        if let command = trigger.command { text += ", runs \(command.text)" }
        if !trigger.condition.isAlways {
            text += ", only \(trigger.condition.text)"
            if trigger.condition.timeZone != trigger.kind.timeZone { text += " \(trigger.condition.timeZone)" }
        }
        return text
    }

    static func describe(_ kind: TriggerKind, in graph: HomeGraph, location: GeoLocation?, nowMs: Int64) -> String {
        switch kind {
        case .sun(let event, let offsetMs, let timeZone):
            var text = "at \(DayTime.sun(event, offsetMs: offsetMs).text) \(timeZone)"
            if let location {
                if let today = TriggerSchedule.sunTime(
                    event, offsetMs: offsetMs, timeZone: timeZone, location: location, onDayOf: nowMs)
                {
                    text += " (today \(TimeText.local(today, in: timeZone).split(separator: " ").last ?? ""))"
                } else {
                    text += " (no \(event.rawValue) today)"
                }
            }
            return text
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
            return text + describe(conditions, in: graph)
        }
    }

    /// " if Hall/Motion/MotionDetected == true if …": a trigger's characteristic conditions.
    static func describe(_ conditions: [CharacteristicCondition], in graph: HomeGraph) -> String {
        conditions.map { condition in
            let path = graph.path(of: condition.characteristicID) ?? "characteristic \(condition.characteristicID)"
            return " if \(path) \(condition.comparison.rawValue) "
                + graph.shown(condition.value, of: condition.characteristicID)
        }.joined()
    }

    static func json(_ condition: CharacteristicCondition, in graph: HomeGraph) -> JSON {
        .object([
            ("characteristic_id", .uint(condition.characteristicID)),
            ("path", .string(graph.path(of: condition.characteristicID) ?? "")),
            ("comparison", .string(condition.comparison.rawValue)),
            ("value", condition.value.json),
        ])
    }

    static func json(_ condition: TimeCondition) -> JSON {
        if condition.isAlways { return .null }
        return .object([
            ("days", .string(condition.days.text)),
            ("from", condition.windowFrom.map { .string($0.text) } ?? .null),
            ("until", condition.windowTo.map { .string($0.text) } ?? .null),
            ("time_zone", .string(condition.timeZone)),
        ])
    }

    static func json(_ trigger: Trigger, in graph: HomeGraph, nowMs: Int64, lastFiredMs: Int64?) -> JSON {
        var fields: [(String, JSON)] = [
            ("id", .uint(trigger.id)),
            ("name", .string(trigger.name)),
            ("enabled", .bool(trigger.isEnabled)),
            ("home_id", .uint(trigger.homeID)),
            ("home", .string(graph.homeName(trigger.homeID))),
        ]
        switch trigger.kind {
        case .sun(let event, let offsetMs, let timeZone):
            fields += [
                ("kind", .string("sun")),
                ("sun", .string(event.rawValue)),
                ("offset_ms", .int(offsetMs)),
                ("time_zone", .string(timeZone)),
            ]
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
                    "conditions", .array(conditions.map { Triggers.json($0, in: graph) })
                ),
            ]
        }
        if !trigger.kind.isEvent {
            fields.append(("conditions", .array(trigger.conditions.map { Triggers.json($0, in: graph) })))
        }
        fields.append(("hold_ms", .int(trigger.holdMs)))
        fields.append(("execute_once", .bool(trigger.executeOnce)))
        fields.append(
            (
                "command",
                trigger.command.map { command in
                    .object([
                        ("program", .string(command.program)),
                        ("arguments", .array(command.arguments.map(JSON.string))),
                        ("timeout_ms", .int(command.timeoutMs)),
                    ])
                } ?? .null
            ))
        fields.append(
            (
                "end",
                trigger.end.isNone
                    ? .null
                    : .object([
                        ("after_ms", .int(trigger.end.afterMs)), ("when_event_ends", .bool(trigger.end.whenEventEnds)),
                    ])
            ))
        fields.append(("condition", Triggers.json(trigger.condition)))
        let nextMs = TriggerSchedule.nextFire(
            of: trigger, location: graph.homes[trigger.homeID]?.location, after: nowMs)
        fields.append(("next_fire", trigger.isEnabled ? nextMs.map { .string(isoTime($0)) } ?? .null : .null))
        fields.append(("last_fired", lastFiredMs.map { .string(isoTime($0)) } ?? .null))
        fields.append(("action_set_ids", .array(trigger.actionSetIDs.map { .uint($0) })))
        fields.append(("action_sets", .array(trigger.actionSetIDs.map { .string(graph.actionSets[$0]?.name ?? "") })))
        return .object(fields)
    }
}
