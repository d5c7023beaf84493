/// Where an event trigger with a hold (`--for 10m`) stands, read from the journal
/// alone: the engine reckons it at start, so that a hold begun before a restart
/// completes at the time it would have, and `homectl triggers test` says it.
///
/// A hold starts when the watched value *enters* what the trigger waits for, and
/// fires once it has stayed there for the hold. So it is running now exactly when
/// the value is in that state, the change that brought it there came after the
/// trigger was last made or changed, and the trigger has not fired since.
public enum HoldStanding: Hashable, Sendable {
    /// The value is not what the trigger waits for (or it has none).
    case notWaitedFor
    /// The value entered the state at `sinceMs` (event `seq`): it fires at
    /// `sinceMs` plus the hold unless the value leaves first.
    case holding(sinceMs: Int64, seq: UInt64)
    /// It held and fired (firing `seq`): it waits for the value to leave and come back.
    case fired(seq: UInt64)
    /// The value was already in the state when the trigger was made or last
    /// changed: it waits for the next change into it.
    case alreadyInState
    /// The journal does not reach back to the change that brought the value there.
    case unknown
}

extension HoldStanding {
    /// Reckons a trigger's standing.
    ///
    /// - Parameters:
    ///   - trigger: an event trigger (anything else is `.notWaitedFor`).
    ///   - current: its characteristic's value now.
    ///   - newestFirst: journal events about the characteristic and the trigger,
    ///     newest first (others are passed over).
    ///   - complete: `newestFirst` reaches back to the journal's first event.
    public static func reckon(
        _ trigger: Trigger, current: CharacteristicValue?, newestFirst events: [HomeEvent], complete: Bool
    ) -> HoldStanding {
        guard case .event(let characteristicID, let value, let rangeMin, let rangeMax, _) = trigger.kind,
            let current, EventMatch.matches(current, value: value, rangeMin: rangeMin, rangeMax: rangeMax)
        else { return .notWaitedFor }
        var fired: UInt64?
        var entered: HomeEvent?
        for event in events {
            switch event.body {
            case .triggerFired(trigger.id):
                fired = fired ?? event.seq
            case .layout(let change) where change.object == .trigger && change.objectID == trigger.id:
                // Made or changed after the value entered: this entry does not count.
                return entered.map { fired.map(HoldStanding.fired) ?? .holding(sinceMs: $0.timeMs, seq: $0.seq) }
                    ?? .alreadyInState
            case .value(let change) where change.characteristicID == characteristicID:
                if !EventMatch.matches(change.value, value: value, rangeMin: rangeMin, rangeMax: rangeMax) {
                    return entered.map { fired.map(HoldStanding.fired) ?? .holding(sinceMs: $0.timeMs, seq: $0.seq) }
                        ?? .unknown
                }
                entered = event
            default:
                continue
            }
        }
        // Back at the journal's start with the value in the state all along: the
        // trigger's making is not in it either, so it came before the journal.
        return complete ? .alreadyInState : .unknown
    }
}

/// What an event trigger waits for, as the engine and `triggers test` both decide it.
public enum EventMatch {
    /// Whether `current` is the trigger's value, in its range, or, with neither,
    /// any value.
    public static func matches(
        _ current: CharacteristicValue, value: CharacteristicValue?, rangeMin: Double?, rangeMax: Double?
    ) -> Bool {
        if let value { return current.sameValue(as: value) }
        if rangeMin == nil && rangeMax == nil { return true }
        guard let number = current.numericValue else { return false }
        return (rangeMin.map { number >= $0 } ?? true) && (rangeMax.map { number <= $0 } ?? true)
    }
}
