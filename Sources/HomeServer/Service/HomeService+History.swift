internal import HomeModel
internal import HomeWire
internal import NIOCore
internal import NIOPosix

extension HomeService {
    /// A ReadHistory page's default and largest number of events.
    static let defaultHistoryPage: UInt32 = 1000
    static let maxHistoryPage: UInt32 = 10_000
    /// A page also ends once its events hold this many bytes (`approximateSize`),
    /// well inside the smallest frame a client may negotiate times four.
    static let historyPageBytes = 256 * 1024
    /// Stored commits one ReadHistory call reads at most: a filter that matches
    /// little ends its page early (with `next_seq` to go on) rather than scanning a year.
    static let historyScanLimit = 50_000

    /// Past events, one page (see `ReadHistoryRequest`), read off the event loop.
    func readHistory(_ request: ReadHistoryRequest, context: CallContext) -> EventLoopFuture<ReadHistoryResponse> {
        let store = self.store
        let nowMs = store.wallClockMs()
        do throws(HomeError) {
            try Self.validate(request, nowMs: nowMs)
        } catch {
            return context.eventLoop.makeFailedFuture(error)
        }
        // The journal in memory is read in place; only the stored history's file
        // reads go to a pool thread, off the event loop.
        guard store.history != nil else {
            return context.eventLoop.makeCompletedFuture { () throws -> ReadHistoryResponse in
                try Self.historyPage(request, store: store)
            }
        }
        return NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () throws -> ReadHistoryResponse in
            try Self.historyPage(request, store: store)
        }
    }

    static func validate(_ request: ReadHistoryRequest, nowMs: Int64) throws(HomeError) {
        guard request.limit <= maxHistoryPage else {
            throw HomeError(.invalidArgument, "limit \(request.limit) exceeds the largest page, \(maxHistoryPage)")
        }
        guard request.sinceMs >= 0, request.untilMs >= 0 else {
            throw HomeError(
                .invalidArgument,
                "since_ms \(request.sinceMs) / until_ms \(request.untilMs): times are ms since the epoch")
        }
        guard request.sinceMs <= nowMs else {
            throw HomeError(.invalidArgument, "since_ms \(request.sinceMs) is in the future (now is \(nowMs))")
        }
        if request.untilMs != 0 && request.untilMs <= request.sinceMs {
            throw HomeError(
                .invalidArgument,
                "until_ms \(request.untilMs) is not after since_ms \(request.sinceMs): no time between")
        }
        if request.rollupMs != 0 {
            guard RollupPoint.widthsMs.contains(request.rollupMs) else {
                throw HomeError(
                    .invalidArgument,
                    "rollup_ms \(request.rollupMs) is no rollup: 300000 (5 minutes) or 3600000 (an hour)")
            }
            guard request.filter.characteristicIDs.count == 1 else {
                throw HomeError(
                    .invalidArgument,
                    "rollups are of one characteristic: the filter names \(request.filter.characteristicIDs.count)")
            }
        }
        if request.beforeSeq != 0 && request.beforeSeq <= request.afterSeq + 1 {
            throw HomeError(
                .invalidArgument,
                "before_seq \(request.beforeSeq) leaves no sequence number after after_seq \(request.afterSeq)")
        }
    }

    /// The ids a filter's events are about, for the stored history's index: only
    /// for a filter that names characteristics, services, accessories or rooms (a
    /// room's accessories now); otherwise none, and every commit is read. The scope
    /// still decides which events match.
    static func historySubjects(_ filter: SubscriptionFilter, in graph: HomeGraph) -> [ObjectID] {
        guard filter.homeIDs.isEmpty, filter.zoneIDs.isEmpty, filter.serviceTypes.isEmpty,
            filter.characteristicTypes.isEmpty
        else { return [] }
        var ids = filter.characteristicIDs + filter.serviceIDs + filter.accessoryIDs + filter.roomIDs
        if !filter.roomIDs.isEmpty {
            let rooms = Set(filter.roomIDs)
            ids += graph.accessories.values.filter { rooms.contains($0.roomID) }.map(\.id)
        }
        return ids
    }

    private static func historyPage(_ request: ReadHistoryRequest, store: HomeStore) throws(HomeError)
        -> ReadHistoryResponse
    {
        if request.rollupMs != 0 {
            let points = try store.rollups(
                characteristicID: request.filter.characteristicIDs[0], widthMs: request.rollupMs,
                sinceMs: request.sinceMs, untilMs: request.untilMs == 0 ? .max : request.untilMs,
                limit: Int(request.limit == 0 ? defaultHistoryPage : request.limit))
            return ReadHistoryResponse(
                journalID: store.journalID, events: [], nextSeq: 0, oldestSeq: try store.oldestKeptSeq(),
                rollups: points)
        }
        let limit = Int(request.limit == 0 ? defaultHistoryPage : request.limit)
        let scope = SubscriptionScope(request.filter)
        let graph = store.snapshot().graph
        var query = HistoryQuery(
            afterSeq: request.afterSeq, beforeSeq: request.beforeSeq == 0 ? nil : request.beforeSeq,
            sinceMs: request.sinceMs == 0 ? nil : request.sinceMs,
            untilMs: request.untilMs == 0 ? nil : request.untilMs,
            newestFirst: request.newestFirst, commitLimit: min(1024, max(limit, 16)),
            subjects: historySubjects(request.filter, in: graph))
        var events: [HomeEvent] = []
        var bytes = 0
        var scanned = 0
        var next: UInt64 = 0
        reading: while true {
            let page = try store.pastEvents(query)
            scanned += query.commitLimit
            for event in page.events where scope.matchesPast(event, in: graph) {
                events.append(event)
                bytes += event.approximateSize
                if events.count == limit || bytes >= historyPageBytes {
                    next = event.seq
                    break reading
                }
            }
            guard page.truncated, let last = page.events.last else { break }
            if request.newestFirst { query.beforeSeq = last.seq } else { query.afterSeq = last.seq }
            if scanned >= historyScanLimit {
                next = last.seq
                break
            }
        }
        return ReadHistoryResponse(
            journalID: store.journalID, events: events, nextSeq: next, oldestSeq: try store.oldestKeptSeq())
    }
}
