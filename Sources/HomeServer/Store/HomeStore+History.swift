public import HomeModel
internal import Logging

/// The stored history the store keeps every event in, and how long.
public struct StoredHistory: Sendable {
    public let storage: any HomeHistory
    public let retention: HistoryRetention

    public init(storage: any HomeHistory, retention: HistoryRetention = HistoryRetention()) {
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
        guard let history, !historyFailed.withLock({ $0 }) else { return }
        let keepUntil = events[0].timeMs + history.retention.keepMs(for: events, in: graph)
        do throws(HomeError) {
            try history.storage.appendEvents(events, keepUntilMs: keepUntil)
        } catch {
            historyFailed.withLock { $0 = true }
            logger.error(
                "cannot store events in the history; history is off until the next start, which begins a new journal",
                metadata: ["error": "\(error.message)", "seq": "\(events[0].seq)"])
            try? history.storage.beginJournal(id: "")
        }
    }

    /// Whether events are being kept beyond memory.
    public var keepsHistory: Bool { history != nil && !historyFailed.withLock { $0 } }

    /// One page of past events in sequence order: from the stored history, or, in a
    /// daemon that keeps none, from what the journal holds in memory.
    func pastEvents(_ query: HistoryQuery) throws(HomeError) -> HistoryPage {
        if let history { return try history.storage.events(query) }
        return withState { state in
            var held = state.journal.events(after: state.journal.firstHeldSeq - 1) ?? []
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
            let held = state.journal.events(after: state.journal.firstHeldSeq - 1) ?? []
            return held.first { $0.timeMs >= timeMs }?.seq ?? state.journal.lastSeq + 1
        }
    }

    /// The oldest sequence number that past events can be read from.
    func oldestKeptSeq() throws(HomeError) -> UInt64 {
        if let history { return try history.storage.oldestStoredSeq() ?? lastSeq + 1 }
        return withState { $0.journal.firstHeldSeq }
    }

    /// Deletes expired events, `step` commits at a time, each step a short call of
    /// its own so that no writer waits for the whole purge.
    ///
    /// - Returns: how many commits were deleted.
    public func purgeHistory(nowMs: Int64, step: Int = 256, pause: () async -> Void) async throws(HomeError)
        -> Int
    {
        guard let history else { return 0 }
        var purged = 0
        while true {
            let deleted = try history.storage.purgeEvents(expiredBy: nowMs, limit: step)
            purged += deleted
            if deleted < step { return purged }
            await pause()
        }
    }
}
