public import HomeModel

extension HomeStore {
    /// Reads values from the daemon's cache. Each read succeeds or fails on its own:
    /// NOT_FOUND for an unknown id, INVALID_ARGUMENT for a characteristic that is
    /// not readable.
    public func read(_ characteristicIDs: [ObjectID]) -> ReadOutcome {
        withState { state in
            ReadOutcome(
                reads: HomeState.reads(characteristicIDs, in: state.core.graph), seq: state.core.journal.lastSeq)
        }
    }

    /// Reads from the cache, and in the same lock groups the readable ones by the
    /// provider `provider` names for their accessory (nil: the daemon's own): the
    /// ones a fresh read asks.
    func read(_ characteristicIDs: [ObjectID], groupedBy provider: (Accessory) -> String?)
        -> (cached: ReadOutcome, byProvider: [String: [ObjectID]])
    {
        withState { state in
            let reads = HomeState.reads(characteristicIDs, in: state.core.graph)
            var byProvider: [String: [ObjectID]] = [:]
            for read in reads where read.error == nil {
                guard let characteristic = state.core.graph.characteristics[read.characteristicID],
                    let accessory = state.core.graph.accessories[characteristic.accessoryID],
                    let owner = provider(accessory)
                else { continue }
                byProvider[owner, default: []].append(read.characteristicID)
            }
            return (ReadOutcome(reads: reads, seq: state.core.journal.lastSeq), byProvider)
        }
    }

    /// Validates and applies a batch of writes, publishing the value events they
    /// produce. A write that leaves a value unchanged publishes nothing (but an
    /// occurrence, such as a doorbell press, always does).
    ///
    /// - Parameters:
    ///   - atomic: all or nothing: if any write is invalid, none is applied and the
    ///     valid ones fail with ABORTED.
    ///   - validateOnly: check every write, apply none.
    ///   - enforceWritable: false for providers and the simulator, which set
    ///     read-only values (a sensor's reading) that clients may not.
    /// - Returns: each write's result, with the sequence number of its event.
    public func write(
        _ writes: [CharacteristicWrite], atomic: Bool = false, validateOnly: Bool = false,
        origin: Origin, enforceWritable: Bool = true
    ) -> WriteOutcome {
        let committed = commitAlways(
            .write(
                WriteBatch(writes: writes, atomic: atomic, validateOnly: validateOnly), enforceWritable: enforceWritable
            ),
            origin: origin)
        return WriteOutcome(
            results: Self.failApplied(committed.result.writes, committed.saveFailure), seq: committed.lastSeq)
    }

    /// The results of a commit whose values could not be saved: every write it
    /// applied (which was undone) fails with that error; the others keep theirs.
    static func failApplied(_ results: [WriteResult], _ saveFailure: HomeError?) -> [WriteResult] {
        guard let saveFailure else { return results }
        let failure = HomeError(saveFailure.code, "not applied: the value could not be saved: \(saveFailure.message)")
        return results.map { result in
            result.error == nil ? WriteResult(characteristicID: result.characteristicID, error: failure) : result
        }
    }

    /// Runs a scene: applies each action's write (a failed one is reported and the
    /// others still run, as HomeKit does), then publishes the action-set-executed
    /// event after the value events it caused.
    ///
    /// - Throws: NOT_FOUND when there is no such action set; nothing changed then.
    public func executeActionSet(_ actionSetID: ObjectID, origin: Origin) throws(HomeError) -> WriteOutcome {
        let committed = try commit(.runScene(actionSetID), origin: origin)
        if let saveFailure = committed.saveFailure {
            throw HomeError(
                saveFailure.code, "scene \(actionSetID) not run: its values could not be saved: \(saveFailure.message)")
        }
        return WriteOutcome(results: committed.result.writes, seq: committed.lastSeq)
    }

    /// Records an accessory's reachability (a provider connected or went away),
    /// publishing a reachability event when it changed.
    ///
    /// - Returns: the event's sequence number, or nil when nothing changed.
    @discardableResult
    public func setReachable(_ reachable: Bool, accessoryID: ObjectID, origin: Origin) throws(HomeError) -> UInt64? {
        let committed = try commit(.reachability(reachable, accessoryID: accessoryID), origin: origin)
        guard case .changed(true) = committed.result else { return nil }
        return committed.firstSeq
    }

    /// Publishes that a scene ran, after the value events its writes caused (a
    /// scene written through providers, whose writes committed one by one).
    ///
    /// - Returns: the event's sequence number.
    public func recordActionSetExecuted(_ actionSetID: ObjectID, origin: Origin) -> UInt64 {
        commitAlways(.note(.actionSetExecuted(actionSetID)), origin: origin).firstSeq
    }

    /// Publishes that a trigger fired (before the scenes it runs).
    ///
    /// - Returns: the event's sequence number.
    public func recordTriggerFired(_ triggerID: ObjectID, origin: Origin) -> UInt64 {
        commitAlways(.note(.triggerFired(triggerID)), origin: origin).firstSeq
    }
}
