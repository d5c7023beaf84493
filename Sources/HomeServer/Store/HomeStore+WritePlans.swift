internal import HomeModel

// Writes planned outside the lock (`WritePlan`): one lock to take the snapshot they
// are planned from, one per commit of what they decided.
extension HomeStore {
    /// Applies a batch at once when none of it is a provider's (`isRemote`): one
    /// lock, validated and applied in one commit, as a batch of the daemon's own
    /// characteristics has always been. Nil, with nothing changed, when some of it
    /// is a provider's: that batch is planned (`WritePlan`).
    func writeIfDaemonOwned(
        _ writes: [CharacteristicWrite], atomic: Bool, validateOnly: Bool, origin: Origin,
        isRemote: (Accessory) -> Bool
    ) -> WriteOutcome? {
        let committed = commit(.values, origin: origin) { transaction -> [WriteResult]? in
            var lastLocal: ObjectID?
            // By index: binding each write would copy it (its value and condition).
            for index in writes.indices {
                guard let accessoryID = transaction.graph.characteristics[writes[index].characteristicID]?.accessoryID,
                    accessoryID != lastLocal
                else { continue }
                if let accessory = transaction.graph.accessories[accessoryID], isRemote(accessory) { return nil }
                lastLocal = accessoryID
            }
            return Self.apply(
                writes, atomic: atomic, validateOnly: validateOnly, enforceWritable: true, journalID: journalID,
                in: &transaction)
        }
        guard let results = committed.result else { return nil }
        return WriteOutcome(results: Self.failApplied(results, committed.saveFailure), seq: committed.lastSeq)
    }

    /// A copy of the graph and the layout it has, to plan writes from.
    func planningSnapshot() -> (graph: HomeGraph, layoutVersion: UInt64) {
        withState { ($0.graph, $0.layoutVersion) }
    }

    /// Commits planned writes in one commit, each as it was checked when planned —
    /// unless the layout changed since (`layoutVersion`): then each is checked
    /// again, so that a provider's confirmation never lands on a characteristic
    /// that was removed or whose metadata changed under it.
    ///
    /// - Parameters:
    ///   - atomic: all or none: when a write checked again fails, none is
    ///     applied and the others fail with ABORTED.
    ///   - checkingConditions: check each item's condition in this commit (the
    ///     writes the daemon applies itself); a provider's confirmation is not
    ///     checked again, as the device has taken the value (`claimConditions`).
    /// - Returns: each write's result with its position in the batch, in the
    ///   items' order, and the daemon's sequence number once they took effect.
    func commit(
        _ items: [WritePlan.Item], plannedAt layoutVersion: UInt64, atomic: Bool = false,
        checkingConditions: Bool = false, origin: Origin
    )
        -> (results: [(position: Int, result: WriteResult)], seq: UInt64)
    {
        guard !items.isEmpty else { return ([], lastSeq) }
        let journalID = self.journalID
        let committed = commit(.values, origin: origin) { transaction -> [WriteResult] in
            let unchanged = transaction.layoutVersion == layoutVersion
            let checked: [Result<CheckedWrite, HomeError>] = items.map { item in
                if unchanged {
                    guard checkingConditions, let condition = item.condition else { return .success(item.checked) }
                    do throws(HomeError) {
                        try transaction.graph.checkCondition(
                            condition, for: item.characteristicID, journalID: journalID)
                        return .success(item.checked)
                    } catch {
                        return .failure(error)
                    }
                }
                return Self.check(
                    CharacteristicWrite(
                        characteristicID: item.characteristicID, value: item.requested,
                        condition: checkingConditions ? item.condition : nil),
                    in: transaction.graph, enforceWritable: true, journalID: journalID)
            }
            let anyFailed = checked.contains { if case .failure = $0 { true } else { false } }
            return zip(items, checked).map { item, checked in
                switch checked {
                case .success(let checked) where !(atomic && anyFailed):
                    return transaction.store(checked, to: item.characteristicID)
                case .success:
                    return WriteResult(
                        characteristicID: item.characteristicID,
                        error: HomeError(.aborted, "not applied: another write of this atomic batch was invalid"))
                case .failure(let error):
                    return WriteResult(characteristicID: item.characteristicID, error: error)
                }
            }
        }
        let results = Self.failApplied(committed.result, committed.saveFailure)
        return (zip(items, results).map { ($0.position, $1) }, committed.lastSeq)
    }

    /// Claims conditional writes that go to a provider, just before they are sent:
    /// under the lock, each condition is checked against the graph as it is now and
    /// the characteristic marked as having a conditional write in flight. Until
    /// `releaseConditions`, another conditional write of it is refused: of two
    /// writers that read the same value and race, one is sent and the other fails,
    /// whatever the provider answers and however long it takes. (Unconditional
    /// writes and the device's own reports are not held back.)
    ///
    /// - Returns: the writes that may not be sent, by position, with why; the
    ///   others are claimed.
    func claimConditions(_ items: [WritePlan.Item]) -> [Int: HomeError] {
        guard !items.isEmpty else { return [:] }
        let journalID = self.journalID
        return withState { state in
            var refused: [Int: HomeError] = [:]
            for item in items {
                guard let condition = item.condition else { continue }
                do throws(HomeError) {
                    try state.graph.checkCondition(condition, for: item.characteristicID, journalID: journalID)
                    guard state.conditionalWritesInFlight.insert(item.characteristicID).inserted else {
                        let characteristic = state.graph.characteristics[item.characteristicID]
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
            // An item refused after others of the batch were claimed: theirs stay
            // claimed until the batch is done (the caller releases what it claimed).
            return refused
        }
    }

    /// Ends the claims `claimConditions` made.
    func releaseConditions(_ characteristicIDs: [ObjectID]) {
        guard !characteristicIDs.isEmpty else { return }
        withState { state in
            for id in characteristicIDs { state.conditionalWritesInFlight.remove(id) }
        }
    }
}
