internal import HomeModel
internal import HomeWire
internal import NIOCore
internal import NIOPosix

extension HomeService {
    /// TraceTrigger's default and largest number of runs.
    static let defaultTraceRuns: UInt32 = 10
    static let maxTraceRuns: UInt32 = 100
    /// Stored commits about the trigger one call reads at most.
    static let traceScanCommits = 20_000

    /// A trigger's runs from the history, read off the event loop.
    func traceTrigger(_ request: TraceTriggerRequest, context: CallContext) -> EventLoopFuture<TraceTriggerResponse> {
        let store = self.store
        let graph = store.snapshot().graph
        guard let trigger = graph.triggers[request.triggerID] else {
            return context.eventLoop.makeFailedFuture(HomeError(.notFound, "no trigger \(request.triggerID)"))
        }
        guard request.limit <= Self.maxTraceRuns else {
            return context.eventLoop.makeFailedFuture(
                HomeError(.invalidArgument, "limit \(request.limit) exceeds the most runs, \(Self.maxTraceRuns)"))
        }
        let limit = Int(request.limit == 0 ? Self.defaultTraceRuns : request.limit)
        guard store.history != nil else {
            return context.eventLoop.makeCompletedFuture { () throws -> TraceTriggerResponse in
                try Self.trace(trigger, limit: limit, in: graph, store: store)
            }
        }
        return NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () throws -> TraceTriggerResponse in
            try Self.trace(trigger, limit: limit, in: graph, store: store)
        }
    }

    private static func trace(_ trigger: Trigger, limit: Int, in graph: HomeGraph, store: HomeStore) throws(HomeError)
        -> TraceTriggerResponse
    {
        var events: [HomeEvent] = []
        var query = HistoryQuery(newestFirst: true, commitLimit: 1024, subjects: [trigger.id])
        var read = 0
        while true {
            let page = try store.pastEvents(query)
            events += page.events
            read += query.commitLimit
            let (runs, full) = TriggerTrace.runs(of: trigger, newestFirst: events, in: graph, limit: limit)
            guard !full, page.truncated, read < traceScanCommits, let oldest = page.events.last?.seq else {
                return TraceTriggerResponse(runs: runs)
            }
            query.beforeSeq = oldest
        }
    }
}
