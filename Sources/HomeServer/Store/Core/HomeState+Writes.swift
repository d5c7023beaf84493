internal import HomeModel

// Writes decided on the state: validated once, applied or planned (`WritePlan`),
// conditional provider writes claimed, confirmations applied as planned.
extension HomeState {
    /// Each id read from `graph`: NOT_FOUND for an unknown one, INVALID_ARGUMENT for
    /// one that is not readable.
    static func reads(_ characteristicIDs: [ObjectID], in graph: HomeGraph) -> [CharacteristicRead] {
        characteristicIDs.map { id -> CharacteristicRead in
            guard let characteristic = graph.characteristics[id] else {
                return CharacteristicRead(
                    characteristicID: id, value: nil, lastUpdatedMs: 0,
                    error: HomeError(.notFound, "no characteristic with id \(id)"))
            }
            guard characteristic.properties.readable else {
                return CharacteristicRead(
                    characteristicID: id, value: nil, lastUpdatedMs: 0,
                    error: HomeError(
                        .invalidArgument, "characteristic \(id) (\(characteristic.type.name)) is not readable"))
            }
            return CharacteristicRead(
                characteristicID: id, value: characteristic.value,
                lastUpdatedMs: characteristic.lastUpdatedMs, changeSeq: characteristic.changeSeq)
        }
    }

    /// Validates a batch and applies it: everything is checked first, so an atomic
    /// batch fails whole and a validate-only batch changes nothing.
    ///
    /// A write's condition is checked here, in the commit that applies it: no
    /// other change can come between the check and the write.
    static func apply(
        _ batch: WriteBatch, enforceWritable: Bool, journalID: String, in transaction: inout Transaction
    ) -> [WriteResult] {
        let writes = batch.writes
        let graph = transaction.graph
        let validated = writes.map { write -> Result<CheckedWrite, HomeError> in
            check(write, in: graph, enforceWritable: enforceWritable, journalID: journalID)
        }
        let anyFailed = validated.contains { if case .failure = $0 { true } else { false } }
        if batch.validateOnly || (batch.atomic && anyFailed) {
            return zip(writes, validated).map { write, outcome in
                if case .failure(let error) = outcome {
                    return WriteResult(characteristicID: write.characteristicID, error: error)
                }
                let error =
                    batch.validateOnly
                    ? nil : HomeError(.aborted, "not applied: another write of this atomic batch was invalid")
                return WriteResult(characteristicID: write.characteristicID, error: error)
            }
        }
        var results: [WriteResult] = []
        results.reserveCapacity(writes.count)
        for (write, outcome) in zip(writes, validated) {
            switch outcome {
            case .failure(let error):
                results.append(WriteResult(characteristicID: write.characteristicID, error: error))
            case .success(let checked):
                results.append(transaction.store(checked, to: write.characteristicID))
            }
        }
        return results
    }

    /// One write checked against the graph, with the precise error when it is not
    /// valid (naming what the id is when it is not a characteristic).
    ///
    /// - Parameter journalID: the daemon's journal, to check the write's condition
    ///   (if it has one) against the graph; nil leaves conditions unchecked.
    static func check(
        _ write: CharacteristicWrite, in graph: HomeGraph, enforceWritable: Bool, journalID: String? = nil
    ) -> Result<CheckedWrite, HomeError> {
        do throws(HomeError) {
            if let checked = try graph.checkWrite(
                write.value, to: write.characteristicID, enforceWritable: enforceWritable)
            {
                if let journalID, let condition = write.condition {
                    try graph.checkCondition(condition, for: write.characteristicID, journalID: journalID)
                }
                return .success(checked)
            }
            _ = try graph.validateWrite(write.value, to: write.characteristicID, enforceWritable: enforceWritable)
            return .failure(HomeError(.notFound, "no characteristic with id \(write.characteristicID)"))
        } catch {
            return .failure(error)
        }
    }

    /// A client's batch: applied at once when it names none of a provider's
    /// characteristics (most writes of most homes), else planned on the graph as
    /// it is, so nothing can change between the plan, the claims of its
    /// conditional writes and the part applied at once.
    ///
    /// - Throws: FAILED_PRECONDITION for an atomic batch that spans providers.
    static func plan(_ batch: WriteBatch, owners: any WriteOwners, journalID: String, in transaction: inout Transaction)
        throws(HomeError) -> Planning
    {
        guard anyRemote(batch.writes, in: transaction.graph, owners: owners) else {
            return .applied(apply(batch, enforceWritable: true, journalID: journalID, in: &transaction))
        }
        let plan = try WritePlan(
            batch.writes, atomic: batch.atomic, validateOnly: batch.validateOnly, in: transaction.graph,
            layoutVersion: transaction.layoutVersion, provider: owners.remoteProvider(of:),
            optimistic: owners.optimistic, journalID: journalID)
        return claimAndApply(plan, writes: batch.writes, journalID: journalID, in: &transaction)
    }

    /// A scene decided like a batch: one of the daemon's own characteristics run
    /// whole (each action on its own: a failed one is reported and the others
    /// still run, as HomeKit does, then the action-set-executed event); one with
    /// a provider's planned, not atomic.
    ///
    /// - Throws: NOT_FOUND when there is no such action set.
    static func planScene(
        _ actionSetID: ObjectID, owners: any WriteOwners, journalID: String, in transaction: inout Transaction
    ) throws(HomeError) -> ChangeResult {
        let writes = try sceneWrites(actionSetID, in: transaction.graph)
        guard anyRemote(writes, in: transaction.graph, owners: owners) else {
            return .scene(
                writes: writes, .applied(runScene(actionSetID, writes: writes, journalID: journalID, in: &transaction)))
        }
        let plan = try WritePlan(
            writes, atomic: false, validateOnly: false, in: transaction.graph,
            layoutVersion: transaction.layoutVersion, provider: owners.remoteProvider(of:),
            optimistic: owners.optimistic, journalID: journalID)
        return .scene(writes: writes, claimAndApply(plan, writes: writes, journalID: journalID, in: &transaction))
    }

    /// The writes an action set's actions make.
    ///
    /// - Throws: NOT_FOUND when there is no such action set.
    static func sceneWrites(_ actionSetID: ObjectID, in graph: HomeGraph) throws(HomeError) -> [CharacteristicWrite] {
        guard let actionSet = graph.actionSets[actionSetID] else {
            throw HomeError(.notFound, "no action set with id \(actionSetID)")
        }
        return actionSet.actions.map(\.write)
    }

    /// Applies a scene's writes each on its own, then emits that it ran.
    static func runScene(
        _ actionSetID: ObjectID, writes: [CharacteristicWrite], journalID: String, in transaction: inout Transaction
    ) -> [WriteResult] {
        var results: [WriteResult] = []
        for write in writes {
            switch check(write, in: transaction.graph, enforceWritable: true, journalID: journalID) {
            case .failure(let error):
                results.append(WriteResult(characteristicID: write.characteristicID, error: error))
            case .success(let checked):
                results.append(transaction.store(checked, to: write.characteristicID))
            }
        }
        transaction.emit(.actionSetExecuted(actionSetID))
        return results
    }

    /// Whether any of the writes is to a provider's characteristic.
    static func anyRemote(_ writes: [CharacteristicWrite], in graph: HomeGraph, owners: any WriteOwners) -> Bool {
        var lastLocal: ObjectID?
        // By index: binding each write would copy it (its value and condition).
        for index in writes.indices {
            guard let accessoryID = graph.characteristics[writes[index].characteristicID]?.accessoryID,
                accessoryID != lastLocal
            else { continue }
            if let accessory = graph.accessories[accessoryID], owners.remoteProvider(of: accessory) != nil {
                return true
            }
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

    /// Applies planned items in a commit: as checked when planned while the layout
    /// is the same (conditions checked again if asked), else checked again whole,
    /// so that a write never lands on a characteristic that was removed or whose
    /// metadata changed under it. A confirmation's condition is not checked
    /// again: the device has taken the value (`Transaction.claim`).
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
            return check(
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
