internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

extension Triggers {
    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a trigger: when it fires, its conditions, its scenes.",
            discussion: """
                Options not given keep their value. --at replaces what it fires on (a time of day, \\
                sunrise/sunset, a date); --days, --from/--until replace its time condition \\
                (--always removes it); --for sets an event trigger's hold (--no-hold removes it); \\
                --condition adds a characteristic condition to an event trigger (--no-conditions \\
                removes them first). The time is one change, all or nothing; each scene added or \\
                removed is a change of its own after it.
                """)

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var timing: TimingOptions

        @Argument(help: "The trigger.", completion: .homeNames(.trigger))
        var trigger: String

        @Flag(help: "Remove its days and window: it may fire at any time.")
        var always = false

        @Flag(help: "Event: fire at once again, without waiting for the event to hold.")
        var noHold = false

        @Flag(help: "Event: remove its characteristic conditions (before any --condition is added).")
        var noConditions = false

        @Flag(help: "Fire once, then disable itself.")
        var once = false

        @Flag(help: "Undo nothing after it fires (removes --undo-after and --undo-when-ended).")
        var noUndo = false

        @Flag(help: "Run no program when it fires (removes --run).")
        var noRun = false

        @Flag(help: "Fire every time again (undoes --once).")
        var repeating = false

        @Option(
            name: .customLong("add-scene"), help: "A scene it also runs; repeatable.", completion: .homeNames(.scene))
        var addScenes: [String] = []

        @Option(
            name: .customLong("remove-scene"), help: "A scene it no longer runs; repeatable.",
            completion: .homeNames(.scene))
        var removeScenes: [String] = []

        func validate() throws {
            if always && timing.touchesCondition {
                throw ValidationError("--always removes the days and window that --days, --from and --until set")
            }
            if noHold && timing.holdFor != nil { throw ValidationError("--no-hold and --for contradict each other") }
            if once && repeating { throw ValidationError("--once and --repeating contradict each other") }
            if noRun && timing.run != nil { throw ValidationError("--no-run and --run contradict each other") }
            if noUndo && timing.end != nil {
                throw ValidationError("--no-undo and --undo-after/--undo-when-ended contradict each other")
            }
        }

        func run() async throws {
            let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            let changesTiming =
                timing.at != nil || timing.recurrence != nil || timing.timeZone != nil || timing.touchesCondition
                || timing.holdFor != nil || !timing.conditions.isEmpty || always || noHold || noConditions || once
                || repeating || noUndo || timing.end != nil || noRun || timing.run != nil
            if changesTiming || (addScenes.isEmpty && removeScenes.isEmpty) {
                try await options.applyChange { graph throws(HomeError) in
                    let id = try graph.resolveNamed(trigger, .trigger)
                    guard let current = graph.triggers[id] else { throw HomeError(.notFound, "no trigger \(id)") }
                    let operation = LayoutOperation.setTrigger(
                        triggerID: id, kind: try kind(of: current, in: graph, nowMs: nowMs),
                        condition: always ? .always : timing.condition(from: current.condition),
                        holdMs: noHold ? 0 : timing.holdMs ?? current.holdMs,
                        executeOnce: once ? true : repeating ? false : current.executeOnce,
                        end: noUndo ? .none : timing.end ?? current.end,
                        command: noRun ? nil : timing.command ?? current.command,
                        conditions: try conditions(of: current, in: graph, nowMs: nowMs))
                    try operation.refusePastOneOffTimer(in: graph, nowMs: nowMs)
                    return operation
                }
            }
            for scene in addScenes {
                try await options.applyChange { graph throws(HomeError) in
                    let id = try graph.resolveNamed(trigger, .trigger)
                    let sceneID = try graph.resolveNamed(scene, .actionSet, in: graph.triggers[id]?.homeID)
                    return .addActionSetToTrigger(actionSetID: sceneID, triggerID: id)
                }
            }
            for scene in removeScenes {
                try await options.applyChange { graph throws(HomeError) in
                    let id = try graph.resolveNamed(trigger, .trigger)
                    let sceneID = try graph.resolveNamed(scene, .actionSet, in: graph.triggers[id]?.homeID)
                    return .removeActionSetFromTrigger(actionSetID: sceneID, triggerID: id)
                }
            }
        }

        /// A timer's or sun trigger's own conditions with what the options change
        /// (an event trigger's are part of its kind).
        private func conditions(of current: Trigger, in graph: HomeGraph, nowMs: Int64) throws(HomeError)
            -> [CharacteristicCondition]
        {
            if (timing.kind(nowMs: nowMs) ?? current.kind).isEvent { return [] }
            return (noConditions ? [] : current.conditions) + (try timing.characteristicConditions(in: graph))
        }

        /// The trigger's kind with what the options change.
        private func kind(of current: Trigger, in graph: HomeGraph, nowMs: Int64) throws(HomeError) -> TriggerKind {
            if let kind = timing.kind(nowMs: nowMs) {
                if timing.holdFor != nil {
                    throw HomeError(.invalidArgument, "--for belongs to an event trigger, and --at makes it a timer")
                }
                return kind
            }
            switch current.kind {
            case .timer(let fireDateMs, let timeZone, let recurrence):
                return .timer(
                    fireDateMs: fireDateMs, timeZone: self.timing.timeZone ?? timeZone,
                    recurrence: timing.recurrence.flatMap(Recurrence.init(rawValue:)) ?? recurrence)
            case .sun(let event, let offsetMs, let timeZone):
                return .sun(event, offsetMs: offsetMs, timeZone: self.timing.timeZone ?? timeZone)
            case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
                if timing.recurrence != nil {
                    throw HomeError(
                        .invalidArgument, "--recurrence belongs to a timer; \(current.name) is an event trigger")
                }
                return .event(
                    characteristicID: characteristicID, value: value, rangeMin: rangeMin, rangeMax: rangeMax,
                    conditions: (noConditions ? [] : conditions) + (try timing.characteristicConditions(in: graph)))
            }
        }
    }
}
