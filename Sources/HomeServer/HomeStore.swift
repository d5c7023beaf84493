import HomeModel
import HomeWire
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's state: the home graph, the event journal and the subscriptions,
/// behind one lock. Every change goes through here, so "apply, number, fan out"
/// is atomic: a subscriber's snapshot and its stream of changes never overlap or
/// leave a gap.
///
/// The lock is held only for in-memory work; encoding and socket writes happen on
/// each subscriber's event loop, so a publisher never waits for a subscriber.
public final class HomeStore: Sendable {
    public let journalID: String
    /// Per event loop, the sinks waiting to flush (see `LoopFlusher`).
    let flushers = LoopFlushers()
    let startedAtMs: Int64

    struct State {
        var graph: HomeGraph
        var journal: Journal
        var sinks: [UInt64: SubscriptionSink] = [:]
        var nextSubscriptionID: UInt64 = 1
        /// In-process observers (the automation engine); see HomeStore+Observers.swift.
        var observers: [ObjectIdentifier: any HomeEventObserver] = [:]
        /// Changes whenever the graph's layout does (never for values or
        /// reachability): subscription filters cache their verdicts per layout.
        var layoutVersion: UInt64 = 0
    }

    private let state: Mutex<State>

    /// Runs `body` under the lock (for the store's extensions in other files).
    func withState<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        try state.withLock { state throws(E) -> R in try body(&state) }
    }

    /// Applies a change to the graph in place (values and reachability: no layout
    /// persistence) and publishes the events it returns, all under the lock.
    func publishing(origin: Origin, _ change: (inout HomeGraph) throws(HomeError) -> [HomeEvent.Body]) throws(HomeError) -> [HomeEvent] {
        let now = currentTimeMs()
        var wake: [LoopFlusher] = []
        let events = try state.withLock { state throws(HomeError) -> [HomeEvent] in
            let bodies = try change(&state.graph)
            var published: [HomeEvent] = []
            for body in bodies {
                var event = HomeEvent(timeMs: now, origin: origin, body: body)
                Self.publish(&event, in: &state, wake: &wake)
                published.append(event)
                // Values set here (scenes, automation) are saved behind like any write.
                if case .value(let change) = body { writtenValues?.mark(change.characteristicID) }
            }
            return published
        }
        for flusher in wake { flusher.scheduleFlush() }
        return events
    }

    private let persistence: (any LayoutPersistence)?
    /// Characteristics written since `ValueWriteBehind` last saved them; nil without persistence.
    let writtenValues: WrittenValues?

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

    // MARK: Layout

    /// Applies a layout change atomically: `change` edits a copy of the graph and
    /// returns the events it produced; the copy is made durable, then installed,
    /// then the events are numbered and fanned out. If `change` or persistence
    /// throws, nothing changes and nothing is published.
    ///
    /// - Returns: the events as published (with their sequence numbers) and the
    ///   sequence number after them.
    @discardableResult
    public func changeLayout(
        origin: Origin,
        _ change: (inout HomeGraph) throws(HomeError) -> [HomeEvent.Body]
    ) throws(HomeError) -> (events: [HomeEvent], seq: UInt64) {
        let now = currentTimeMs()
        var wake: [LoopFlusher] = []
        let result = try state.withLock { state throws(HomeError) -> (events: [HomeEvent], seq: UInt64) in
            var updated = state.graph
            let bodies = try change(&updated)
            if let persistence {
                try persistence.saveLayout(from: state.graph, to: updated)
            }
            state.graph = updated
            state.layoutVersion &+= 1
            var published: [HomeEvent] = []
            for body in bodies {
                var event = HomeEvent(timeMs: now, origin: origin, body: body)
                Self.publish(&event, in: &state, wake: &wake)
                published.append(event)
            }
            return (published, state.journal.lastSeq)
        }
        for flusher in wake { flusher.scheduleFlush() }
        return result
    }

    /// A consistent copy of the graph and the sequence number it reflects (cheap:
    /// the graph's tables are copy-on-write).
    public func snapshot() -> (graph: HomeGraph, seq: UInt64) {
        state.withLock { ($0.graph, $0.journal.lastSeq) }
    }

    public var lastSeq: UInt64 { state.withLock { $0.journal.lastSeq } }

    public var subscriptionCount: Int { state.withLock { $0.sinks.count } }

    // MARK: Reads and writes

    public func read(_ request: ReadCharacteristicsRequest) -> ReadCharacteristicsResponse {
        state.withLock { state in
            let reads = request.characteristicIDs.map { id -> CharacteristicRead in
                guard let characteristic = state.graph.characteristics[id] else {
                    return CharacteristicRead(characteristicID: id, value: nil, lastUpdatedMs: 0,
                                              error: HomeError(.notFound, "no characteristic with id \(id)"))
                }
                guard characteristic.properties.readable else {
                    return CharacteristicRead(
                        characteristicID: id, value: nil, lastUpdatedMs: 0,
                        error: HomeError(.invalidArgument, "characteristic \(id) (\(characteristic.type.name)) is not readable"))
                }
                return CharacteristicRead(characteristicID: id, value: characteristic.value,
                                          lastUpdatedMs: characteristic.lastUpdatedMs)
            }
            return ReadCharacteristicsResponse(reads: reads, seq: state.journal.lastSeq)
        }
    }

    /// Validates and applies a batch of writes, numbering and fanning out the value
    /// events they produce.
    ///
    /// - Parameter enforceWritable: false for providers and the simulator, which set
    ///   read-only values (a sensor's reading) that clients may not.
    public func write(_ request: WriteCharacteristicsRequest, origin: Origin,
                      enforceWritable: Bool = true) -> WriteCharacteristicsResponse {
        let now = currentTimeMs()
        var wake: [LoopFlusher] = []
        let response = state.withLock { state -> WriteCharacteristicsResponse in
            // Validate everything first, so an atomic batch fails whole and a
            // validate-only batch changes nothing.
            var validated: [Result<CheckedWrite, HomeError>] = []
            validated.reserveCapacity(request.writes.count)
            for write in request.writes {
                do throws(HomeError) {
                    if let checked = try state.graph.checkWrite(write.value, to: write.characteristicID,
                                                                enforceWritable: enforceWritable) {
                        validated.append(.success(checked))
                    } else {
                        // Not a characteristic: validateWrite names what the id is instead.
                        _ = try state.graph.validateWrite(write.value, to: write.characteristicID, enforceWritable: enforceWritable)
                        validated.append(.failure(HomeError(.notFound, "no characteristic with id \(write.characteristicID)")))
                    }
                } catch {
                    validated.append(.failure(error))
                }
            }
            let anyFailed = validated.contains { if case .failure = $0 { true } else { false } }
            if request.validateOnly || (request.atomic && anyFailed) {
                let results = zip(request.writes, validated).map { write, outcome in
                    switch outcome {
                    case .failure(let error):
                        return WriteResult(characteristicID: write.characteristicID, error: error)
                    case .success:
                        let error = request.validateOnly ? nil : HomeError(
                            .aborted, "not applied: another write of this atomic batch was invalid")
                        return WriteResult(characteristicID: write.characteristicID, error: error)
                    }
                }
                return WriteCharacteristicsResponse(results: results, seq: state.journal.lastSeq)
            }
            var results: [WriteResult] = []
            results.reserveCapacity(request.writes.count)
            for (write, outcome) in zip(request.writes, validated) {
                let checked: CheckedWrite
                switch outcome {
                case .failure(let error):
                    results.append(WriteResult(characteristicID: write.characteristicID, error: error))
                    continue
                case .success(let value):
                    checked = value
                }
                guard let changed = state.graph.store(checked, nowMs: now) else {
                    results.append(WriteResult(characteristicID: write.characteristicID))
                    continue
                }
                var event = HomeEvent(timeMs: now, origin: origin, body: .value(ValueChange(
                    accessoryID: checked.accessoryID, serviceID: checked.serviceID,
                    characteristicID: write.characteristicID, value: changed)))
                Self.publish(&event, in: &state, wake: &wake, mergeable: !checked.isOccurrence, subject: checked.index)
                writtenValues?.mark(write.characteristicID)
                results.append(WriteResult(characteristicID: write.characteristicID, seq: event.seq))
            }
            return WriteCharacteristicsResponse(results: results, seq: state.journal.lastSeq)
        }
        for flusher in wake { flusher.scheduleFlush() }
        return response
    }

    /// Numbers an event, journals it and offers it to every matching subscriber.
    /// Runs under the lock; the flushers of loops whose sinks now have something to
    /// send are collected in `wake`, to be scheduled once the lock is released.
    ///
    /// - Parameter knownSubject: where a value event's characteristic is in the
    ///   graph's table, when the caller has it at hand.
    private static func publish(_ event: inout HomeEvent, in state: inout State, wake: inout [LoopFlusher],
                                mergeable knownMergeable: Bool? = nil, subject knownSubject: HomeGraph.CharacteristicIndex? = nil) {
        state.journal.append(&event)
        for observer in state.observers.values { observer.observe(event, in: state.graph) }
        guard !state.sinks.isEmpty else { return }
        let characteristic = knownSubject ?? subject(of: event, in: state.graph)
        let layoutVersion = state.layoutVersion
        let mergeable = knownMergeable ?? isMergeable(event, in: state.graph)
        // The first subscriber to queue the event gets a copy; from the second on,
        // they share one object, packed once for all of them.
        var queuedOnce = false
        var shared: PublishedEvent?
        let numbered = event
        for sink in state.sinks.values {
            // Written inline, so the closure is not escaping and allocates nothing.
            let flusherIdle = sink.offer(event, characteristic: characteristic, in: state.graph, layoutVersion: layoutVersion,
                                         mergeable: mergeable) {
                guard queuedOnce else {
                    queuedOnce = true
                    return nil
                }
                if let shared { return shared }
                let made = PublishedEvent(numbered)
                shared = made
                return made
            }
            if flusherIdle { wake.append(sink.flusher) }
        }
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

    // MARK: Subscriptions

    /// Registers a subscription. What it must send first (resume replay, snapshot,
    /// markers) is queued in the sink atomically with registration, so no event
    /// falls between them.
    func subscribe(_ request: SubscribeRequest, connectionID: UInt64, callID: UInt64,
                   makeSink: (UInt64, SubscriptionScope) -> SubscriptionSink) throws(HomeError) -> SubscriptionSink {
        var scheduleFlusher = false
        let sink = try state.withLock { state throws(HomeError) -> SubscriptionSink in
            try SubscriptionScope.validate(request.filter, in: state.graph)
            let scope = SubscriptionScope(request.filter)
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            let sink = makeSink(id, scope)
            let lastSeq = state.journal.lastSeq
            if let since = request.sinceSeq {
                if request.journalID == state.journal.id, let missed = state.journal.events(after: since) {
                    sink.start(with: [.marker(StreamMarker(kind: .subscribed, seq: since))])
                    for event in missed where sink.offer(event, characteristic: Self.subject(of: event, in: state.graph),
                                                         in: state.graph, layoutVersion: state.layoutVersion,
                                                         mergeable: Self.isMergeable(event, in: state.graph)) {
                        // Listed with its loop's flusher, which must run (after the lock).
                        scheduleFlusher = true
                    }
                } else {
                    let reason = request.journalID == state.journal.id
                        ? "events after \(since) are no longer held (journal keeps \(state.journal.capacity))"
                        : "journal changed (was \(request.journalID.isEmpty ? "unknown" : request.journalID), now \(state.journal.id))"
                    sink.start(with: Self.snapshotItems(for: scope, in: state.graph, seq: lastSeq,
                                                        leading: StreamMarker(kind: .resync, seq: lastSeq, reason: reason)))
                }
            } else if request.snapshot {
                sink.start(with: Self.snapshotItems(for: scope, in: state.graph, seq: lastSeq, leading: nil))
            } else {
                sink.start(with: [.marker(StreamMarker(kind: .subscribed, seq: lastSeq))])
            }
            state.sinks[id] = sink
            return sink
        }
        if scheduleFlusher { sink.flusher.scheduleFlush() }
        sink.wake()
        return sink
    }

    func unsubscribe(_ sink: SubscriptionSink) {
        _ = state.withLock { $0.sinks.removeValue(forKey: sink.subscriptionID) }
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
        state.withLock { state in
            let seq = state.journal.lastSeq
            sink.resynced()
            return Self.snapshotItems(for: sink.scope, in: state.graph, seq: seq, leading: StreamMarker(
                kind: .resync, seq: seq, reason: "subscriber fell behind by more than its queue holds"))
        }
    }

    public var statistics: (homes: Int, accessories: Int, characteristics: Int) {
        state.withLock { ($0.graph.homes.count, $0.graph.accessories.count, $0.graph.characteristics.count) }
    }
}

func currentTimeMs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}
