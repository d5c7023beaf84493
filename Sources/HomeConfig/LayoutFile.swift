internal import Foundation
package import HomeModel
internal import Yams

/// A layout file as `homectl export` writes it (YAML or JSON: YAML reads both),
/// read strictly: an unknown key, a value of the wrong type or a missing name is an
/// error naming where it is (`homes[0].accessories[2].room`), so that a typo never
/// becomes a silent no-op.
package struct LayoutFile {
    struct Home {
        var name: String
        var primary: Bool
        var rooms: [String]
        var zones: [(name: String, rooms: [String])]
        var accessories: [Accessory]
        var groups: [(name: String, services: [String])]
        var scenes: [Scene]
        var triggers: [Trigger]
        var location: GeoLocation?
    }

    struct Accessory {
        var place: String
        var name: String
        var room: String
        var provider: String
        var key: String
    }

    struct Scene {
        var place: String
        var name: String
        var kind: ActionSetKind
        var actions: [(characteristic: String, value: Any, onlyIf: Any?)]
    }

    struct Trigger {
        var place: String
        var name: String
        var enabled: Bool
        var scenes: [String]
        var timer: (fireDateMs: Int64, timeZone: String, recurrence: Recurrence)?
        var event: Event?
        var sun: (event: SunEvent, offsetMs: Int64, timeZone: String)?
        var condition: TimeCondition = .always
        var holdMs: Int64 = 0
        var executeOnce = false
        var end: TriggerEnd = .none
        var command: TriggerCommand?
        /// A timer's or sun trigger's own conditions (an event's are in `event`).
        var conditions: [(characteristic: String, comparison: Comparison, value: Any)] = []
    }

    struct Event {
        var characteristic: String
        var equals: Any?
        var above: Double?
        var below: Double?
        var conditions: [(characteristic: String, comparison: Comparison, value: Any)]
    }

    var homes: [Home]

    /// Reads `text`; `source` names the file in errors.
    package static func parse(_ text: String, source: String) throws(HomeError) -> LayoutFile {
        let loaded: Any?
        do {
            loaded = try Yams.load(yaml: text)
        } catch {
            throw HomeError(.invalidArgument, "\(source) is not YAML or JSON: \(error)")
        }
        let reader = Reader(source: source)
        let top = try reader.object(loaded, at: "the file", keys: ["version", "homes"])
        if let version = top["version"] {
            guard let number = version as? Int, number == 1 else {
                throw HomeError(
                    .invalidArgument, "\(source): version \(version) is not one homed reads (1)")
            }
        }
        let homes = try reader.list(top["homes"], at: "homes")
        return LayoutFile(
            homes: try homes.enumerated().map { index, home throws(HomeError) in
                try reader.home(home, at: "homes[\(index)]")
            })
    }

    /// Reads the parts, each error naming the file and where in it.
    private struct Reader {
        let source: String

        func fail(_ place: String, _ problem: String) -> HomeError {
            HomeError(.invalidArgument, "\(source): \(place) \(problem)")
        }

        func object(_ value: Any?, at place: String, keys: Set<String>) throws(HomeError) -> [String: Any] {
            guard let object = value as? [String: Any] else { throw fail(place, "is not a mapping of keys") }
            for key in object.keys.sorted() where !keys.contains(key) {
                throw fail(place, "has an unknown key '\(key)' (it takes \(keys.sorted().joined(separator: ", ")))")
            }
            return object
        }

        func list(_ value: Any?, at place: String) throws(HomeError) -> [Any] {
            guard let value else { return [] }
            guard let list = value as? [Any] else { throw fail(place, "is not a list") }
            return list
        }

        func string(_ value: Any?, at place: String, required: Bool = true) throws(HomeError) -> String {
            guard let value else {
                if required { throw fail(place, "is missing") }
                return ""
            }
            guard let text = value as? String else { throw fail(place, "is not text (\(value))") }
            if required && text.isEmpty { throw fail(place, "is empty") }
            return text
        }

        func bool(_ value: Any?, at place: String, default fallback: Bool) throws(HomeError) -> Bool {
            guard let value else { return fallback }
            guard let flag = value as? Bool else { throw fail(place, "is not true or false (\(value))") }
            return flag
        }

        func number(_ value: Any?, at place: String) throws(HomeError) -> Double? {
            guard let value else { return nil }
            if let number = value as? Int { return Double(number) }
            guard let number = value as? Double else { throw fail(place, "is not a number (\(value))") }
            return number
        }

        func names(_ value: Any?, at place: String) throws(HomeError) -> [String] {
            try list(value, at: place).enumerated().map { index, name throws(HomeError) in
                try string(name, at: "\(place)[\(index)]")
            }
        }

        func home(_ value: Any, at place: String) throws(HomeError) -> Home {
            let home = try object(
                value, at: place,
                keys: ["name", "primary", "location", "rooms", "zones", "accessories", "groups", "scenes", "triggers"])
            func each<T>(_ key: String, _ read: (Any, String) throws(HomeError) -> T) throws(HomeError) -> [T] {
                try list(home[key], at: "\(place).\(key)").enumerated().map { index, item throws(HomeError) in
                    try read(item, "\(place).\(key)[\(index)]")
                }
            }
            return Home(
                name: try string(home["name"], at: "\(place).name"),
                primary: try bool(home["primary"], at: "\(place).primary", default: false),
                rooms: try names(home["rooms"], at: "\(place).rooms"),
                zones: try each("zones") { item, at throws(HomeError) in
                    let zone = try object(item, at: at, keys: ["name", "rooms"])
                    return (try string(zone["name"], at: "\(at).name"), try names(zone["rooms"], at: "\(at).rooms"))
                },
                accessories: try each("accessories") { item, at throws(HomeError) in try accessory(item, at: at) },
                groups: try each("groups") { item, at throws(HomeError) in
                    let group = try object(item, at: at, keys: ["name", "services"])
                    return (
                        try string(group["name"], at: "\(at).name"), try names(group["services"], at: "\(at).services")
                    )
                },
                scenes: try each("scenes") { item, at throws(HomeError) in try scene(item, at: at) },
                triggers: try each("triggers") { item, at throws(HomeError) in try trigger(item, at: at) },
                location: try home["location"].map { (value) throws(HomeError) in
                    let at = "\(place).location"
                    let location = try object(value, at: at, keys: ["latitude", "longitude"])
                    guard let latitude = try number(location["latitude"], at: "\(at).latitude"),
                        let longitude = try number(location["longitude"], at: "\(at).longitude")
                    else { throw fail(at, "needs a latitude and a longitude") }
                    return GeoLocation(latitude: latitude, longitude: longitude)
                })
        }

        /// A text read as a time of day or a sun time, the error naming where it is.
        func dayTime(_ value: Any?, at place: String) throws(HomeError) -> DayTime {
            do {
                return try DayTime(parsing: try string(value, at: place))
            } catch {
                throw fail(place, error.message)
            }
        }

        func accessory(_ value: Any, at place: String) throws(HomeError) -> Accessory {
            // category and bridge are what the provider says: written for people, not applied.
            let fields = try object(value, at: place, keys: ["name", "room", "category", "provider", "key", "bridge"])
            return Accessory(
                place: place, name: try string(fields["name"], at: "\(place).name"),
                room: try string(fields["room"], at: "\(place).room", required: false),
                provider: try string(fields["provider"], at: "\(place).provider"),
                key: try string(fields["key"], at: "\(place).key"))
        }

        func scene(_ value: Any, at place: String) throws(HomeError) -> Scene {
            let fields = try object(value, at: place, keys: ["name", "kind", "actions"])
            let kindText = try string(fields["kind"], at: "\(place).kind", required: false)
            guard let kind = kindText.isEmpty ? .userDefined : ActionSetKind(rawValue: kindText) else {
                throw fail(
                    "\(place).kind",
                    "'\(kindText)' is no scene kind (\(ActionSetKind.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            let actions = try list(fields["actions"], at: "\(place).actions").enumerated().map {
                index, item throws(HomeError) in
                let at = "\(place).actions[\(index)]"
                let action = try object(item, at: at, keys: ["characteristic", "value", "only_if"])
                guard let value = action["value"] else { throw fail("\(at).value", "is missing") }
                return (try string(action["characteristic"], at: "\(at).characteristic"), value, action["only_if"])
            }
            return Scene(
                place: place, name: try string(fields["name"], at: "\(place).name"), kind: kind, actions: actions)
        }

        func trigger(_ value: Any, at place: String) throws(HomeError) -> Trigger {
            let fields = try object(
                value, at: place,
                keys: [
                    "name", "enabled", "scenes", "timer", "event", "sun", "for", "only", "once", "undo", "run",
                    "conditions",
                ])
            var trigger = Trigger(
                place: place, name: try string(fields["name"], at: "\(place).name"),
                enabled: try bool(fields["enabled"], at: "\(place).enabled", default: true),
                scenes: try names(fields["scenes"], at: "\(place).scenes"), timer: nil, event: nil)
            trigger.executeOnce = try bool(fields["once"], at: "\(place).once", default: false)
            if let run = fields["run"] {
                let at = "\(place).run"
                let run = try object(run, at: at, keys: ["program", "arguments", "timeout"])
                var timeoutMs = TriggerCommand.defaultTimeoutMs
                if let timeout = run["timeout"] {
                    let text = try string(timeout, at: "\(at).timeout")
                    guard let ms = parseDurationMs(text), ms > 0 else {
                        throw fail("\(at).timeout", "'\(text)' is not a duration above 0 (30s, 2m)")
                    }
                    timeoutMs = ms
                }
                trigger.command = TriggerCommand(
                    program: try string(run["program"], at: "\(at).program"),
                    arguments: try names(run["arguments"], at: "\(at).arguments"), timeoutMs: timeoutMs)
            }
            if let undo = fields["undo"] {
                let at = "\(place).undo"
                let undo = try object(undo, at: at, keys: ["after", "when_ended"])
                var afterMs: Int64 = 0
                if let after = undo["after"] {
                    let text = try string(after, at: "\(at).after")
                    guard let ms = parseDurationMs(text) else {
                        throw fail("\(at).after", "'\(text)' is not a duration (5m, 1h30m)")
                    }
                    afterMs = ms
                }
                trigger.end = TriggerEnd(
                    afterMs: afterMs,
                    whenEventEnds: try bool(undo["when_ended"], at: "\(at).when_ended", default: false))
            }
            if let hold = fields["for"] {
                let text = try string(hold, at: "\(place).for")
                guard let ms = parseDurationMs(text), ms > 0 else {
                    throw fail("\(place).for", "'\(text)' is not a duration above 0 (10m, 1h30m)")
                }
                trigger.holdMs = ms
            }
            if let only = fields["only"] {
                let at = "\(place).only"
                let only = try object(only, at: at, keys: ["days", "from", "until", "time_zone"])
                var condition = TimeCondition(timeZone: try string(only["time_zone"], at: "\(at).time_zone"))
                if let days = only["days"] {
                    do {
                        condition.days = try Weekdays(parsing: try string(days, at: "\(at).days"))
                    } catch {
                        throw fail("\(at).days", error.message)
                    }
                }
                if only["from"] != nil || only["until"] != nil {
                    condition.window = (
                        try dayTime(only["from"], at: "\(at).from"), try dayTime(only["until"], at: "\(at).until")
                    )
                }
                trigger.condition = condition
            }
            switch (fields["timer"], fields["event"], fields["sun"]) {
            case (nil, nil, let sun?):
                let at = "\(place).sun"
                let sun = try object(sun, at: at, keys: ["at", "time_zone"])
                guard case .sun(let event, let offsetMs) = try dayTime(sun["at"], at: "\(at).at") else {
                    throw fail("\(at).at", "is sunrise or sunset with an offset (sunset-30m)")
                }
                trigger.sun = (event, offsetMs, try string(sun["time_zone"], at: "\(at).time_zone"))
            case (let timer?, nil, nil):
                let at = "\(place).timer"
                let timer = try object(timer, at: at, keys: ["fire_date", "time_zone", "recurrence"])
                let dateText = try string(timer["fire_date"], at: "\(at).fire_date")
                let parser = ISO8601DateFormatter()
                parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                let plain = ISO8601DateFormatter()
                guard let date = parser.date(from: dateText) ?? plain.date(from: dateText) else {
                    throw fail("\(at).fire_date", "'\(dateText)' is not an ISO 8601 time (2026-11-20T07:00:00Z)")
                }
                let recurrenceText = try string(timer["recurrence"], at: "\(at).recurrence", required: false)
                guard let recurrence = recurrenceText.isEmpty ? Recurrence.none : Recurrence(rawValue: recurrenceText)
                else {
                    throw fail("\(at).recurrence", "'\(recurrenceText)' is no recurrence")
                }
                trigger.timer = (
                    Int64((date.timeIntervalSince1970 * 1000).rounded()),
                    try string(timer["time_zone"], at: "\(at).time_zone", required: false), recurrence
                )
            case (nil, let event?, nil):
                let at = "\(place).event"
                let fields = try object(
                    event, at: at, keys: ["characteristic", "equals", "above", "below", "conditions"])
                let conditions = try conditions(fields["conditions"], at: "\(at).conditions")
                trigger.event = Event(
                    characteristic: try string(fields["characteristic"], at: "\(at).characteristic"),
                    equals: fields["equals"], above: try number(fields["above"], at: "\(at).above"),
                    below: try number(fields["below"], at: "\(at).below"), conditions: conditions)
            default:
                throw fail(place, "needs a timer, an event or a sun time, one of them")
            }
            trigger.conditions = try conditions(fields["conditions"], at: "\(place).conditions")
            if trigger.event != nil && !trigger.conditions.isEmpty {
                throw fail("\(place).conditions", "an event trigger's conditions go in its event")
            }
            return trigger
        }

        func conditions(_ value: Any?, at place: String) throws(HomeError)
            -> [(characteristic: String, comparison: Comparison, value: Any)]
        {
            try list(value, at: place).enumerated().map { index, item throws(HomeError) in
                let cat = "\(place)[\(index)]"
                let condition = try object(item, at: cat, keys: ["characteristic", "comparison", "value"])
                let comparisonText = try string(condition["comparison"], at: "\(cat).comparison")
                guard let comparison = Comparison(rawValue: comparisonText) else {
                    throw fail("\(cat).comparison", "'\(comparisonText)' is no comparison")
                }
                guard let value = condition["value"] else { throw fail("\(cat).value", "is missing") }
                return (try string(condition["characteristic"], at: "\(cat).characteristic"), comparison, value)
            }
        }
    }
}
