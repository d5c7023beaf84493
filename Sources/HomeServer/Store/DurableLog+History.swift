package import HomeModel

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

extension DurableLog {
    /// Deletes expired events and rollups, `step` at a time, each step a short call
    /// of its own so that no writer waits for the whole purge.
    ///
    /// - Returns: how many commits were deleted.
    func purgeHistory(nowMs: Int64, step: Int, pause: () async -> Void) async throws(HomeError) -> Int {
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
    /// - Parameter graph: the home as it is once the fold has its turn (which
    ///   characteristics are numbers and not occurrences).
    /// - Returns: how many events were read.
    func foldRollups(step: Int, graph: () -> HomeGraph) throws(HomeError) -> Int {
        try rollupFolding.withLock { _ throws(HomeError) -> Int in
            guard let history else { return 0 }
            return try Self.foldPendingRollups(of: history.storage, step: step, graph: graph())
        }
    }

    private static func foldPendingRollups(of storage: any HomeHistory, step: Int, graph: HomeGraph)
        throws(HomeError) -> Int
    {
        var watermark = try storage.rollupWatermark()
        var read = 0
        while true {
            let page = try storage.events(HistoryQuery(afterSeq: watermark, commitLimit: step))
            guard let last = page.events.last else { return read }
            var rollups = RollupAccumulator()
            for event in page.events {
                guard case .value(let change) = event.body, let number = rolledUp(change, in: graph) else {
                    continue
                }
                rollups.add(characteristicID: change.characteristicID, value: number, at: event.timeMs)
            }
            try storage.applyRollups(rollups.points, throughSeq: last.seq)
            watermark = last.seq
            read += page.events.count
            if !page.truncated { return read }
        }
    }

    /// A value event's number for the rollups: ints, uints and floats of
    /// characteristics the home still has that are not occurrences (a button press
    /// is an event, never merged into a slice); nil for the rest.
    private static func rolledUp(_ change: ValueChange, in graph: HomeGraph) -> Double? {
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
}
