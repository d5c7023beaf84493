public import HomeModel
internal import Logging
internal import Synchronization

/// The stored history the store keeps every event in, and how long.
package struct StoredHistory: Sendable {
    package let storage: any HomeHistory
    package let retention: HistoryRetention

    /// With the default retention.
    package init(storage: any HomeHistory) {
        self.init(storage: storage, retention: HistoryRetention())
    }

    package init(storage: any HomeHistory, retention: HistoryRetention) {
        self.storage = storage
        self.retention = retention
    }
}

extension HomeStore {
    /// Where this run's journal begins: the stored one continued when there is one,
    /// else a new one recorded. If the storage fails either way, history is off for
    /// this run (said in the log) and the journal lives in memory.
    static func startJournal(in history: StoredHistory?, logger: Logger)
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

    /// Stores one commit's events (under the lock, before they are published). A
    /// failure is logged and ends storing for this run, and the stored journal is
    /// abandoned, so that the next start begins a new journal instead of reusing
    /// numbers whose events were never stored.
    func storeHistory(_ events: [HomeEvent], graph: HomeGraph) {
        guard let history, let persistence, !historyFailed.load(ordering: .acquiring) else { return }
        let keepUntil = events[0].timeMs + history.retention.keepMs(for: events, in: graph)
        do throws(HomeError) {
            try persistence.append(
                CommitRecord(events: events, keepUntilMs: keepUntil, values: [], timeMs: events[0].timeMs))
        } catch {
            historyFailed(error, at: events[0].seq)
        }
    }

    /// After a write to the history failed: nothing more is stored this run, and
    /// the stored journal is abandoned (see `storeHistory`).
    func historyFailed(_ error: HomeError, at seq: UInt64) {
        historyFailed.store(true, ordering: .releasing)
        logger.error(
            "cannot store events in the history; history is off until the next start, which begins a new journal",
            metadata: ["error": "\(error.message)", "seq": "\(seq)"])
        try? history?.storage.beginJournal(id: "")
    }

    /// Whether events are being kept beyond memory.
    public var keepsHistory: Bool { history != nil && !historyFailed.load(ordering: .acquiring) }

    /// One page of past events in sequence order: from the stored history, or, in a
    /// daemon that keeps none, from what the journal holds in memory.
    func pastEvents(_ query: HistoryQuery) throws(HomeError) -> HistoryPage {
        if let history { return try history.storage.events(query) }
        return withState { state in
            var held = state.core.journal.events(after: state.core.journal.firstHeldSeq - 1) ?? []
            held.removeAll { event in
                event.seq <= query.afterSeq || event.seq >= (query.beforeSeq ?? .max)
                    || event.timeMs < (query.sinceMs ?? .min) || event.timeMs >= (query.untilMs ?? .max)
            }
            if query.newestFirst { held.reverse() }
            return HistoryPage(events: held, truncated: false)
        }
    }

    /// The first sequence number at or after `timeMs`, or the next one to be issued
    /// when every event kept is older.
    func firstSeq(atOrAfter timeMs: Int64) throws(HomeError) -> UInt64 {
        if let history, let seq = try history.storage.firstSeq(atOrAfter: timeMs) { return seq }
        return withState { state in
            let held = state.core.journal.events(after: state.core.journal.firstHeldSeq - 1) ?? []
            return held.first { $0.timeMs >= timeMs }?.seq ?? state.core.journal.lastSeq + 1
        }
    }

    /// The oldest sequence number that past events can be read from.
    func oldestKeptSeq() throws(HomeError) -> UInt64 {
        if let history { return try history.storage.oldestStoredSeq() ?? lastSeq + 1 }
        return withState { $0.core.journal.firstHeldSeq }
    }

    /// Commits deleted per step of a purge: a few milliseconds of the database's time
    /// (`homed-bench history` measures the longest step).
    public static let purgeStep = 16

    /// Deletes expired events and rollups, `step` at a time, each step a short call
    /// of its own so that no writer waits for the whole purge.
    ///
    /// - Returns: how many commits were deleted.
    public func purgeHistory(nowMs: Int64, step: Int = HomeStore.purgeStep, pause: () async -> Void)
        async throws(HomeError)
        -> Int
    {
        guard let history else { return 0 }
        var purged = 0
        while true {
            let deleted = try history.storage.purgeEvents(expiredBy: nowMs, limit: step)
            purged += deleted
            if deleted < step { break }
            await pause()
        }
        while try history.storage.purgeRollups(before: nowMs - history.retention.rollupMs, limit: step) == step {
            await pause()
        }
        return purged
    }

    /// Folds the events stored since the last fold into the rollups, a page of
    /// commits at a time, each page with its watermark in one transaction. One
    /// fold at a time (the upkeep's and a reader's who wants them current).
    ///
    /// - Returns: how many events were read.
    @discardableResult
    public func foldRollups(step: Int = 1024) throws(HomeError) -> Int {
        try rollupFolding.withLock { _ throws(HomeError) -> Int in try foldPendingRollups(step: step) }
    }

    private func foldPendingRollups(step: Int) throws(HomeError) -> Int {
        guard let history else { return 0 }
        var watermark = try history.storage.rollupWatermark()
        let graph = snapshot().graph
        var read = 0
        while true {
            let page = try history.storage.events(HistoryQuery(afterSeq: watermark, commitLimit: step))
            guard let last = page.events.last else { return read }
            var rollups = RollupAccumulator()
            for event in page.events {
                guard case .value(let change) = event.body, let number = Self.rolledUp(change, in: graph) else {
                    continue
                }
                rollups.add(characteristicID: change.characteristicID, value: number, at: event.timeMs)
            }
            try history.storage.applyRollups(rollups.points, throughSeq: last.seq)
            watermark = last.seq
            read += page.events.count
            if !page.truncated { return read }
        }
    }

    /// A value event's number for the rollups: ints, uints and floats of
    /// characteristics the home still has that are not occurrences (a button press
    /// is an event, never merged into a slice); nil for the rest.
    static func rolledUp(_ change: ValueChange, in graph: HomeGraph) -> Double? {
        guard let characteristic = graph.characteristics[change.characteristicID], !characteristic.isEventOnly else {
            return nil
        }
        switch change.value {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .float(let value): return value
        case .bool, .string, .data: return nil
        }
    }

    /// One characteristic's stored rollups (see `HomeHistory.rollups`).
    func rollups(characteristicID: ObjectID, widthMs: Int64, sinceMs: Int64, untilMs: Int64, limit: Int)
        throws(HomeError) -> [RollupPoint]
    {
        guard let history else {
            throw HomeError(
                .failedPrecondition,
                "this daemon keeps no stored history (--in-memory or --history-retention off): it has no rollups")
        }
        // What was stored since the upkeep's last fold, folded first: rollups are current.
        try foldRollups()
        return try history.storage.rollups(
            characteristicID: characteristicID, widthMs: widthMs, sinceMs: sinceMs, untilMs: untilMs, limit: limit)
    }

    /// Notes something for the audit (an event of kind `.audit`, journaled and kept
    /// like any other, sent to whoever asks for the kind), with the values it is
    /// about, if any (`AuditNote.values`).
    public func audit(
        _ action: String, detail: String, values: [ObjectID: CharacteristicValue] = [:], origin: Origin
    ) {
        _ = commitAlways(.note(.audit(AuditNote(action: action, detail: detail, values: values))), origin: origin)
    }
}
