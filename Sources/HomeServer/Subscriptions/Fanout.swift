internal import HomeModel
internal import HomeWire

/// Something in the daemon that sees every event as the store publishes it (the
/// automation engine), as opposed to a subscriber, which sees them later on its
/// connection's event loop.
///
/// Both methods run under the store's lock, in publication order, with the graph
/// the event applies to: they must be quick, must never wait, and must never call
/// back into the store (its lock is not reentrant). Hand anything slow to a task.
protocol HomeEventObserver: AnyObject, Sendable {
    /// Called once, when the observer is added, with the graph at that moment.
    func start(with graph: HomeGraph)

    /// Called for every published event, after it was numbered.
    func observe(_ event: HomeEvent, in graph: HomeGraph)
}

/// Who hears of each published event: the open subscriptions and the in-process
/// observers. A value the store keeps under its lock, so that what a subscriber
/// starts with and the events it is offered never overlap or leave a gap; the
/// store hands it each numbered event and gets back the event loops to wake
/// (`Wake`), which it wakes once the lock is released.
struct Fanout {
    /// The concrete subscriber, so that the publishing loop calls it directly (an
    /// existential call per subscriber per event showed in the fan-out's p99 at a
    /// thousand subscribers).
    typealias Subscriber = SubscriptionStream

    private var subscribers: [UInt64: Subscriber] = [:]
    private var nextSubscriptionID: UInt64 = 1
    private var observers: [ObjectIdentifier: any HomeEventObserver] = [:]

    /// The event loops whose subscriptions have something new to send: woken once
    /// the store's lock is released, never under it.
    struct Wake {
        fileprivate var flushers: [LoopFlusher] = []

        var isEmpty: Bool { flushers.isEmpty }

        func wake() {
            for flusher in flushers { flusher.scheduleFlush() }
        }
    }

    var subscriptionCount: Int { subscribers.count }

    /// Offers a numbered event to every observer and subscriber.
    ///
    /// - Parameters:
    ///   - graphSeq: the sequence number the graph stands at (after every event of
    ///     the commit being published).
    ///   - mergeable, subject: what the commit knew of the event (nil: look it up).
    mutating func publish(
        _ event: HomeEvent, in graph: HomeGraph, graphSeq: UInt64, layoutVersion: UInt64,
        mergeable knownMergeable: Bool?, subject knownSubject: HomeGraph.CharacteristicIndex?, wake: inout Wake
    ) {
        for observer in observers.values { observer.observe(event, in: graph) }
        guard !subscribers.isEmpty else { return }
        let characteristic = knownSubject ?? Self.subject(of: event, in: graph)
        let mergeable = knownMergeable ?? Self.isMergeable(event, in: graph)
        // The first subscriber to queue the event gets a copy; from the second on,
        // they share one object, packed once for all of them.
        var queuedOnce = false
        var shared: PublishedEvent?
        for subscriber in subscribers.values {
            // Written inline, so the closure is not escaping and allocates nothing.
            let flusher = subscriber.offer(
                event, characteristic: characteristic, in: graph, graphSeq: graphSeq,
                layoutVersion: layoutVersion, mergeable: mergeable
            ) {
                guard queuedOnce else {
                    queuedOnce = true
                    return nil
                }
                if let shared { return shared }
                let made = PublishedEvent(event)
                shared = made
                return made
            }
            if let flusher { wake.flushers.append(flusher) }
        }
    }

    /// How a new subscription begins, as the store decided it from its journal.
    enum Opening {
        /// With what it sends first (the SUBSCRIBED marker, then a snapshot or a
        /// resync's snapshot), then changes.
        case items([SinkItem])
        /// With the SUBSCRIBED marker at `since`, then the events it missed.
        case replay(since: UInt64, [HomeEvent])
    }

    /// Adds a subscription, giving it what it starts with in the same step.
    ///
    /// - Parameter make: makes the subscriber, given its id.
    mutating func subscribe(
        opening: Opening, in graph: HomeGraph, graphSeq: UInt64, layoutVersion: UInt64,
        make: (UInt64) -> Subscriber
    ) -> (Subscriber, Wake) {
        let id = nextSubscriptionID
        nextSubscriptionID += 1
        let subscriber = make(id)
        var wake = Wake()
        switch opening {
        case .items(let items):
            subscriber.start(with: items)
        case .replay(let since, let missed):
            subscriber.start(with: [.marker(StreamMarker(kind: .subscribed, seq: since))])
            for event in missed {
                let flusher = subscriber.offer(
                    event, characteristic: Self.subject(of: event, in: graph), in: graph, graphSeq: graphSeq,
                    layoutVersion: layoutVersion, mergeable: Self.isMergeable(event, in: graph)
                ) { nil }
                if let flusher, wake.isEmpty { wake.flushers.append(flusher) }
            }
        }
        subscribers[id] = subscriber
        return (subscriber, wake)
    }

    /// Removes a subscription: it is offered nothing more.
    mutating func unsubscribe(_ subscriptionID: UInt64) {
        subscribers.removeValue(forKey: subscriptionID)
    }

    /// Statistics of every subscription, grouped by connection id.
    func statistics() -> [UInt64: [SubscriptionStats]] {
        Dictionary(grouping: subscribers.values, by: \.connectionID).mapValues { $0.map(\.statistics) }
    }

    /// Adds an observer: it sees `graph` and then every event after it.
    mutating func addObserver(_ observer: any HomeEventObserver, graph: HomeGraph) {
        observer.start(with: graph)
        observers[ObjectIdentifier(observer)] = observer
    }

    mutating func removeObserver(_ observer: any HomeEventObserver) {
        observers[ObjectIdentifier(observer)] = nil
    }

    /// Where a value event's characteristic is in the graph's table, looked up once
    /// for every subscriber's filter.
    static func subject(of event: HomeEvent, in graph: HomeGraph) -> HomeGraph.CharacteristicIndex? {
        guard case .value(let change) = event.body else { return nil }
        return graph.characteristics.index(forKey: change.characteristicID)
    }

    /// Value events of event characteristics (a doorbell press) are occurrences:
    /// never merged with one another, however slow the subscriber.
    static func isMergeable(_ event: HomeEvent, in graph: HomeGraph) -> Bool {
        guard let index = subject(of: event, in: graph) else { return true }
        return !graph.characteristics.values[index].isEventOnly
    }
}
