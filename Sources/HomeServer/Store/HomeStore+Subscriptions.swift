import HomeModel

/// Where a new subscription's stream starts.
enum SubscriptionStart: Sendable {
    /// With changes from now on.
    case live
    /// With the current state, then changes.
    case snapshot
    /// With the events after `seq` of journal `journalID`; a fresh snapshot after a
    /// resync marker when they are no longer held.
    case resume(after: UInt64, journalID: String)
}

extension HomeStore {
    /// Registers a subscription. What it must send first (resume replay, snapshot,
    /// markers) is queued in the sink atomically with registration, so no event
    /// falls between them.
    func subscribe(_ filter: SubscriptionFilter, start: SubscriptionStart,
                   makeSink: (UInt64, SubscriptionScope) -> SubscriptionSink) throws(HomeError) -> SubscriptionSink {
        var scheduleFlusher = false
        let sink = try withState { state throws(HomeError) -> SubscriptionSink in
            try SubscriptionScope.validate(filter, in: state.graph)
            let scope = SubscriptionScope(filter)
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            let sink = makeSink(id, scope)
            let lastSeq = state.journal.lastSeq
            switch start {
            case .live:
                sink.start(with: [.marker(StreamMarker(kind: .subscribed, seq: lastSeq))])
            case .snapshot:
                sink.start(with: [.marker(StreamMarker(kind: .subscribed, seq: lastSeq))]
                               + Self.snapshotItems(for: scope, in: state.graph, seq: lastSeq, leading: nil))
            case .resume(let since, let journalID):
                if journalID == state.journal.id, let missed = state.journal.events(after: since) {
                    sink.start(with: [.marker(StreamMarker(kind: .subscribed, seq: since))])
                    for event in missed where sink.offer(event, characteristic: Self.subject(of: event, in: state.graph),
                                                         in: state.graph, layoutVersion: state.layoutVersion,
                                                         mergeable: Self.isMergeable(event, in: state.graph)) {
                        // Listed with its loop's flusher, which must run (after the lock).
                        scheduleFlusher = true
                    }
                } else {
                    let reason = if journalID != state.journal.id {
                        "journal changed (was \(journalID.isEmpty ? "unknown" : journalID), now \(state.journal.id))"
                    } else if since > lastSeq {
                        "sequence number \(since) was never issued by journal \(state.journal.id), which is at \(lastSeq)"
                    } else {
                        "events after \(since) are no longer held (journal keeps \(state.journal.capacity))"
                    }
                    sink.start(with: [.marker(StreamMarker(kind: .subscribed, seq: lastSeq))]
                                   + Self.snapshotItems(for: scope, in: state.graph, seq: lastSeq,
                                                        leading: StreamMarker(kind: .resync, seq: lastSeq, reason: reason)))
                }
            }
            state.sinks[id] = sink
            return sink
        }
        if scheduleFlusher { sink.flusher.scheduleFlush() }
        sink.wake()
        return sink
    }

    func unsubscribe(_ sink: SubscriptionSink) {
        _ = withState { $0.sinks.removeValue(forKey: sink.subscriptionID) }
    }

    /// Widens or narrows an open subscription between two events.
    ///
    /// - Returns: the sequence number after which the new filter applies.
    func modify(_ sink: SubscriptionSink, add: SubscriptionFilter, remove: SubscriptionFilter) throws(HomeError) -> UInt64 {
        try withState { state throws(HomeError) -> UInt64 in
            try SubscriptionScope.validate(add, in: state.graph)
            try SubscriptionScope.validate(remove, in: state.graph)
            sink.updateScope { scope in
                scope.remove(remove)
                scope.add(add)
            }
            return state.journal.lastSeq
        }
    }

    /// Current state of everything a scope covers, as sink items: an optional leading
    /// marker, snapshot pages, then SNAPSHOT_END at `seq`.
    static func snapshotItems(for scope: SubscriptionScope, in graph: HomeGraph, seq: UInt64,
                              leading: StreamMarker?) -> [SinkItem] {
        var items: [SinkItem] = leading.map { [.marker($0)] } ?? []
        var page: [Characteristic] = []
        for homeID in graph.homeOrder {
            guard let home = graph.homes[homeID] else { continue }
            for accessoryID in home.accessoryIDs {
                guard let accessory = graph.accessories[accessoryID] else { continue }
                for serviceID in accessory.serviceIDs {
                    guard let service = graph.services[serviceID] else { continue }
                    for characteristicID in service.characteristicIDs {
                        guard let characteristic = graph.characteristics[characteristicID],
                              characteristic.properties.readable, scope.covers(characteristic, in: graph) else { continue }
                        page.append(characteristic)
                        if page.count == SinkItem.snapshotPageSize {
                            items.append(.snapshotPage(page))
                            page = []
                        }
                    }
                }
            }
        }
        if !page.isEmpty { items.append(.snapshotPage(page)) }
        items.append(.marker(StreamMarker(kind: .snapshotEnd, seq: seq)))
        return items
    }

    /// A sink whose queue gave up asks for a fresh snapshot: taken under the lock
    /// together with clearing its queue, so the stream continues gap-free after it.
    func resync(_ sink: SubscriptionSink) -> [SinkItem] {
        withState { state in
            let seq = state.journal.lastSeq
            sink.resynced()
            return Self.snapshotItems(for: sink.scope, in: state.graph, seq: seq, leading: StreamMarker(
                kind: .resync, seq: seq, reason: "subscriber fell behind by more than its queue holds"))
        }
    }

    /// Statistics of every subscription, grouped by connection id.
    func subscriptionStatistics() -> [UInt64: [SubscriptionStats]] {
        withState { state in
            Dictionary(grouping: state.sinks.values, by: \.connectionID).mapValues { $0.map(\.statistics) }
        }
    }
}
