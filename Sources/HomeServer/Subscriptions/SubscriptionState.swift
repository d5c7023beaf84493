internal import HomeModel

/// Everything one subscription decides, as a value with no I/O: its scope (with
/// the filter's cached verdict), its bounded queue and policy, rate shaping, what it
/// must send first, and its figures. `SubscriptionStream` holds it under a lock and
/// does the writing; tests drive it directly.
struct SubscriptionState {
    /// What a subscription was asked for, fixed when it opens.
    struct Options {
        var connectionID: UInt64
        var excludeOwn: Bool
        var policy: SlowConsumerPolicy
        var queueLimit: Int
        var queueByteLimit: Int
        /// At most one value event per characteristic per interval; 0: no limit.
        var minIntervalMs: Int64
        /// A heartbeat marker when nothing was sent for this long; 0: none.
        var heartbeatMs: Int64
    }

    let options: Options
    private(set) var scope: SubscriptionScope
    private(set) var queue: SubscriberQueue
    /// Items to send before anything queued: the first marker, a snapshot, a replay.
    private var preamble: [SinkItem] = []
    /// A resync is due: the graph, and the sequence number it stands at, to send
    /// as a fresh snapshot before what was queued after it.
    private var resyncFrom: (graph: HomeGraph, seq: UInt64)?
    private(set) var ended = false
    /// The policy is disconnect and the queue overflowed.
    private(set) var overflowed = false
    /// Listed with its loop's flusher and not yet flushed.
    var wakeScheduled = false
    private(set) var sent: UInt64 = 0
    private var lastWriteMs: Int64 = 0
    /// Rate shaping: when each characteristic's value was last sent, the latest
    /// value held back until its interval has passed, and for each held value the
    /// sequence number of the first change merged into it (a client must resume
    /// below the lowest of them).
    private var lastSentMs: [ObjectID: Int64] = [:]
    private var held: [ObjectID: HomeEvent] = [:]
    private var heldSince: [ObjectID: UInt64] = [:]
    /// Characteristics whose events are occurrences: never held or merged.
    private var occurrenceIDs = Set<ObjectID>()
    /// The filter's last verdict on a value event: a stream of changes mostly
    /// repeats the same characteristics, and the verdict holds until the layout or
    /// the filter changes.
    private var lastVerdict: (characteristicID: ObjectID, layoutVersion: UInt64, matches: Bool)?

    init(scope: SubscriptionScope, options: Options) {
        self.options = options
        self.scope = scope
        self.queue = SubscriberQueue(
            limit: options.queueLimit, byteLimit: options.queueByteLimit,
            policy: options.policy)
    }

    // MARK: The publisher's side (under the store's lock)

    /// Sets what is sent before anything queued (once, at registration).
    mutating func start(with items: [SinkItem]) {
        preamble = items
    }

    /// Offers a published event.
    ///
    /// - Parameters:
    ///   - characteristic: for a value event, where its characteristic is in the
    ///     graph's table, looked up once by the publisher for all subscribers.
    ///   - graph: the graph after the commit that published the event, which
    ///     stands at `graphSeq`; a resync sends it.
    ///   - layoutVersion: the store's layout version of `graph`.
    ///   - mergeable: false for occurrences that must never be coalesced.
    ///   - share: called when the event is queued: the publisher's object shared
    ///     with the other subscribers, or nil to queue a copy of the event.
    /// - Returns: true when the subscription must be listed with its loop's flusher.
    mutating func offer(
        _ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph,
        graphSeq: UInt64, layoutVersion: UInt64, mergeable: Bool,
        share: () -> PublishedEvent?
    ) -> Bool {
        guard !ended, matches(event, characteristic: characteristic, in: graph, layoutVersion: layoutVersion) else {
            return false
        }
        // Already in the pending resync's snapshot.
        if let resyncFrom, event.seq <= resyncFrom.seq { return false }
        if !mergeable, case .value(let change) = event.body { occurrenceIDs.insert(change.characteristicID) }
        let shared = share()
        let queued = shared.map(QueuedEvent.shared) ?? .own(event)
        // The shared object's size is worked out once for every subscriber; an own
        // copy's from the event at hand (out of `queued`, it is copied once more).
        let size = shared?.approximateSize ?? event.approximateSize
        switch queue.push(queued, size: size, mergeable: mergeable) {
        case .queued, .absorbed: break
        case .overflow: overflowed = true
        case .resync: resyncFrom = (graph, graphSeq)
        }
        guard !wakeScheduled else { return false }
        wakeScheduled = true
        return true
    }

    /// Widens or narrows the filter, between two events.
    mutating func updateScope(_ change: (inout SubscriptionScope) -> Void) {
        change(&scope)
        lastVerdict = nil
    }

    /// The scope's verdict, from `lastVerdict` when it is about the same
    /// characteristic in the same layout.
    private mutating func matches(
        _ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph,
        layoutVersion: UInt64
    ) -> Bool {
        if options.excludeOwn && event.origin.kind == .client && event.origin.connectionID == options.connectionID {
            return false
        }
        guard case .value(let change) = event.body else {
            return scope.matches(event, characteristic: characteristic, in: graph)
        }
        if let last = lastVerdict, last.characteristicID == change.characteristicID, last.layoutVersion == layoutVersion
        {
            return last.matches
        }
        let verdict = scope.matches(event, characteristic: characteristic, in: graph)
        lastVerdict = (change.characteristicID, layoutVersion, verdict)
        return verdict
    }

    // MARK: The writer's side (on the connection's event loop)

    /// What to send next.
    enum Batch: Equatable {
        /// Items, with the resume point every message of events must carry while
        /// a value is held back.
        case items([SinkItem], resumeAfter: UInt64?)
        /// The policy is disconnect and the queue overflowed: end the stream.
        case overflowed
        case nothing
    }

    /// Takes the next batch to send, at most `max` queued events, counting them as
    /// sent (they are handed to the call's writer right after).
    mutating func nextBatch(max: Int, nowMs: Int64) -> Batch {
        wakeScheduled = false
        if ended { return .nothing }
        if !preamble.isEmpty {
            defer { preamble = [] }
            recordSent(preamble, nowMs: nowMs)
            return .items(preamble, resumeAfter: nil)
        }
        if overflowed { return .overflowed }
        if let (graph, seq) = resyncFrom {
            resyncFrom = nil
            queue.resynced()
            let items = SubscriptionSnapshot.items(
                for: scope, in: graph, seq: seq,
                leading: StreamMarker(
                    kind: .resync, seq: seq, reason: "subscriber fell behind by more than its queue holds"))
            recordSent(items, nowMs: nowMs)
            return .items(items, resumeAfter: nil)
        }
        var drained = queue.drain(max: max)
        var resumeAfter: UInt64?
        if options.minIntervalMs > 0 {
            drained = shape(drained, nowMs: nowMs)
            // Events after a held value go out before it: say where to resume.
            resumeAfter = heldSince.values.min().map { $0 - 1 }
        }
        guard !drained.isEmpty else { return .nothing }
        recordSent(drained, nowMs: nowMs)
        return .items(drained, resumeAfter: resumeAfter)
    }

    /// Whether more is waiting after the last batch (a flush goes on while it is).
    var hasMore: Bool {
        !ended && (!preamble.isEmpty || !queue.isEmpty || resyncFrom != nil || overflowed)
    }

    /// Rate shaping: value events of a characteristic sent less than the minimum
    /// interval ago are held back (the latest wins, counting what it merged) and sent
    /// when the interval has passed. Occurrences (doorbell presses) are never held.
    private mutating func shape(_ items: [SinkItem], nowMs now: Int64) -> [SinkItem] {
        let interval = options.minIntervalMs
        var out: [SinkItem] = []
        out.reserveCapacity(items.count)
        // Values whose interval has passed go first.
        let due = held.filter { now - (lastSentMs[$0.key] ?? 0) >= interval }
        for (id, event) in due.sorted(by: { $0.value.seq < $1.value.seq }) {
            held[id] = nil
            heldSince[id] = nil
            lastSentMs[id] = now
            out.append(.event(.own(event)))
        }
        for item in items {
            guard case .event(let queued) = item, case .value(let change) = queued.event.body,
                !occurrenceIDs.contains(change.characteristicID)
            else {
                out.append(item)
                continue
            }
            let id = change.characteristicID
            if held[id] == nil, now - (lastSentMs[id] ?? 0) >= interval {
                lastSentMs[id] = now
                out.append(item)
            } else {
                var latest = change
                if let previous = held[id], case .value(let old) = previous.body {
                    latest.merged = old.merged + change.merged + 1
                }
                var event = queued.event
                event.body = .value(latest)
                if held[id] == nil { heldSince[id] = event.seq }
                held[id] = event
            }
        }
        return out
    }

    /// How long until the earliest held value is due; nil when none is held.
    func heldDueInMs(nowMs: Int64) -> Int64? {
        guard !ended, !held.isEmpty else { return nil }
        let earliest = held.keys.map { (lastSentMs[$0] ?? 0) + options.minIntervalMs }.min() ?? nowMs
        return max(earliest - nowMs, 1)
    }

    /// Whether a heartbeat is due: nothing is pending and nothing was written for
    /// (nearly) the heartbeat interval.
    func isQuiet(nowMs: Int64) -> Bool {
        let interval = options.heartbeatMs
        return interval > 0 && !hasMore && held.isEmpty && nowMs - lastWriteMs >= interval - interval / 10
    }

    mutating func recordSent(_ items: [SinkItem], nowMs: Int64) {
        guard !items.isEmpty else { return }
        // By index: binding each item would copy its event.
        for index in items.indices where items[index].isEvent { sent += 1 }
        lastWriteMs = nowMs
    }

    /// Marks the subscription ended and releases what it held; returns whether it
    /// already was.
    mutating func end() -> Bool {
        defer {
            ended = true
            held = [:]
            heldSince = [:]
            preamble = []
            resyncFrom = nil
        }
        return ended
    }

    /// Pending events, held values included, for statistics.
    var depth: Int { queue.depth + held.count }
}
