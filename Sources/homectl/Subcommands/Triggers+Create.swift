internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

extension Triggers {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a timer, a sunrise/sunset or an event trigger.",
            discussion: """
                A timer fires --at a time of day (07:00: daily, or per --recurrence) or a date and \
                time (ISO 8601: 2027-01-15T07:00, read in --time-zone, or with Z or an offset), then \
                per --recurrence. --at sunrise or sunset (with an offset: sunset-30m) fires each day \
                the sun does so at the home's location (homectl homes set-location; none on a day of \
                polar day or night). An event trigger fires --when a characteristic --equals a value, \
                or enters a range given by --above and/or --below (bounds included), or, with neither, \
                whenever it changes; with --for, only once that has held so long. --days, --from and \
                --until restrict any trigger to days of the week and a window of the day (a firing \
                they stop is in the history, with the reason); --condition, an event trigger to what \
                other characteristics hold.
                """)

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption
        @OptionGroup var timing: TimingOptions

        @Argument(help: "The trigger's name, unique in its home.")
        var name: String

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

        @Flag(help: "Fire once, then disable itself.")
        var once = false

        func validate() throws {
            switch (timing.at, when) {
            case (nil, nil):
                throw ValidationError(
                    "say when the trigger fires: --at TIME (a timer, sunrise or sunset) or --when PATH (an event)")
            case (.some, .some): throw ValidationError("a trigger is a timer (--at) or an event (--when), not both")
            default: break
            }
            if timing.at != nil && (equals != nil || above != nil || below != nil) {
                throw ValidationError("--equals, --above and --below belong to an event trigger (--when)")
            }
            if timing.at == nil && when == nil && timing.run != nil {
                throw ValidationError("say when the trigger runs it: --at TIME or --when PATH")
            }
            if timing.at != nil && timing.holdFor != nil {
                throw ValidationError("--for belongs to an event trigger (--when)")
            }
            if when != nil && (timing.recurrence != nil) {
                throw ValidationError("--recurrence belongs to a timer (--at)")
            }
            if equals != nil && (above != nil || below != nil) {
                throw ValidationError(
                    "an event trigger fires on a value (--equals) or a range (--above/--below), not both")
            }
        }

        func run() async throws {
            let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
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
                        conditions: try timing.characteristicConditions(in: graph))
                    homeID = homeID ?? graph.homeID(of: characteristicID)
                } else {
                    kind = timing.kind(nowMs: nowMs) ?? .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none)
                }
                let home = try graph.resolveHome(homeID.map { String($0) })
                var sceneIDs: [ObjectID] = []
                for scene in scenes {
                    sceneIDs.append(try graph.resolveNamed(scene, .actionSet, in: home))
                }
                let operation = LayoutOperation.addTrigger(
                    name: name, homeID: home, kind: kind, actionSetIDs: sceneIDs, enabled: !disabled,
                    condition: timing.condition(from: .always), holdMs: timing.holdMs ?? 0, executeOnce: once,
                    end: timing.end ?? .none, command: timing.command,
                    conditions: when == nil ? try timing.characteristicConditions(in: graph) : [])
                try operation.refusePastOneOffTimer(in: graph, nowMs: nowMs)
                return operation
            }
        }
    }
}
