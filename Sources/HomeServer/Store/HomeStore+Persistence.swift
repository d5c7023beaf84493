public import HomeModel

extension HomeStore {
    /// Makes a commit durable before anyone hears of it. A `.values` commit is one
    /// call to the commit log (`CommitLog.append`, one transaction): the values it
    /// stored (the last value of each characteristic, once), marked for the next
    /// fold, and with a stored history its events. If the values cannot be saved,
    /// they are put back as they were and the commit's value events dropped, so
    /// nothing unsaved is published or acknowledged. A `.layout` commit saves the
    /// layout (folding the value log too); if it cannot, it is taken back whole.
    ///
    /// Without a stored history the events are not made here: the commit makes
    /// each as it publishes it (an array per commit cost the busiest path).
    ///
    /// - Returns: the values' save error, if any (the commit's value events are
    ///   then dropped from `commit`).
    /// - Throws: a layout's save error; the state is then as it was.
    func makeDurable(_ commit: inout StateCommit, in state: inout HomeState) throws(HomeError) -> HomeError? {
        guard let persistence, commit.installed else { return nil }
        let storingEvents = keepsHistory && !commit.events.isEmpty
        if commit.kind == .layout {
            do throws(HomeError) {
                try saveLayout(of: commit, graph: state.graph)
            } catch {
                state.undoLayout(commit)
                throw error
            }
            if storingEvents { storeHistory(commit.numberedEvents, graph: state.graph) }
            return nil
        }
        let row = commit.valueRow(in: state.graph)
        guard storingEvents || !row.isEmpty else { return nil }
        let record = logRecord(storingEvents ? commit.numberedEvents : [], values: row, of: commit, in: state.graph)
        do throws(HomeError) {
            try persistence.append(record)
            for change in row { writtenValues?.mark(change.characteristicID) }
            return nil
        } catch {
            guard !row.isEmpty else {
                // Only events, and the history refused them: it is off from here on.
                historyFailed(error, at: commit.firstSeq)
                return nil
            }
            state.undoValues(&commit)
            if storingEvents, !commit.events.isEmpty { storeHistory(commit.numberedEvents, graph: state.graph) }
            return error
        }
    }

    /// A commit's row in the log: its events kept as long as the retention says.
    func logRecord(_ events: [HomeEvent], values: [SavedValue], of commit: StateCommit, in graph: HomeGraph)
        -> CommitRecord
    {
        let keepMs = events.isEmpty ? 0 : history?.retention.keepMs(for: events, in: graph) ?? 0
        return CommitRecord(events: events, keepUntilMs: commit.nowMs + keepMs, values: values, timeMs: commit.nowMs)
    }

    /// Saves a layout commit, given the state's graph once it is installed,
    /// folding the value log into the tables at the same time (the values the
    /// layout change set among them).
    private func saveLayout(of commit: StateCommit, graph: HomeGraph) throws(HomeError) {
        guard let persistence, let before = commit.layoutBefore, let writtenValues else { return }
        for id in commit.layoutValueIDs { writtenValues.mark(id) }
        let ids = writtenValues.take()
        let values = ids.compactMap { graph.characteristics[$0] }
        do throws(HomeError) {
            try persistence.saveLayout(from: before, to: graph, values: values)
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
