internal import HomeModel

// The two ways a change under way takes a write: storing a checked value, and
// claiming a conditional write that goes to a provider.
extension Transaction {
    /// Stores a checked write and emits its value event when the value changed (or
    /// is an occurrence): the one way a write reaches the graph.
    ///
    /// - Returns: the write's result, with its event's sequence number (0: no event).
    mutating func store(_ checked: CheckedWrite, to characteristicID: ObjectID) -> WriteResult {
        let changed: CharacteristicValue
        if undo == nil {
            guard let stored = graph.store(checked, nowMs: nowMs) else {
                return WriteResult(characteristicID: characteristicID)
            }
            changed = stored
        } else {
            let stored = graph.storeKeepingPrevious(checked, nowMs: nowMs)
            guard let value = stored.changed else { return WriteResult(characteristicID: characteristicID) }
            changed = value
            // Undoing needs each characteristic's first previous state; a run of
            // writes to one characteristic (a slider dragged) keeps one entry.
            if undo?.last?.index != checked.index {
                undo?.append(
                    ValueUndo(
                        index: checked.index, characteristicID: characteristicID, value: stored.previousValue,
                        lastUpdatedMs: stored.previousUpdatedMs, changeSeq: stored.previousChangeSeq))
            }
        }
        let change = ValueChange(
            accessoryID: checked.accessoryID, serviceID: checked.serviceID, characteristicID: characteristicID,
            value: changed)
        let seq = emit(.value(change), subject: checked.index, mergeable: !checked.isOccurrence)
        graph.markChanged(at: checked.index, seq: seq)
        return WriteResult(characteristicID: characteristicID, seq: seq)
    }

    /// Claims conditional writes that go to a provider, just before they are sent:
    /// each condition is checked against the graph as it is now and the
    /// characteristic marked as having a conditional write in flight. Until the
    /// commit of its confirmation releases it, another conditional write of it is
    /// refused: of two writers that read the same value and race, one is sent and
    /// the other fails, whatever the provider answers and however long it takes.
    /// (Unconditional writes and the device's own reports are not held back.)
    ///
    /// - Returns: the writes that may not be sent, by position, with why; the
    ///   others are claimed.
    mutating func claim(_ items: [WritePlan.Item], journalID: String) -> [Int: HomeError] {
        var refused: [Int: HomeError] = [:]
        for item in items {
            guard let condition = item.condition else { continue }
            do throws(HomeError) {
                try graph.checkCondition(condition, for: item.characteristicID, journalID: journalID)
                guard claims.insert(item.characteristicID).inserted else {
                    let characteristic = graph.characteristics[item.characteristicID]
                    let current = characteristic?.value?.shortDescription ?? "no value"
                    throw HomeError(
                        .failedPrecondition,
                        "characteristic \(item.characteristicID) (\(characteristic?.type.name ?? "?")) is "
                            + "\(current), last changed at seq \(characteristic?.changeSeq ?? 0), but another "
                            + "conditional write of it is waiting for its provider's answer: read it again "
                            + "once that is done; nothing written")
                }
            } catch {
                refused[item.position] = error
            }
        }
        return refused
    }
}

extension CharacteristicWriteAction {
    /// The write a scene's action makes: conditional when the action says `onlyIf`.
    var write: CharacteristicWrite {
        CharacteristicWrite(
            characteristicID: characteristicID, value: value,
            condition: onlyIf.map { WriteCondition(value: $0) })
    }
}
