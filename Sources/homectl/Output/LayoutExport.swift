internal import Foundation
internal import HomeModel

/// A home's layout as a file people read and keep in git: names, not ids (ids
/// differ from one database to another), accessories by their provider's key (the
/// one name that stays when a device is renamed), characteristics by their path
/// within the home. Values are left out, but for those scenes and triggers use.
enum LayoutExport {
    /// The version of the file's shape, for whatever reads it later.
    static let version: Int64 = 1

    static func json(of graph: HomeGraph) -> JSON {
        let homes = graph.homes.values.sorted { ($0.isPrimary ? 0 : 1, $0.name) < ($1.isPrimary ? 0 : 1, $1.name) }
        return .object([("version", .int(version)), ("homes", .array(homes.map { home(graph, $0) }))])
    }

    private static func home(_ graph: HomeGraph, _ home: Home) -> JSON {
        let rooms = home.roomIDs.compactMap { graph.rooms[$0] }.filter { $0.id != home.defaultRoomID }
        let zones = home.zoneIDs.compactMap { graph.zones[$0] }
        let accessories = home.accessoryIDs.compactMap { graph.accessories[$0] }
        let groups = home.serviceGroupIDs.compactMap { graph.serviceGroups[$0] }
        let scenes = home.actionSetIDs.compactMap { graph.actionSets[$0] }
        let triggers = home.triggerIDs.compactMap { graph.triggers[$0] }
        let location: [(String, JSON)] =
            home.location.map { location in
                [
                    (
                        "location",
                        .object([("latitude", .double(location.latitude)), ("longitude", .double(location.longitude))])
                    )
                ]
            } ?? []
        return .object(
            [
                ("name", .string(home.name)),
                ("primary", .bool(home.isPrimary)),
            ] + location + [
                ("rooms", .array(rooms.map { .string($0.name) })),
                (
                    "zones",
                    .array(
                        zones.map { zone in
                            .object([
                                ("name", .string(zone.name)),
                                ("rooms", .array(zone.roomIDs.compactMap { graph.rooms[$0]?.name }.map(JSON.string))),
                            ])
                        })
                ),
                ("accessories", .array(accessories.map { accessory(graph, $0) })),
                (
                    "groups",
                    .array(
                        groups.map { group in
                            .object([
                                ("name", .string(group.name)),
                                ("services", .array(group.serviceIDs.map { .string(path(graph, $0, in: home)) })),
                            ])
                        })
                ),
                ("scenes", .array(scenes.map { scene(graph, $0, in: home) })),
                ("triggers", .array(triggers.map { trigger(graph, $0, in: home) })),
            ])
    }

    private static func accessory(_ graph: HomeGraph, _ accessory: Accessory) -> JSON {
        var fields: [(String, JSON)] = [
            ("name", .string(accessory.name)),
            ("room", .string(graph.rooms[accessory.roomID]?.name ?? "")),
            ("category", .string(accessory.category.displayName.trimmingCharacters(in: .whitespaces))),
            ("provider", .string(accessory.provider)),
            ("key", .string(accessory.providerKey)),
        ]
        if let bridge = accessory.bridgeID.flatMap({ graph.accessories[$0] }) {
            fields.append(("bridge", .string(bridge.providerKey)))
        }
        return .object(fields)
    }

    private static func scene(_ graph: HomeGraph, _ scene: ActionSet, in home: Home) -> JSON {
        .object([
            ("name", .string(scene.name)),
            ("kind", .string(scene.kind.rawValue)),
            (
                "actions",
                .array(
                    scene.actions.map { action in
                        .object(
                            [
                                ("characteristic", .string(path(graph, action.characteristicID, in: home))),
                                ("value", action.value.json),
                            ] + (action.onlyIf.map { [("only_if", $0.json)] } ?? []))
                    })
            ),
        ])
    }

    private static func trigger(_ graph: HomeGraph, _ trigger: Trigger, in home: Home) -> JSON {
        var fields: [(String, JSON)] = [
            ("name", .string(trigger.name)),
            ("enabled", .bool(trigger.isEnabled)),
            ("scenes", .array(trigger.actionSetIDs.compactMap { graph.actionSets[$0]?.name }.map(JSON.string))),
        ]
        switch trigger.kind {
        case .sun(let event, let offsetMs, let timeZone):
            fields.append(
                (
                    "sun",
                    .object([
                        ("at", .string(DayTime.sun(event, offsetMs: offsetMs).text)), ("time_zone", .string(timeZone)),
                    ])
                ))
        case .timer(let fireDateMs, let timeZone, let recurrence):
            let date = Date(timeIntervalSince1970: Double(fireDateMs) / 1000)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            fields.append(
                (
                    "timer",
                    .object([
                        ("fire_date", .string(formatter.string(from: date))), ("time_zone", .string(timeZone)),
                        ("recurrence", .string(recurrence.rawValue)),
                    ])
                ))
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
            var event: [(String, JSON)] = [("characteristic", .string(path(graph, characteristicID, in: home)))]
            if let value { event.append(("equals", value.json)) }
            if let rangeMin { event.append(("above", .double(rangeMin))) }
            if let rangeMax { event.append(("below", .double(rangeMax))) }
            event.append(("conditions", Self.conditions(graph, conditions, in: home)))
            fields.append(("event", .object(event)))
        }
        if !trigger.conditions.isEmpty {
            fields.append(("conditions", Self.conditions(graph, trigger.conditions, in: home)))
        }
        if trigger.holdMs > 0 { fields.append(("for", .string(formatDurationMs(UInt64(trigger.holdMs))))) }
        if trigger.executeOnce { fields.append(("once", .bool(true))) }
        if let command = trigger.command {
            fields.append(
                (
                    "run",
                    .object([
                        ("program", .string(command.program)),
                        ("arguments", .array(command.arguments.map(JSON.string))),
                        ("timeout", .string(formatDurationMs(UInt64(command.timeoutMs)))),
                    ])
                ))
        }
        if !trigger.end.isNone {
            var undo: [(String, JSON)] = []
            if trigger.end.afterMs > 0 {
                undo.append(("after", .string(formatDurationMs(UInt64(trigger.end.afterMs)))))
            }
            if trigger.end.whenEventEnds { undo.append(("when_ended", .bool(true))) }
            fields.append(("undo", .object(undo)))
        }
        if !trigger.condition.isAlways {
            var only: [(String, JSON)] = []
            if trigger.condition.days != .everyDay { only.append(("days", .string(trigger.condition.days.text))) }
            if let window = trigger.condition.window {
                only += [("from", .string(window.from.text)), ("until", .string(window.to.text))]
            }
            only.append(("time_zone", .string(trigger.condition.timeZone)))
            fields.append(("only", .object(only)))
        }
        return .object(fields)
    }

    private static func conditions(_ graph: HomeGraph, _ conditions: [CharacteristicCondition], in home: Home)
        -> JSON
    {
        .array(
            conditions.map { condition in
                .object([
                    ("characteristic", .string(path(graph, condition.characteristicID, in: home))),
                    ("comparison", .string(condition.comparison.rawValue)),
                    ("value", condition.value.json),
                ])
            })
    }

    /// An object's path within its home (the home's name left off), or its id
    /// when it has none.
    private static func path(_ graph: HomeGraph, _ id: ObjectID, in home: Home) -> String {
        guard let full = graph.path(of: id) else { return String(id) }
        let prefix = home.name + "/"
        return full.hasPrefix(prefix) ? String(full.dropFirst(prefix.count)) : full
    }
}
