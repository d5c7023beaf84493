internal import HomeModel
internal import Logging
internal import Synchronization

/// Where the store's commits become durable: the commit log (`HomePersistence`,
/// one transaction per commit) and, with it, the stored history that keeps every
/// event, for as long as that history works. `HomeStore` calls it under its lock,
/// between deciding a change and publishing it; everything here that touches the
/// state takes it as an argument, so that this type holds no state of the home.
final class DurableLog: Sendable {
    let persistence: any HomePersistence
    /// Where every event is kept beyond memory; nil when there is none or it could
    /// not be read at start (see `DurableLog+History.swift`).
    let history: StoredHistory?
    /// Where this run's journal begins: the stored one continued, or a new one.
    let journalStart: (id: String, lastSeq: UInt64)
    /// Set once a write to the stored history failed: nothing more is stored this run.
    private let historyFailed = Atomic(false)
    /// Held while events are folded into the rollups: one fold at a time.
    let rollupFolding = Locked(())
    let logger: Logger

    /// Opens the log; if the stored history cannot be read or begun, history is
    /// off for this run (said in the log) and the journal lives in memory.
    init(persistence: any HomePersistence, history: StoredHistory?, logger: Logger) {
        self.persistence = persistence
        self.logger = logger
        let start = Self.startJournal(in: history, logger: logger)
        self.journalStart = (start.id, start.lastSeq)
        self.history = start.kept ? history : nil
    }

    /// Whether events are being kept beyond memory.
    var keepsHistory: Bool { history != nil && !historyFailed.load(ordering: .acquiring) }

    /// Makes a commit durable before anyone hears of it, in one call to the commit
    /// log (`CommitLog.append`, one transaction). A `.values` commit: the values it
    /// stored (the last value of each characteristic, once), marked for the next
    /// fold, and with a stored history its events. If the values cannot be saved,
    /// they are put back as they were and the commit's value events dropped, so
    /// nothing unsaved is published or acknowledged. A `.layout` commit: its rows,
    /// the value log folded, its events; if it cannot be saved, it is taken back
    /// whole.
    ///
    /// Without a stored history the events are not made here: the store makes
    /// each as it publishes it (an array per commit cost the busiest path).
    ///
    /// - Returns: the values' save error, if any (the commit's value events are
    ///   then dropped from `commit`).
    /// - Throws: a layout's save error; the state is then as it was.
    func makeDurable(_ commit: inout StateCommit, in state: inout HomeState) throws(HomeError) -> HomeError? {
        guard commit.installed else { return nil }
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
    private func logRecord(_ events: [HomeEvent], values: [SavedValue], of commit: StateCommit, in graph: HomeGraph)
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
        guard let before = commit.layoutBefore else { return }
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
    /// characteristic changed since the last fold and empties the log. Called
    /// under the store's lock, so no change lands between the values read and the
    /// log emptied.
    ///
    /// - Returns: how many values were saved.
    /// - Throws: persistence's error; the log and the marks are kept for next time.
    func foldValueLog(in state: inout HomeState) throws(HomeError) -> Int {
        if state.unfoldedValueIDs.isEmpty { return 0 }
        let values = state.unfoldedValueIDs.compactMap { state.graph.characteristics[$0] }
        try persistence.foldValueLog(into: values)
        state.unfoldedValueIDs = []
        return values.count
    }

    /// Stores one commit's events whose values could not be saved (the events
    /// that are published all the same: reachability, notes). A failure ends
    /// storing for this run (see `historyFailed`).
    private func storeHistory(_ events: [HomeEvent], graph: HomeGraph) {
        guard let history, keepsHistory else { return }
        let keepUntil = events[0].timeMs + history.retention.keepMs(for: events, in: graph)
        do throws(HomeError) {
            try persistence.append(
                CommitRecord(events: events, keepUntilMs: keepUntil, values: [], timeMs: events[0].timeMs))
        } catch {
            historyFailed(error, at: events[0].seq)
        }
    }

    /// After a write to the history failed: nothing more is stored this run, and
    /// the stored journal is abandoned, so that the next start begins a new journal
    /// instead of reusing numbers whose events were never stored.
    private func historyFailed(_ error: HomeError, at seq: UInt64) {
        historyFailed.store(true, ordering: .releasing)
        logger.error(
            "cannot store events in the history; history is off until the next start, which begins a new journal",
            metadata: ["error": "\(error.message)", "seq": "\(seq)"])
        try? history?.storage.beginJournal(id: "")
    }

    /// Where this run's journal begins: the stored one continued when there is one,
    /// else a new one recorded.
    private static func startJournal(in history: StoredHistory?, logger: Logger)
        -> (id: String, lastSeq: UInt64, kept: Bool)
    {
        guard let history else { return (Journal.makeID(), 0, false) }
        do throws(HomeError) {
            if let stored = try history.storage.storedJournal() {
                return (stored.id, stored.lastSeq, true)
            }
            let id = Journal.makeID()
            try history.storage.beginJournal(id: id)
            return (id, 0, true)
        } catch {
            logger.error(
                "cannot read the stored journal; history is off until the next start",
                metadata: ["error": "\(error.message)"])
            return (Journal.makeID(), 0, false)
        }
    }
}
