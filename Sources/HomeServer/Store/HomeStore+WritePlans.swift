internal import HomeModel

// A batch of writes is decided in one lock: validated once, planned (`WritePlan`),
// its conditional provider writes claimed and what the daemon applies at once
// committed, in one commit (`StoreChange.planWrites`). Each provider's
// confirmation is one more (`StoreChange.confirm`).
extension HomeStore {
    /// What one lock decided of a batch of writes (or a scene's actions).
    enum PlannedWrites {
        /// Nothing goes to a provider: every write is applied, refused or validated.
        case done(WriteOutcome)
        /// Some writes go to providers.
        case sending(SentWrites)
    }

    /// A batch with writes for providers, and what was applied at once.
    struct SentWrites {
        var plan: WritePlan
        /// The results of the writes applied at once (the daemon's own and the
        /// optimistic ones), by position in the batch.
        var applied: [(position: Int, result: WriteResult)]
        /// The daemon's sequence number once they took effect (0: none applied).
        var appliedSeq: UInt64
    }

    /// Decides a batch in one commit: one of the daemon's own characteristics is
    /// validated and applied there; one with a provider's is planned from the
    /// graph as it is under the lock.
    ///
    /// - Parameter owners: who serves each accessory, and what each provider
    ///   declared optimistic (asked under the store's lock).
    /// - Throws: FAILED_PRECONDITION for an atomic batch that spans providers; nothing changed.
    func planWrites(_ batch: WriteBatch, origin: Origin, owners: any WriteOwners) throws(HomeError) -> PlannedWrites {
        let committed = try commit(.planWrites(batch, owners: owners), origin: origin)
        guard case .planning(let planning) = committed.result else { preconditionFailure("a batch's planning") }
        return Self.decided(planning, committed)
    }

    /// Applies calls' batches of the daemon's own characteristics in one commit,
    /// each as `planWrites` would alone (validated, atomic or not), in order, each
    /// seeing the ones before it: one transaction makes them all durable, and if it
    /// fails every write they applied fails with its error. It stops at the first
    /// batch with a provider's characteristic (that one and those after it are the
    /// caller's to write one by one).
    ///
    /// - Parameter origin: who wrote them (one connection's calls); nil: no batch.
    /// - Returns: the outcomes of the batches applied, the first ones.
    func applyOwnWrites(_ batches: [WriteBatch], origin: Origin?, owners: any WriteOwners) -> [WriteOutcome] {
        guard let origin, !batches.isEmpty else { return [] }
        let committed = commitAlways(.ownWrites(batches, owners: owners), origin: origin)
        guard case .batches(let applied) = committed.result else { preconditionFailure("batches' results") }
        return applied.map {
            WriteOutcome(results: Self.failApplied($0, committed.saveFailure), seq: committed.lastSeq)
        }
    }

    /// Runs a scene: decided in one commit like a batch (`planWrites`). A scene of
    /// the daemon's own characteristics is applied whole there and the
    /// action-set-executed event follows its value events; one with a provider's
    /// actions publishes it once they are confirmed (`recordActionSetExecuted`).
    ///
    /// - Throws: NOT_FOUND when there is no such action set; nothing changed then.
    func planScene(_ actionSetID: ObjectID, origin: Origin, owners: any WriteOwners) throws(HomeError)
        -> (writes: [CharacteristicWrite], planned: PlannedWrites)
    {
        let committed = try commit(.planScene(actionSetID, owners: owners), origin: origin)
        guard case .scene(let writes, let planning) = committed.result else {
            preconditionFailure("a scene's planning")
        }
        if case .applied = planning, let saveFailure = committed.saveFailure {
            throw HomeError(
                saveFailure.code, "scene \(actionSetID) not run: its values could not be saved: \(saveFailure.message)")
        }
        return (writes, Self.decided(planning, committed))
    }

    private static func decided(_ planning: Planning, _ committed: Committed) -> PlannedWrites {
        switch planning {
        case .applied(let results):
            return .done(WriteOutcome(results: failApplied(results, committed.saveFailure), seq: committed.lastSeq))
        case .planned(let plan, let applied):
            let results = failApplied(applied, committed.saveFailure)
            return .sending(
                SentWrites(
                    plan: plan, applied: zip(plan.local, results).map { ($0.position, $1) },
                    appliedSeq: plan.local.isEmpty ? 0 : committed.lastSeq))
        }
    }

    /// Commits a provider's confirmation of planned writes, each as it was checked
    /// when planned — unless the layout changed since (`plannedAt`): then each is
    /// checked again. The conditions it claimed end in the same commit.
    ///
    /// - Returns: each write's result with its position in the batch, in the
    ///   items' order, and the daemon's sequence number once they took effect.
    func commit(_ confirmation: Confirmation, origin: Origin)
        -> (results: [(position: Int, result: WriteResult)], seq: UInt64)
    {
        guard !confirmation.items.isEmpty || !confirmation.releasing.isEmpty else { return ([], publishedSeq.value) }
        let committed = commitAlways(.confirm(confirmation), origin: origin)
        let results = Self.failApplied(committed.result.writes, committed.saveFailure)
        return (zip(confirmation.items, results).map { ($0.position, $1) }, committed.lastSeq)
    }
}
