internal import HomeModel

/// What triggers with an end (HomeKit's end events) have to undo, and when. Pure:
/// the engine passes the time, the values before a firing and the sequence numbers
/// of its scenes' changes in.
///
/// A firing records each value its scenes are about to change; each change a
/// scene makes records its sequence number. At the end the old values are written
/// back, each on the condition that the characteristic's last change is still
/// that one: a value someone (or something) else changed since is kept.
struct EndTable: Sendable {
    struct Pending: Sendable {
        var name: String
        /// Each characteristic's value before the first firing.
        var previous: [ObjectID: CharacteristicValue]
        /// The sequence number of the latest change the trigger's scenes made to
        /// each characteristic: what is restored.
        var written: [ObjectID: UInt64] = [:]
        /// When to undo; nil while waiting for the event to end.
        var dueMs: Int64?
        var end: TriggerEnd
        /// Read back from the journal at start: begun before homed restarted.
        var carriedOver = false
    }

    private(set) var pending: [ObjectID: Pending] = [:]

    /// The earliest moment something is to be undone.
    var earliestMs: Int64? { pending.values.compactMap(\.dueMs).min() }

    /// A trigger with an end fired, about to change `previous`'s characteristics.
    ///
    /// Fired again before its end: the values from before the first firing stay
    /// what is restored; the duration starts again from this firing, and an end
    /// "when the event ends" waits for the event to end again.
    mutating func fired(_ trigger: Trigger, previous: [ObjectID: CharacteristicValue], nowMs: Int64) {
        let dueMs = trigger.end.whenEventEnds ? nil : Self.adding(trigger.end.afterMs, to: nowMs)
        if var existing = pending[trigger.id] {
            existing.previous.merge(previous) { first, _ in first }
            existing.dueMs = dueMs
            existing.end = trigger.end
            pending[trigger.id] = existing
        } else {
            pending[trigger.id] = Pending(name: trigger.name, previous: previous, dueMs: dueMs, end: trigger.end)
        }
    }

    /// An end begun before homed started, as read back from the journal.
    mutating func restore(_ triggerID: ObjectID, _ entry: Pending) {
        pending[triggerID] = entry
    }

    /// A scene of the trigger changed a characteristic, with the event `seq`.
    mutating func wrote(_ triggerID: ObjectID, characteristicID: ObjectID, seq: UInt64) {
        guard seq > 0, var entry = pending[triggerID], entry.previous[characteristicID] != nil else { return }
        entry.written[characteristicID] = max(seq, entry.written[characteristicID] ?? 0)
        pending[triggerID] = entry
    }

    /// The trigger's event ended (the value left what it fires on).
    mutating func eventEnded(_ triggerID: ObjectID, nowMs: Int64) {
        guard let end = pending[triggerID]?.end, end.whenEventEnds, pending[triggerID]?.dueMs == nil else { return }
        pending[triggerID]?.dueMs = Self.adding(end.afterMs, to: nowMs)
    }

    /// Takes what is due at `nowMs`, in the order of the triggers' ids.
    mutating func takeDue(nowMs: Int64) -> [(triggerID: ObjectID, pending: Pending)] {
        let due = pending.filter { ($0.value.dueMs ?? .max) <= nowMs }.sorted { $0.key < $1.key }
        for (id, _) in due { pending[id] = nil }
        return due.map { ($0.key, $0.value) }
    }

    /// The writes that undo `pending`: each old value, if its last change is still the trigger's.
    static func undoWrites(_ pending: Pending) -> [CharacteristicWrite] {
        pending.written.sorted { $0.key < $1.key }.compactMap { id, seq in
            pending.previous[id].map {
                CharacteristicWrite(characteristicID: id, value: $0, condition: WriteCondition(seq: seq))
            }
        }
    }

    private static func adding(_ ms: Int64, to nowMs: Int64) -> Int64 {
        let (sum, overflow) = nowMs.addingReportingOverflow(ms)
        return overflow ? .max : sum
    }
}
