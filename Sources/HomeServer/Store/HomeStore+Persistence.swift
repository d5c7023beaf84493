public import HomeModel

extension HomeStore {
    /// Makes a commit durable before anyone hears of it, in one call to the commit
    /// log (`CommitLog.append`, one transaction): the values a `.values` commit
    /// stored (the last value of each characteristic, once), marked for the next
    /// fold, and with a stored history its events. If the values cannot be saved,
    /// they are put back as they were and the commit's value events dropped, so
    /// nothing unsaved is published or acknowledged.
    ///
    /// Without a stored history the events are not made here: the commit makes
    /// each as it publishes it (an array per commit cost the busiest path).
    ///
    /// - Returns: the values' save error, if any (the commit's value events are then
    ///   dropped from `transaction`).
    func makeDurable(_ transaction: inout Transaction, firstSeq: UInt64, origin: Origin) -> HomeError? {
        guard let persistence else { return nil }
        let changes = valueLogChanges(transaction)
        let storingEvents = keepsHistory && !transaction.events.isEmpty
        guard storingEvents || !changes.isEmpty else { return nil }
        let record = commitRecord(
            storingEvents ? transaction.numberedEvents(firstSeq: firstSeq, origin: origin) : [], values: changes,
            in: transaction)
        do throws(HomeError) {
            try persistence.append(record)
            for change in changes { writtenValues?.mark(change.characteristicID) }
            return nil
        } catch {
            guard !changes.isEmpty, let undo = transaction.undo else {
                // Only events, and the history refused them: it is off from here on.
                historyFailed(error, at: firstSeq)
                return nil
            }
            for entry in undo.reversed() {
                transaction.graph.restoreValue(
                    entry.value, lastUpdatedMs: entry.lastUpdatedMs, changeSeq: entry.changeSeq, at: entry.index)
            }
            transaction.dropValueEvents()
            if storingEvents, !transaction.events.isEmpty {
                storeHistory(transaction.numberedEvents(firstSeq: firstSeq, origin: origin), graph: transaction.graph)
            }
            return error
        }
    }

    /// A commit's record: its events kept as long as the retention says.
    func commitRecord(_ events: [HomeEvent], values: [SavedValue], in transaction: Transaction) -> CommitRecord {
        let keepMs = events.isEmpty ? 0 : history?.retention.keepMs(for: events, in: transaction.graph) ?? 0
        return CommitRecord(
            events: events, keepUntilMs: transaction.nowMs + keepMs, values: values, timeMs: transaction.nowMs)
    }

    /// The values a `.values` commit stored, each characteristic once with its
    /// final value: the value log's row.
    func valueLogChanges(_ transaction: Transaction) -> [SavedValue] {
        guard persistence != nil, let undo = transaction.undo, !undo.isEmpty else { return [] }
        var seen = Set<HomeGraph.CharacteristicIndex>()
        var changes: [SavedValue] = []
        changes.reserveCapacity(undo.count)
        for entry in undo where undo.count == 1 || seen.insert(entry.index).inserted {
            changes.append(
                SavedValue(
                    characteristicID: entry.characteristicID,
                    value: transaction.graph.characteristics.values[entry.index].value))
        }
        return changes
    }

    /// Makes a layout commit durable (called by the change, under the lock, before
    /// it is installed), folding the value log into the tables at the same time.
    func saveLayout(of transaction: Transaction) throws(HomeError) {
        guard let persistence, let before = transaction.before, let writtenValues else { return }
        let ids = writtenValues.take()
        let values = ids.compactMap { transaction.graph.characteristics[$0] }
        do throws(HomeError) {
            try persistence.saveLayout(from: before, to: transaction.graph, values: values)
        } catch {
            writtenValues.mark(ids)
            throw error
        }
    }

    /// Folds the value log into the tables: saves the current value of every
    /// characteristic changed since the last fold and empties the log. Under the
    /// lock, so no change lands between the values read and the log emptied.
    ///
    /// - Returns: how many values were saved.
    /// - Throws: persistence's error; the log and the marks are kept for next time.
    @discardableResult
    public func foldValueLog() throws(HomeError) -> Int {
        guard let persistence, let writtenValues else { return 0 }
        return try withState { state throws(HomeError) -> Int in
            let ids = writtenValues.take()
            if ids.isEmpty { return 0 }
            let values = ids.compactMap { state.core.graph.characteristics[$0] }
            do throws(HomeError) {
                try persistence.foldValueLog(into: values)
            } catch {
                writtenValues.mark(ids)
                throw error
            }
            return values.count
        }
    }
}

/// The characteristics whose values changed since the value log was last folded.
final class WrittenValues: Sendable {
    private let ids = Locked<Set<ObjectID>>([])

    func mark(_ id: ObjectID) {
        ids.withLock { _ = $0.insert(id) }
    }

    func mark(_ more: Set<ObjectID>) {
        ids.withLock { $0.formUnion(more) }
    }

    /// The marked ids, unmarking them.
    func take() -> Set<ObjectID> {
        ids.withLock { ids in
            defer { ids = [] }
            return ids
        }
    }
}
