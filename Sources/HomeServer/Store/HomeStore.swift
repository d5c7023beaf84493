public import HomeModel
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// The daemon's state: the home graph, the event journal and the subscriptions,
/// behind one lock, with an API in the model's terms (writes in, outcomes and
/// sequence numbers out; layout operations applied by `HomeGraph`).
///
/// Every change goes through `commit`, so "apply, number, fan out" is atomic: a
/// subscriber's snapshot and its stream of changes never overlap or leave a gap.
/// The lock is held only for in-memory work (and, for layout changes, the save
/// that makes them durable). Publishing an event costs one append per event loop
/// with subscriptions (and, with more than one subscription, packing it once):
/// every filter, queue, policy, encoding and socket write happens later on each
/// subscription's event loop, so a publisher never waits for a subscriber.
public final class HomeStore: Sendable {
    public let journalID: String
    let startedAtMs: Int64
    let persistence: (any LayoutPersistence)?
    /// Characteristics written since `ValueWriteBehind` last saved them; nil without persistence.
    let writtenValues: WrittenValues?

    struct State {
        var graph: HomeGraph
        var journal: Journal
        /// Every open subscription. The store calls nothing but the `Subscriber`
        /// interface; the concrete type avoids an existential call per subscriber.
        var subscribers: [UInt64: SubscriptionStream] = [:]
        /// The event loops with subscriptions, each handed every published event,
        /// with how many subscriptions each has.
        var fanouts: [ObjectIdentifier: (flusher: LoopFlusher, subscriptions: Int)] = [:]
        /// Routes of value events per characteristic, valid until the layout changes.
        var routes: [ObjectID: EventRoute] = [:]
        /// The last route of a value event: a batch of writes mostly repeats one.
        var lastRoute: EventRoute?
        var nextSubscriptionID: UInt64 = 1
        /// In-process observers (the automation engine); see HomeStore+Observers.swift.
        var observers: [ObjectIdentifier: any HomeEventObserver] = [:]
        /// Changes whenever the graph's layout does (never for values or
        /// reachability): subscription filters cache their verdicts per layout.
        var layoutVersion: UInt64 = 0
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - graph: the initial home graph.
    ///   - journalCapacity: how many recent events are held for resuming clients.
    ///   - persistence: where layout changes are made durable before they are
    ///     acknowledged; nil keeps everything in memory.
    public init(graph: HomeGraph, journalCapacity: Int = 100_000, persistence: (any LayoutPersistence)? = nil) {
        let journal = Journal(id: Journal.makeID(), capacity: journalCapacity)
        self.journalID = journal.id
        self.startedAtMs = currentTimeMs()
        self.persistence = persistence
        self.writtenValues = persistence == nil ? nil : WrittenValues()
        self.state = Mutex(State(graph: graph, journal: journal))
    }

    /// Runs `body` under the lock (for the store's extensions in other files).
    func withState<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        try state.withLock { state throws(E) -> R in try body(&state) }
    }

    /// A consistent copy of the graph and the sequence number it reflects (cheap:
    /// the graph's tables are copy-on-write).
    public func snapshot() -> (graph: HomeGraph, seq: UInt64) {
        state.withLock { ($0.graph, $0.journal.lastSeq) }
    }

    public var lastSeq: UInt64 { state.withLock { $0.journal.lastSeq } }

    public var subscriptionCount: Int { state.withLock { $0.subscribers.count } }

    public var statistics: (homes: Int, accessories: Int, characteristics: Int) {
        state.withLock { ($0.graph.homes.count, $0.graph.accessories.count, $0.graph.characteristics.count) }
    }

    // MARK: The commit primitive

    /// How a change reaches the graph.
    enum CommitKind {
        /// Values and reachability: applied to the graph in place.
        case values
        /// Layout: applied to a copy, which is installed only if the change (and
        /// the save it makes) succeeds; bumps the layout version.
        case layout
    }

    /// A change under way: the graph it edits and the events it will publish.
    struct Transaction {
        var graph: HomeGraph
        /// For a layout commit, the graph as it was (what persistence has stored).
        let before: HomeGraph?
        /// The sequence number the first emitted event gets: nothing else publishes
        /// while a commit holds the lock, so its events' numbers are known ahead.
        let firstSeq: UInt64
        /// The commit's time: its events' time, and the time of the values it stores.
        let nowMs: Int64
        fileprivate(set) var events: [PendingEvent] = []

        struct PendingEvent {
            var body: HomeEvent.Body
            /// Where a value event's characteristic is in the graph's table, when
            /// the change has it at hand (saves a lookup per event).
            var subject: HomeGraph.CharacteristicIndex?
        }

        /// Records an event to publish once the change commits.
        ///
        /// - Returns: the sequence number it will have.
        @discardableResult
        mutating func emit(_ body: HomeEvent.Body, subject: HomeGraph.CharacteristicIndex? = nil) -> UInt64 {
            events.append(PendingEvent(body: body, subject: subject))
            return firstSeq + UInt64(events.count - 1)
        }
    }

    /// What a commit returns: the change's own result and where its events landed.
    struct Committed<Result> {
        var result: Result
        /// The sequence number the commit's first event got (if it had any).
        var firstSeq: UInt64
        /// The daemon's sequence number once the commit took effect.
        var lastSeq: UInt64
        var timeMs: Int64
    }

    /// The one way the graph changes: under the lock, `change` edits the graph and
    /// emits events; then the events are numbered, journaled, shown to observers
    /// and offered to every subscriber; once the lock is released, the event loops
    /// whose subscribers have something to send are woken.
    ///
    /// If `change` throws, nothing is published; for a `.layout` commit the graph
    /// is also left exactly as it was (a `.values` change must throw only before it
    /// edits anything).
    func commit<Result, Failure: Error>(
        _ kind: CommitKind, origin: Origin,
        _ change: (inout Transaction) throws(Failure) -> Result
    ) throws(Failure) -> Committed<Result> {
        let now = currentTimeMs()
        var wake: [LoopFlusher] = []
        let committed = try state.withLock { state throws(Failure) -> Committed<Result> in
            var transaction: Transaction
            let firstSeq = state.journal.lastSeq + 1
            switch kind {
            case .values:
                // Moved out and back rather than copied, so that editing it in place
                // does not copy its tables.
                transaction = Transaction(graph: HomeGraph(), before: nil, firstSeq: firstSeq, nowMs: now)
                swap(&transaction.graph, &state.graph)
            case .layout:
                transaction = Transaction(graph: state.graph, before: state.graph, firstSeq: firstSeq, nowMs: now)
            }
            let result: Result
            do throws(Failure) {
                result = try change(&transaction)
            } catch {
                if kind == .values { swap(&transaction.graph, &state.graph) }
                throw error
            }
            swap(&transaction.graph, &state.graph)
            if kind == .layout {
                state.layoutVersion &+= 1
                state.routes.removeAll(keepingCapacity: true)
                state.lastRoute = nil
            }
            for pending in transaction.events {
                var event = HomeEvent(timeMs: now, origin: origin, body: pending.body)
                Self.publish(&event, in: &state, wake: &wake, subject: pending.subject)
                if case .value(let change) = pending.body { writtenValues?.mark(change.characteristicID) }
            }
            return Committed(result: result, firstSeq: firstSeq, lastSeq: state.journal.lastSeq, timeMs: now)
        }
        for flusher in wake { flusher.scheduleFlush() }
        return committed
    }

    /// Numbers an event, journals it, shows it to observers and hands it to every
    /// event loop with subscriptions. Runs under the lock; the flushers of loops
    /// that must be woken are collected in `wake`, to be scheduled once the lock
    /// is released.
    private static func publish(
        _ event: inout HomeEvent, in state: inout State, wake: inout [LoopFlusher],
        subject: HomeGraph.CharacteristicIndex?
    ) {
        state.journal.append(&event)
        for observer in state.observers.values { observer.observe(event, in: state.graph) }
        guard !state.subscribers.isEmpty else { return }
        // Packed here, once, when more than one subscription may queue it; a lone
        // subscription packs its events in batches on its own loop.
        let published = PublishedEvent(
            event: event, route: route(of: event, in: &state, subject: subject),
            packed: state.subscribers.count > 1 ? PackedEvent(event) : nil)
        for fanout in state.fanouts.values where fanout.subscriptions > 0 {
            if fanout.flusher.deliver(published) { wake.append(fanout.flusher) }
        }
    }

    /// Where an event happened, for the subscriptions' filters (value events'
    /// routes come from the cache while the layout stands).
    static func route(
        of event: HomeEvent, in state: inout State, subject: HomeGraph.CharacteristicIndex? = nil
    ) -> EventRoute {
        switch event.body {
        case .value(let change):
            if let route = state.lastRoute, route.characteristicID == change.characteristicID { return route }
            if let route = state.routes[change.characteristicID] {
                state.lastRoute = route
                return route
            }
            guard let index = subject ?? state.graph.characteristics.index(forKey: change.characteristicID) else {
                return .unknownCharacteristic(layoutVersion: state.layoutVersion)
            }
            let route = EventRoute(
                characteristic: state.graph.characteristics.values[index], in: state.graph,
                layoutVersion: state.layoutVersion)
            state.routes[change.characteristicID] = route
            state.lastRoute = route
            return route
        case .reachability(let accessoryID, _):
            return EventRoute(accessoryID: accessoryID, in: state.graph, layoutVersion: state.layoutVersion)
        case .layout(let change):
            return EventRoute(
                accessoryID: change.object == .accessory ? change.objectID : 0, in: state.graph,
                layoutVersion: state.layoutVersion)
        case .primaryHome, .actionSetExecuted, .triggerFired:
            return EventRoute(accessoryID: 0, in: state.graph, layoutVersion: state.layoutVersion)
        }
    }
}

func currentTimeMs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}
