internal import HomeModel

// A batch of writes is decided in one lock: validated once, planned (`WritePlan`),
// its conditional provider writes claimed and what the daemon applies at once
// committed, in one commit. Each provider's confirmation is one more.
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

    /// Decides a batch in one commit. A batch of the daemon's own characteristics
    /// (most writes of most homes) is validated and applied there, as one commit
    /// has always applied one; one with a provider's is planned from the graph as
    /// it is under the lock, so nothing can change between the plan, the claims of
    /// its conditional writes and the part applied at once.
    ///
    /// - Parameters:
    ///   - provider: the provider that serves an accessory, nil for the daemon's own.
    ///   - optimistic: the characteristics a provider declared optimistic (called
    ///     under the store's lock: it must take no lock that is held while calling
    ///     the store).
    /// - Throws: FAILED_PRECONDITION for an atomic batch that spans providers; nothing changed.
    func planWrites(
        _ writes: [CharacteristicWrite], atomic: Bool, validateOnly: Bool, origin: Origin,
        provider: (Accessory) -> String?, optimistic: (String) -> Set<ObjectID>
    ) throws(HomeError) -> PlannedWrites {
        let journalID = self.journalID
        let committed = try commit(.values, origin: origin) { transaction throws(HomeError) -> Planning in
            guard Self.anyRemote(writes, in: transaction.graph, provider: provider) else {
                return .applied(
                    Self.apply(
                        writes, atomic: atomic, validateOnly: validateOnly, enforceWritable: true,
                        journalID: journalID, in: &transaction))
            }
            let plan = try WritePlan(
                writes, atomic: atomic, validateOnly: validateOnly, in: transaction.graph,
                layoutVersion: transaction.layoutVersion, provider: provider, optimistic: optimistic,
                journalID: journalID)
            return Self.claimAndApply(plan, writes: writes, journalID: journalID, in: &transaction)
        }
        return Self.decided(committed)
    }

    /// One call's writes as it asked for them (`WriteCharacteristicsRequest`), for `applyOwnWrites`.
    struct OwnWrites {
        var writes: [CharacteristicWrite]
        var atomic: Bool
        var validateOnly: Bool
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
    func applyOwnWrites(
        _ batches: [OwnWrites], origin: Origin?, provider: (Accessory) -> String?
    ) -> [WriteOutcome] {
        guard let origin, !batches.isEmpty else { return [] }
        let journalID = self.journalID
        let committed = commit(.values, origin: origin) { transaction -> [[WriteResult]] in
            var applied: [[WriteResult]] = []
            for batch in batches {
                if Self.anyRemote(batch.writes, in: transaction.graph, provider: provider) { break }
                applied.append(
                    Self.apply(
                        batch.writes, atomic: batch.atomic, validateOnly: batch.validateOnly, enforceWritable: true,
                        journalID: journalID, in: &transaction))
            }
            return applied
        }
        return committed.result.map {
            WriteOutcome(results: Self.failApplied($0, committed.saveFailure), seq: committed.lastSeq)
        }
    }

    /// Runs a scene: decided in one commit like a batch (`planWrites`). A scene of
    /// the daemon's own characteristics is applied whole there, each action on its
    /// own (a failed one is reported and the others still run, as HomeKit does),
    /// and the action-set-executed event follows its value events; one with a
    /// provider's actions publishes it once they are confirmed
    /// (`recordActionSetExecuted`).
    ///
    /// - Throws: NOT_FOUND when there is no such action set; nothing changed then.
    func planScene(
        _ actionSetID: ObjectID, origin: Origin, provider: (Accessory) -> String?,
        optimistic: (String) -> Set<ObjectID>
    ) throws(HomeError) -> (writes: [CharacteristicWrite], planned: PlannedWrites) {
        let journalID = self.journalID
        var writes: [CharacteristicWrite] = []
        let committed = try commit(.values, origin: origin) { transaction throws(HomeError) -> Planning in
            guard let actionSet = transaction.graph.actionSets[actionSetID] else {
                throw HomeError(.notFound, "no action set with id \(actionSetID)")
            }
            writes = actionSet.actions.map(\.write)
            guard Self.anyRemote(writes, in: transaction.graph, provider: provider) else {
                var results: [WriteResult] = []
                for write in writes {
                    switch Self.check(write, in: transaction.graph, enforceWritable: true, journalID: journalID) {
                    case .failure(let error):
                        results.append(WriteResult(characteristicID: write.characteristicID, error: error))
                    case .success(let checked):
                        results.append(transaction.store(checked, to: write.characteristicID))
                    }
                }
                transaction.emit(.actionSetExecuted(actionSetID))
                return .applied(results)
            }
            // Not atomic: a scene's failed action is reported and the others still run.
            let plan = try WritePlan(
                writes, atomic: false, validateOnly: false, in: transaction.graph,
                layoutVersion: transaction.layoutVersion, provider: provider, optimistic: optimistic,
                journalID: journalID)
            return Self.claimAndApply(plan, writes: writes, journalID: journalID, in: &transaction)
        }
        if case .applied = committed.result, let saveFailure = committed.saveFailure {
            throw HomeError(
                saveFailure.code, "scene \(actionSetID) not run: its values could not be saved: \(saveFailure.message)")
        }
        return (writes, Self.decided(committed))
    }

    /// What a planning commit decided, before its save was known.
    enum Planning {
        case applied([WriteResult])
        /// Some of it goes to providers; the results of its local part.
        case planned(WritePlan, applied: [WriteResult])
    }

    private static func decided(_ committed: Committed<Planning>) -> PlannedWrites {
        switch committed.result {
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

    /// Whether any of the writes is to a provider's characteristic.
    private static func anyRemote(
        _ writes: [CharacteristicWrite], in graph: HomeGraph, provider: (Accessory) -> String?
    ) -> Bool {
        var lastLocal: ObjectID?
        // By index: binding each write would copy it (its value and condition).
        for index in writes.indices {
            guard let accessoryID = graph.characteristics[writes[index].characteristicID]?.accessoryID,
                accessoryID != lastLocal
            else { continue }
            if let accessory = graph.accessories[accessoryID], provider(accessory) != nil { return true }
            lastLocal = accessoryID
        }
        return false
    }

    /// Claims a plan's conditional provider writes (those refused are taken out)
    /// and applies its local part, conditions checked, in the planning commit.
    private static func claimAndApply(
        _ plan: WritePlan, writes: [CharacteristicWrite], journalID: String, in transaction: inout Transaction
    ) -> Planning {
        var plan = plan
        let conditional = plan.conditionalProviderItems
        let refused = transaction.claim(conditional, journalID: journalID)
        plan.refuse(refused, writes: writes)
        // The claims of writes a refusal took out (in an atomic batch, all of them) end at once.
        let sent = Set(plan.conditionalProviderItems.map(\.characteristicID))
        for item in conditional where refused[item.position] == nil && !sent.contains(item.characteristicID) {
            transaction.claims.remove(item.characteristicID)
        }
        let applied = apply(
            plan.local, sameLayout: true, atomic: plan.atomic, checkingConditions: true, journalID: journalID,
            in: &transaction)
        return .planned(plan, applied: applied)
    }

    /// Commits a provider's confirmation of planned writes, each as it was checked
    /// when planned — unless the layout changed since (`layoutVersion`): then each
    /// is checked again, so that it never lands on a characteristic that was
    /// removed or whose metadata changed under it. The conditions it claimed end
    /// in the same commit. A confirmation's condition is not checked again: the
    /// device has taken the value (`Transaction.claim`).
    ///
    /// - Parameter atomic: all or none: when a write checked again fails, none is
    ///   applied and the others fail with ABORTED.
    /// - Returns: each write's result with its position in the batch, in the
    ///   items' order, and the daemon's sequence number once they took effect.
    func commit(
        _ items: [WritePlan.Item], plannedAt layoutVersion: UInt64, atomic: Bool = false,
        releasing claimed: [ObjectID] = [], origin: Origin
    )
        -> (results: [(position: Int, result: WriteResult)], seq: UInt64)
    {
        guard !items.isEmpty || !claimed.isEmpty else { return ([], publishedSeq.value) }
        let journalID = self.journalID
        let committed = commit(.values, origin: origin) { transaction -> [WriteResult] in
            transaction.claims.subtract(claimed)
            return Self.apply(
                items, sameLayout: transaction.layoutVersion == layoutVersion, atomic: atomic,
                checkingConditions: false, journalID: journalID, in: &transaction)
        }
        let results = Self.failApplied(committed.result, committed.saveFailure)
        return (zip(items, results).map { ($0.position, $1) }, committed.lastSeq)
    }

    /// Applies planned items in a commit: as checked when planned while the layout
    /// is the same (conditions checked again if asked), else checked again whole.
    static func apply(
        _ items: [WritePlan.Item], sameLayout: Bool, atomic: Bool, checkingConditions: Bool, journalID: String,
        in transaction: inout Transaction
    ) -> [WriteResult] {
        guard !items.isEmpty else { return [] }
        let checked: [Result<CheckedWrite, HomeError>] = items.map { item in
            if sameLayout {
                guard checkingConditions, let condition = item.condition else { return .success(item.checked) }
                do throws(HomeError) {
                    try transaction.graph.checkCondition(condition, for: item.characteristicID, journalID: journalID)
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
}

extension Transaction {
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
