internal import HomeModel
internal import HomeWire

/// Where a new subscription's stream starts.
enum SubscriptionStart: Sendable {
    /// With changes from now on.
    case live
    /// With the current state, then changes.
    case snapshot
    /// With the events after `seq` of journal `journalID`; a fresh snapshot after a
    /// resync marker when they are no longer held. `stored`: those of them read
    /// from the stored history beforehand (outside the lock), for a resume from
    /// further back than memory holds.
    case resume(after: UInt64, journalID: String, stored: [HomeEvent] = [])
}

extension HomeStore {
    /// Registers a subscription. What it must send first (the SUBSCRIBED marker, a
    /// resume's replay or a snapshot) is given to it atomically with registration,
    /// so no event falls between them.
    ///
    /// - Parameter make: makes the subscriber, given its id and its compiled scope.
    func subscribe(
        _ filter: SubscriptionFilter, start: SubscriptionStart,
        make: (UInt64, SubscriptionScope) -> Fanout.Subscriber
    ) throws(HomeError) -> Fanout.Subscriber {
        let (subscriber, wake) = try withState { state throws(HomeError) -> (Fanout.Subscriber, Fanout.Wake) in
            try SubscriptionScope.validate(filter, in: state.core.graph)
            let scope = SubscriptionScope(filter)
            return state.fanout.subscribe(
                opening: opening(for: scope, start: start, state: state), in: state.core.graph,
                graphSeq: state.core.journal.lastSeq, layoutVersion: state.core.layoutVersion
            ) { id in make(id, scope) }
        }
        wake.wake()
        return subscriber
    }

    /// How a subscription starting now begins: from now on, with a snapshot, or
    /// with what it missed — or, when the journal no longer holds that, a resync
    /// marker saying why and a fresh snapshot.
    private func opening(for scope: SubscriptionScope, start: SubscriptionStart, state: State) -> Fanout.Opening {
        let lastSeq = state.core.journal.lastSeq
        let subscribed = SinkItem.marker(StreamMarker(kind: .subscribed, seq: lastSeq))
        switch start {
        case .live:
            return .items([subscribed])
        case .snapshot:
            return .items(
                [subscribed] + SubscriptionSnapshot.items(for: scope, in: state.core.graph, seq: lastSeq, leading: nil))
        case .resume(let since, let journalID, let stored):
            if journalID == state.core.journal.id,
                let missed = state.core.journal.events(after: since)
                    ?? Self.stitch(stored, after: since, to: state.core.journal)
            {
                return .replay(since: since, missed)
            }
            let reason =
                if journalID != state.core.journal.id {
                    "journal changed (was \(journalID.isEmpty ? "unknown" : journalID), now \(state.core.journal.id))"
                } else if since > lastSeq {
                    "sequence number \(since) was never issued by journal \(state.core.journal.id), which is at \(lastSeq)"
                } else if history != nil {
                    "events after \(since) were purged from the history or are more than a resume "
                        + "replays (\(Self.maxStoredReplay)); read them with ReadHistory"
                } else {
                    state.core.journal.unheldReason(after: since)
                }
            return .items(
                [subscribed]
                    + SubscriptionSnapshot.items(
                        for: scope, in: state.core.graph, seq: lastSeq,
                        leading: StreamMarker(kind: .resync, seq: lastSeq, reason: reason)))
        }
    }

    /// Removes a subscription; once this returns it is offered nothing more.
    func unsubscribe(_ subscriptionID: UInt64) {
        withState { $0.fanout.unsubscribe(subscriptionID) }
    }

    /// Widens or narrows an open subscription between two events.
    ///
    /// - Returns: the sequence number after which the new filter applies.
    func modify(_ subscriber: any Subscriber, add: SubscriptionFilter, remove: SubscriptionFilter) throws(HomeError)
        -> UInt64
    {
        try withState { state throws(HomeError) -> UInt64 in
            try SubscriptionScope.validate(add, in: state.core.graph)
            try SubscriptionScope.validate(remove, in: state.core.graph)
            subscriber.updateScope { scope in
                scope.remove(remove)
                scope.add(add)
            }
            return state.core.journal.lastSeq
        }
    }

    /// Statistics of every subscription, grouped by connection id.
    func subscriptionStatistics() -> [UInt64: [SubscriptionStats]] {
        withState { $0.fanout.statistics() }
    }

    /// Adds an in-process observer. It sees the graph and then every event after
    /// it, with no gap between the two.
    func addObserver(_ observer: any HomeEventObserver) {
        withState { state in state.fanout.addObserver(observer, graph: state.core.graph) }
    }

    /// Removes an observer; once this returns, it sees nothing more.
    func removeObserver(_ observer: any HomeEventObserver) {
        withState { $0.fanout.removeObserver(observer) }
    }
}

extension HomeStore {
    /// The most events a resume replays from the stored history.
    static let maxStoredReplay = 100_000

    /// Events read from the stored history, joined to those the journal holds in
    /// memory: nil unless they begin right after `since`, follow one another with
    /// no number missing (a purge leaves holes), and reach what memory holds.
    static func stitch(_ stored: [HomeEvent], after since: UInt64, to journal: Journal) -> [HomeEvent]? {
        guard let first = stored.first, let last = stored.last, first.seq == since + 1,
            last.seq - first.seq + 1 == UInt64(stored.count), let rest = journal.events(after: last.seq)
        else { return nil }
        return stored + rest
    }

    /// For a resume from further back than the journal holds in memory: the stored
    /// events after `seq` up to where memory takes over. Empty when memory holds
    /// them, there is no stored history, or there are more than `maxStoredReplay`.
    func storedEventsForResume(after seq: UInt64) throws(HomeError) -> [HomeEvent] {
        guard let history else { return [] }
        let memoryFrom = withState { $0.core.journal.firstHeldSeq }
        guard seq + 1 < memoryFrom else { return [] }
        var events: [HomeEvent] = []
        var query = HistoryQuery(afterSeq: seq, beforeSeq: memoryFrom, commitLimit: 1024)
        while true {
            let page = try history.storage.events(query)
            events.append(contentsOf: page.events)
            if events.count > Self.maxStoredReplay { return [] }
            guard page.truncated, let last = page.events.last else { return events }
            query.afterSeq = last.seq
        }
    }
}
