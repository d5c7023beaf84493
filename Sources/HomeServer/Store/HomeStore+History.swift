public import HomeModel

extension HomeStore {
    /// Where every event is kept beyond memory, if anywhere (see `DurableLog`).
    var history: StoredHistory? { log?.history }

    /// Whether events are being kept beyond memory.
    public var keepsHistory: Bool { log?.keepsHistory ?? false }

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
        guard let log else { return 0 }
        return try await log.purgeHistory(nowMs: nowMs, step: step, pause: pause)
    }

    /// Folds the events stored since the last fold into the rollups (one fold at a
    /// time: the upkeep's and a reader's who wants them current).
    ///
    /// - Returns: how many events were read.
    @discardableResult
    public func foldRollups(step: Int = 1024) throws(HomeError) -> Int {
        guard let log else { return 0 }
        return try log.foldRollups(step: step, graph: { snapshot().graph })
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
