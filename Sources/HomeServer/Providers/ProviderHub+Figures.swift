internal import Histogram
internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

// What `homectl providers` and `homectl stats` show of each provider.
extension ProviderHub {
    /// Every provider that has connected since the daemon started, plus `known`
    /// (providers of accessories in the graph), sorted by id.
    func infos(known: [String: [ObjectID]]) -> [ProviderInfo] {
        state.withLock { state in
            let ids = Set(known.keys).union(state.figures.keys).subtracting(inProcessProviders)
            return ids.sorted().map { id in
                let session = state.sessions[id]
                let figures = state.figures[id] ?? Figures()
                let hasLatency = figures.latencyUs.totalCount > 0
                return ProviderInfo(
                    providerID: id, connected: session != nil, connectionID: session?.connectionID ?? 0,
                    clientName: session?.clientName ?? "", accessoryIDs: known[id] ?? [],
                    lastSeenMs: figures.lastSeenMs, requestsInFlight: figures.inFlight, requests: figures.requests,
                    timeouts: figures.timeouts,
                    latencyP50Us: hasLatency ? figures.latencyUs.valueAtPercentile(50) : 0,
                    latencyP99Us: hasLatency ? figures.latencyUs.valueAtPercentile(99) : 0)
            }
        }
    }
}

/// The monotonic clock the hub times requests by.
func monotonicNs() -> UInt64 {
    UInt64(NIODeadline.now().uptimeNanoseconds)
}

// A provider's figures change in place, through `State.figures`' subscript: a copy
// of them would copy their latency histogram at every request.
extension ProviderHub.Figures {
    /// Takes a request's share of the provider's budget and counts it, or says why
    /// it is refused.
    mutating func admit(
        _ budgeted: (kind: ProviderBudget.Kind, connectionID: UInt64)?, isPing: Bool, provider providerID: String
    ) -> HomeError? {
        if let budgeted {
            if let refusal = budget.refusal(of: budgeted.kind, from: budgeted.connectionID) {
                return budget.error(refusal, provider: providerID, connectionID: budgeted.connectionID)
            }
            budget.take(budgeted.kind, from: budgeted.connectionID)
        }
        if !isPing { requests += 1 }
        return nil
    }

    /// An answer: the budget given back, the latency recorded.
    mutating func noteAnswer(
        budgeted: (kind: ProviderBudget.Kind, connectionID: UInt64)?, isPing: Bool, startedNs: UInt64
    ) {
        lastSeenMs = currentTimeMs()
        if let budgeted { budget.release(budgeted.kind, from: budgeted.connectionID) }
        if !isPing {
            let elapsedUs = (monotonicNs() &- startedNs) / 1_000
            latencyUs.record(min(elapsedUs, 600_000_000))
        }
    }
}
