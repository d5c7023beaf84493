public import HomeModel

extension HomeStore {
    /// Reads values from the daemon's cache. Each read succeeds or fails on its own:
    /// NOT_FOUND for an unknown id, INVALID_ARGUMENT for a characteristic that is
    /// not readable.
    public func read(_ characteristicIDs: [ObjectID]) -> ReadOutcome {
        withState { state in
            ReadOutcome(reads: Self.reads(characteristicIDs, in: state.core.graph), seq: state.core.journal.lastSeq)
        }
    }

    /// Reads from the cache, and in the same lock groups the readable ones by the
    /// provider `provider` names for their accessory (nil: the daemon's own): the
    /// ones a fresh read asks.
    func read(_ characteristicIDs: [ObjectID], groupedBy provider: (Accessory) -> String?)
        -> (cached: ReadOutcome, byProvider: [String: [ObjectID]])
    {
        withState { state in
            let reads = Self.reads(characteristicIDs, in: state.core.graph)
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
        let committed = commit(.values, origin: origin) { transaction -> [WriteResult] in
            Self.apply(
                writes, atomic: atomic, validateOnly: validateOnly, enforceWritable: enforceWritable,
                journalID: journalID, in: &transaction)
        }
        return WriteOutcome(results: Self.failApplied(committed.result, committed.saveFailure), seq: committed.lastSeq)
    }

    /// Validates a batch in a transaction and applies it: everything is checked
    /// first, so an atomic batch fails whole and a validate-only batch changes nothing.
    ///
    /// A write's condition is checked here, under the lock and in the commit that
    /// applies it: no other change can come between the check and the write.
    static func apply(
        _ writes: [CharacteristicWrite], atomic: Bool, validateOnly: Bool, enforceWritable: Bool,
        journalID: String, in transaction: inout Transaction
    ) -> [WriteResult] {
        let graph = transaction.graph
        let validated = writes.map { write -> Result<CheckedWrite, HomeError> in
            Self.check(write, in: graph, enforceWritable: enforceWritable, journalID: journalID)
        }
        let anyFailed = validated.contains { if case .failure = $0 { true } else { false } }
        if validateOnly || (atomic && anyFailed) {
            return zip(writes, validated).map { write, outcome in
                if case .failure(let error) = outcome {
                    return WriteResult(characteristicID: write.characteristicID, error: error)
                }
                let error =
                    validateOnly
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

    /// The results of a commit whose values could not be saved: every write it
    /// applied (which was undone) fails with that error; the others keep theirs.
    static func failApplied(_ results: [WriteResult], _ saveFailure: HomeError?) -> [WriteResult] {
        guard let saveFailure else { return results }
        let failure = HomeError(saveFailure.code, "not applied: the value could not be saved: \(saveFailure.message)")
        return results.map { result in
            result.error == nil ? WriteResult(characteristicID: result.characteristicID, error: failure) : result
        }
    }

    /// One write checked against the graph, with the precise error when it is not
    /// valid (naming what the id is when it is not a characteristic).
    ///
    /// - Parameter journalID: the daemon's journal, to check the write's condition
    ///   (if it has one) against the graph; nil leaves conditions unchecked.
    static func check(
        _ write: CharacteristicWrite, in graph: HomeGraph,
        enforceWritable: Bool, journalID: String? = nil
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

    /// Runs a scene: applies each action's write (a failed one is reported and the
    /// others still run, as HomeKit does), then publishes the action-set-executed
    /// event after the value events it caused.
    ///
    /// - Throws: NOT_FOUND when there is no such action set; nothing changed then.
    public func executeActionSet(_ actionSetID: ObjectID, origin: Origin) throws(HomeError) -> WriteOutcome {
        let committed = try commit(.values, origin: origin) { transaction throws(HomeError) -> [WriteResult] in
            guard let actionSet = transaction.graph.actionSets[actionSetID] else {
                throw HomeError(.notFound, "no action set with id \(actionSetID)")
            }
            var results: [WriteResult] = []
            for action in actionSet.actions {
                switch Self.check(action.write, in: transaction.graph, enforceWritable: true, journalID: journalID) {
                case .failure(let error):
                    results.append(WriteResult(characteristicID: action.characteristicID, error: error))
                case .success(let checked):
                    results.append(transaction.store(checked, to: action.characteristicID))
                }
            }
            transaction.emit(.actionSetExecuted(actionSetID))
            return results
        }
        if let saveFailure = committed.saveFailure {
            throw HomeError(
                saveFailure.code, "scene \(actionSetID) not run: its values could not be saved: \(saveFailure.message)")
        }
        return WriteOutcome(results: committed.result, seq: committed.lastSeq)
    }

    /// Records an accessory's reachability (a provider connected or went away),
    /// publishing a reachability event when it changed.
    ///
    /// - Returns: the event's sequence number, or nil when nothing changed.
    @discardableResult
    public func setReachable(_ reachable: Bool, accessoryID: ObjectID, origin: Origin) throws(HomeError) -> UInt64? {
        let committed = try commit(.values, origin: origin) { transaction throws(HomeError) -> Bool in
            guard try transaction.graph.setReachable(reachable, accessoryID: accessoryID) else { return false }
            transaction.emit(.reachability(accessoryID: accessoryID, reachable: reachable))
            return true
        }
        return committed.result ? committed.firstSeq : nil
    }

    /// Publishes that a scene ran, after the value events its writes caused (a
    /// scene written through providers, whose writes committed one by one).
    ///
    /// - Returns: the event's sequence number.
    public func recordActionSetExecuted(_ actionSetID: ObjectID, origin: Origin) -> UInt64 {
        commit(.values, origin: origin) { transaction in transaction.emit(.actionSetExecuted(actionSetID)) }.firstSeq
    }

    /// Publishes that a trigger fired (before the scenes it runs).
    ///
    /// - Returns: the event's sequence number.
    public func recordTriggerFired(_ triggerID: ObjectID, origin: Origin) -> UInt64 {
        commit(.values, origin: origin) { transaction in transaction.emit(.triggerFired(triggerID)) }.firstSeq
    }
}

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
}

extension CharacteristicWriteAction {
    /// The write a scene's action makes: conditional when the action says `onlyIf`.
    var write: CharacteristicWrite {
        CharacteristicWrite(
            characteristicID: characteristicID, value: value,
            condition: onlyIf.map { WriteCondition(value: $0) })
    }
}
