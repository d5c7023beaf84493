public import HomeModel

extension HomeStore {
    /// Makes a commit durable before anyone hears of it, in one call to the commit
    /// log (`CommitLog.append`, one transaction). A `.values` commit: the values it
    /// stored (the last value of each characteristic, once), marked for the next
    /// fold, and with a stored history its events. If the values cannot be saved,
    /// they are put back as they were and the commit's value events dropped, so
    /// nothing unsaved is published or acknowledged. A `.layout` commit: its rows,
    /// the value log folded, its events; if it cannot be saved, it is taken back
    /// whole.
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
            try saveLayout(of: commit, storingEvents: storingEvents, in: &state)
            return nil
        }
        let row = commit.valueRow(in: state.graph)
        guard storingEvents || !row.isEmpty else { return nil }
        let record = logRecord(storingEvents ? commit.numberedEvents : [], values: row, of: commit, in: state.graph)
        do throws(HomeError) {
            try persistence.append(record)
            for change in row { state.unfoldedValueIDs.insert(change.characteristicID) }
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

    /// Saves a layout commit once it is installed, in one call to the commit log:
    /// its rows, the value log folded into the tables (the values the layout
    /// change set among them) and, with a stored history, its events. If it
    /// cannot, the commit is taken back whole.
    private func saveLayout(of commit: StateCommit, storingEvents: Bool, in state: inout HomeState)
        throws(HomeError)
    {
        guard let persistence, let before = commit.layoutBefore else { return }
        state.unfoldedValueIDs.formUnion(commit.layoutValueIDs)
        let layout = LayoutSave(
            before: before, after: state.graph,
            unfolded: state.unfoldedValueIDs.compactMap { state.graph.characteristics[$0] })
        var record = logRecord(storingEvents ? commit.numberedEvents : [], values: [], of: commit, in: state.graph)
        record.layout = layout
        do throws(HomeError) {
            try persistence.append(record)
        } catch {
            state.undoLayout(commit)
            throw error
        }
        state.unfoldedValueIDs = []
    }

    /// Folds the value log into the tables: saves the current value of every
    /// characteristic changed since the last fold and empties the log. Under the
    /// lock, so no change lands between the values read and the log emptied.
    ///
    /// - Returns: how many values were saved.
    /// - Throws: persistence's error; the log and the marks are kept for next time.
    @discardableResult
    public func foldValueLog() throws(HomeError) -> Int {
        guard let persistence else { return 0 }
        return try withState { state throws(HomeError) -> Int in
            if state.core.unfoldedValueIDs.isEmpty { return 0 }
            let values = state.core.unfoldedValueIDs.compactMap { state.core.graph.characteristics[$0] }
            try persistence.foldValueLog(into: values)
            state.core.unfoldedValueIDs = []
            return values.count
        }
    }
}
