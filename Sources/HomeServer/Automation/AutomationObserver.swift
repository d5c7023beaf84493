internal import HomeModel

/// What the observer hands the engine's loop.
enum AutomationInput: Sendable, Hashable {
    /// An event trigger matched: fire it. `chain` is the cascade that caused the change.
    /// `caughtUp`: the change is the first news of an accessory back from being
    /// unreachable (a provider's re-read): it happened while the accessory was away.
    case fire(triggerID: ObjectID, chain: [ObjectID], seq: UInt64, change: ValueChange, caughtUp: Bool)
    /// Triggers were added, changed or removed: look at the timers again.
    case layoutChanged
    /// The earliest timer's moment has come.
    case timerDue
    /// An event trigger matched but a guard stopped it (reported once per rate window).
    case suppressed(triggerID: ObjectID, reason: Suppression, seq: UInt64)
    /// An event trigger matched but one of its characteristic conditions does not hold.
    case conditionStopped(triggerID: ObjectID, reason: String, seq: UInt64, change: ValueChange)
    /// An event trigger with a hold matched: fire it `holdMs` from now (by the
    /// engine's clock) unless its event ends first.
    case holdStarted(triggerID: ObjectID, chain: [ObjectID], seq: UInt64, holdMs: Int64, change: ValueChange)
    /// The value a held trigger waits on left it: the wait is off (and starts again when it comes back).
    case holdEnded(triggerID: ObjectID)
    /// The value an event trigger fired on left it (motion stopped): its end may begin.
    case eventEnded(triggerID: ObjectID)
    /// A trigger's scene changed characteristics: their events' sequence numbers, for its end.
    case sceneWrote(triggerID: ObjectID, results: [WriteResult])

    enum Suppression: String, Sendable, Hashable {
        case cascade = "the change came from its own cascade"
        case depth = "the cascade of triggers is too deep"
        case rate = "it fired too often"
    }
}

/// Decides, as each event is published, whether an event trigger fires.
///
/// It runs under the store's lock (see `HomeEventObserver`), which is what makes it
/// exact: it sees every value change of a watched characteristic in order, so it
/// knows the value before each one (a threshold fires on entering its range, not
/// inside it), and it checks conditions against the graph as it is at that event.
/// The firing itself — publishing, running scenes — is the engine's, on its task.
final class AutomationObserver: HomeEventObserver {
    private struct State {
        /// Enabled event triggers, by the characteristic they watch.
        var rules: [ObjectID: [EventTriggerRule]] = [:]
        /// The last value of each watched characteristic (the graph already holds
        /// the new one when an event is observed).
        var lastValues: [ObjectID: CharacteristicValue] = [:]
        /// When each event trigger recently fired, oldest first, within the rate window.
        var recentFirings: [ObjectID: [Int64]] = [:]
        /// When a trigger's suppression was last reported.
        var reportedSuppression: [ObjectID: Int64] = [:]
        /// A `.layoutChanged` is on its way and not yet handled.
        var layoutPending = false
        /// Accessories that are unreachable now.
        var away: Set<ObjectID> = []
        /// When each accessory came back from being unreachable, within the last
        /// `caughtUpWindowMs`.
        var returnedMs: [ObjectID: Int64] = [:]
    }

    /// How long after an accessory comes back its changes count as news from
    /// while it was away: its provider's re-read after registering.
    static let caughtUpWindowMs: Int64 = 10_000

    private let state = Locked(State())
    private let limits: AutomationLimits
    private let inputs: AsyncStream<AutomationInput>.Continuation

    init(limits: AutomationLimits, inputs: AsyncStream<AutomationInput>.Continuation) {
        self.limits = limits
        self.inputs = inputs
    }

    func start(with graph: HomeGraph) {
        state.withLock { Self.rebuild(&$0, from: graph) }
    }

    func observe(_ event: HomeEvent, in graph: HomeGraph) {
        switch event.body {
        case .value(let change):
            observeValue(change, of: event, in: graph)
        case .reachability(let accessoryID, let reachable):
            state.withLock { state in
                state.returnedMs = state.returnedMs.filter { event.timeMs - $0.value <= Self.caughtUpWindowMs }
                if !reachable {
                    state.away.insert(accessoryID)
                } else if state.away.remove(accessoryID) != nil {
                    state.returnedMs[accessoryID] = event.timeMs
                }
            }
        case .layout(let change) where change.object == .trigger || change.object == .home:
            let signal = state.withLock { state -> Bool in
                Self.rebuild(&state, from: graph)
                defer { state.layoutPending = true }
                return !state.layoutPending
            }
            if signal { inputs.yield(.layoutChanged) }
        default:
            break
        }
    }

    /// The engine is about to read the graph for a `.layoutChanged`: later layout
    /// changes must signal again.
    func layoutHandled() {
        state.withLock { $0.layoutPending = false }
    }

    private func observeValue(_ change: ValueChange, of event: HomeEvent, in graph: HomeGraph) {
        let id = change.characteristicID
        let outputs = state.withLock { state -> [AutomationInput] in
            guard let rules = state.rules[id] else { return [] }
            let old = state.lastValues[id]
            state.lastValues[id] = change.value
            let occurrence = graph.characteristics[id]?.isEventOnly ?? false
            let caughtUp =
                state.returnedMs[change.accessoryID].map { event.timeMs - $0 <= Self.caughtUpWindowMs } ?? false
            var outputs: [AutomationInput] = []
            for rule in rules {
                if !occurrence, !rule.matches(change.value), old.map(rule.matches) ?? false {
                    if rule.endsWithEvent { outputs.append(.eventEnded(triggerID: rule.triggerID)) }
                    if rule.holdMs > 0 { outputs.append(.holdEnded(triggerID: rule.triggerID)) }
                    continue
                }
                guard rule.fires(from: old, to: change.value, occurrence: occurrence) else { continue }
                // A held trigger's conditions are checked when the hold is over.
                if rule.holdMs == 0, let reason = rule.failedCondition(in: graph) {
                    outputs.append(
                        .conditionStopped(triggerID: rule.triggerID, reason: reason, seq: event.seq, change: change))
                    continue
                }
                // The cascade travels in the change's origin, so it is known however
                // the change was committed (at once, or on a provider's confirmation).
                let chain = event.origin.kind == .automation ? event.origin.triggerChain : []
                if let reason = Self.guardStops(
                    rule.triggerID, chain: chain, at: event.timeMs, limits: limits,
                    state: &state)
                {
                    let last = state.reportedSuppression[rule.triggerID]
                    if last.map({ event.timeMs - $0 >= limits.rateWindowMs }) ?? true {
                        state.reportedSuppression[rule.triggerID] = event.timeMs
                        outputs.append(.suppressed(triggerID: rule.triggerID, reason: reason, seq: event.seq))
                    }
                    continue
                }
                if rule.holdMs > 0 {
                    outputs.append(
                        .holdStarted(
                            triggerID: rule.triggerID, chain: chain, seq: event.seq, holdMs: rule.holdMs,
                            change: change))
                    continue
                }
                outputs.append(
                    .fire(triggerID: rule.triggerID, chain: chain, seq: event.seq, change: change, caughtUp: caughtUp))
            }
            return outputs
        }
        for output in outputs { inputs.yield(output) }
    }

    /// The guard that stops a firing, if any; otherwise records the firing.
    private static func guardStops(
        _ triggerID: ObjectID, chain: [ObjectID], at timeMs: Int64,
        limits: AutomationLimits, state: inout State
    ) -> AutomationInput.Suppression? {
        if chain.contains(triggerID) { return .cascade }
        if chain.count >= limits.maxCascadeDepth { return .depth }
        var recent = state.recentFirings[triggerID] ?? []
        recent.removeAll { timeMs - $0 >= limits.rateWindowMs }
        if recent.count >= limits.maxFirings {
            state.recentFirings[triggerID] = recent
            return .rate
        }
        recent.append(timeMs)
        state.recentFirings[triggerID] = recent
        return nil
    }

    /// Reads the enabled event triggers from the graph. At a layout event the graph
    /// holds every value published so far, so it is the right "last value" for
    /// whatever is watched from now on.
    private static func rebuild(_ state: inout State, from graph: HomeGraph) {
        var rules: [ObjectID: [EventTriggerRule]] = [:]
        for trigger in graph.triggers.values {
            guard let rule = EventTriggerRule(trigger) else { continue }
            rules[rule.characteristicID, default: []].append(rule)
        }
        var lastValues: [ObjectID: CharacteristicValue] = [:]
        for id in rules.keys {
            // Sorted by trigger id: when one change fires several, they fire in the order they were made.
            rules[id]?.sort { $0.triggerID < $1.triggerID }
            if let value = graph.characteristics[id]?.value { lastValues[id] = value }
        }
        state.rules = rules
        state.lastValues = lastValues
        // At start, accessories whose provider has not come back yet are away too.
        state.away = Set(graph.accessories.values.filter { !$0.isReachable }.map(\.id))
        state.recentFirings = state.recentFirings.filter { graph.triggers[$0.key] != nil }
        state.reportedSuppression = state.reportedSuppression.filter { graph.triggers[$0.key] != nil }
    }
}
