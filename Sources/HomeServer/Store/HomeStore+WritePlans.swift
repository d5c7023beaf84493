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
            for write in writes {
                guard let accessoryID = transaction.graph.characteristics[write.characteristicID]?.accessoryID,
                    accessoryID != lastLocal
                else { continue }
                if let accessory = transaction.graph.accessories[accessoryID], isRemote(accessory) { return nil }
                lastLocal = accessoryID
            }
            return Self.apply(
                writes, atomic: atomic, validateOnly: validateOnly, enforceWritable: true, in: &transaction)
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
    /// - Parameter atomic: all or none: when a write checked again fails, none is
    ///   applied and the others fail with ABORTED.
    /// - Returns: each write's result with its position in the batch, in the
    ///   items' order, and the daemon's sequence number once they took effect.
    func commit(_ items: [WritePlan.Item], plannedAt layoutVersion: UInt64, atomic: Bool = false, origin: Origin)
        -> (results: [(position: Int, result: WriteResult)], seq: UInt64)
    {
        guard !items.isEmpty else { return ([], lastSeq) }
        let committed = commit(.values, origin: origin) { transaction -> [WriteResult] in
            let unchanged = transaction.layoutVersion == layoutVersion
            let checked: [Result<CheckedWrite, HomeError>] = items.map { item in
                unchanged
                    ? .success(item.checked)
                    : Self.check(
                        CharacteristicWrite(characteristicID: item.characteristicID, value: item.requested),
                        in: transaction.graph, enforceWritable: true)
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
}
