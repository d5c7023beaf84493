import HomeModel
import HomeWire
import NIOCore
import Synchronization

/// What a subscription stream sends, in order.
enum SinkItem: Equatable {
    case event(QueuedEvent)
    case marker(StreamMarker)
    case snapshotPage([Characteristic])

    static let snapshotPageSize = 256
}

/// One server-streaming subscription: its filter, its bounded queue and the
/// connection it writes to.
///
/// The publisher calls `offer` under the store's lock and never waits; `flush`
/// runs on the connection's event loop, drains the queue into batched frames and
/// stops while the socket is not writable, so a slow reader fills only its own
/// queue, whose policy then applies.
final class SubscriptionSink: Sendable {
    let subscriptionID: UInt64
    let callID: UInt64
    let connectionID: UInt64
    let excludeOwn: Bool
    let journalID: String
    /// `SubscribeResponse { journal_id }` packed once: the head of every message of packed events.
    private let journalField: ByteBuffer
    let queueLimit: Int
    let policy: SlowConsumerPolicy
    /// Rate shaping: at most one value event per characteristic per interval.
    private let minIntervalMs: Int64
    /// Liveness: a heartbeat marker when nothing was sent for this long.
    private let heartbeatMs: Int64
    private let channel: any Channel
    /// The largest frame this connection's hello negotiated.
    private let frameSize: Int
    /// Batches this sink's flushes with the other sinks of its event loop.
    let flusher: LoopFlusher
    private let store: HomeStore
    /// Called on the event loop when the stream ends on the daemon's side.
    private let onEnd: @Sendable (HomeError?) -> Void

    private struct State {
        var scope: SubscriptionScope
        var preamble: [SinkItem] = []
        var queue: SubscriberQueue
        var wakeScheduled = false
        var ended = false
        var overflowed = false
        var sent: UInt64 = 0
        var lastWriteMs: Int64 = 0
        /// Rate shaping: when each characteristic's value was last sent, and the
        /// latest value held back until its interval has passed.
        var lastSentMs: [ObjectID: Int64] = [:]
        var held: [ObjectID: HomeEvent] = [:]
        /// For each held value, the sequence number of the first change merged
        /// into it: a client must resume below the lowest of them.
        var heldSince: [ObjectID: UInt64] = [:]
        var heldFlushScheduled = false
        /// Characteristics whose events are occurrences: never held or merged.
        var occurrenceIDs = Set<ObjectID>()
        var heartbeat: RepeatedTask?
        /// The filter's last verdict on a value event: a stream of changes mostly
        /// repeats the same characteristics, and the verdict holds until the layout
        /// or the filter changes.
        var lastVerdict: (characteristicID: ObjectID, layoutVersion: UInt64, matches: Bool)?

        /// The scope's verdict, from `lastVerdict` when it is about the same
        /// characteristic in the same layout.
        mutating func matches(_ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph,
                              layoutVersion: UInt64) -> Bool {
            guard case .value(let change) = event.body else {
                return scope.matches(event, characteristic: characteristic, in: graph)
            }
            if let last = lastVerdict, last.characteristicID == change.characteristicID, last.layoutVersion == layoutVersion {
                return last.matches
            }
            let verdict = scope.matches(event, characteristic: characteristic, in: graph)
            lastVerdict = (change.characteristicID, layoutVersion, verdict)
            return verdict
        }

        /// Counts the events of a batch about to be written, and when.
        mutating func recordSent(_ items: [SinkItem]) {
            guard !items.isEmpty else { return }
            for item in items {
                if case .event = item { sent += 1 }
            }
            lastWriteMs = currentTimeMs()
        }
    }

    private let state: Mutex<State>

    /// Events per stream message: large enough to amortize a frame, small enough
    /// to stay far below the frame limit.
    static let batchSize = 256

    init(subscriptionID: UInt64, callID: UInt64, connectionID: UInt64, scope: SubscriptionScope,
         request: SubscribeRequest, channel: any Channel, store: HomeStore, queueLimit: Int, frameSize: Int,
         onEnd: @escaping @Sendable (HomeError?) -> Void) {
        self.subscriptionID = subscriptionID
        self.callID = callID
        self.connectionID = connectionID
        self.excludeOwn = request.excludeOwn
        self.journalID = store.journalID
        self.journalField = SubscribeResponse.journalField(store.journalID)
        self.queueLimit = queueLimit
        self.policy = request.policy
        self.minIntervalMs = Int64(request.minIntervalMs)
        self.heartbeatMs = Int64(request.heartbeatMs)
        self.channel = channel
        self.frameSize = frameSize
        self.store = store
        self.flusher = store.flushers.flusher(for: channel.eventLoop)
        self.onEnd = onEnd
        self.state = Mutex(State(scope: scope, queue: SubscriberQueue(limit: queueLimit, policy: request.policy)))
    }

    /// Items to send before anything queued (set once, at registration), and the
    /// heartbeat timer if the subscription asked for one.
    func start(with items: [SinkItem]) {
        state.withLock { $0.preamble = items }
        guard heartbeatMs > 0 else { return }
        let interval = TimeAmount.milliseconds(heartbeatMs)
        let task = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            self?.heartbeatIfQuiet()
        }
        state.withLock { $0.heartbeat = task }
    }

    /// Offers an event: queued when the filter wants it. Runs under the store's
    /// lock with the graph the event applies to. Returns true when the sink was
    /// listed with its loop's flusher and the caller must schedule that flusher.
    ///
    /// - Parameters:
    ///   - characteristic: for a value event, where its characteristic is in the
    ///     graph's table, looked up once by the publisher for all subscribers.
    ///   - layoutVersion: the store's layout version of `graph`; a filter's verdict
    ///     on a characteristic holds while it is unchanged.
    ///   - mergeable: false for occurrences that must never be coalesced.
    ///   - share: called when the event is queued: the publisher's object shared
    ///     with the other subscribers, or nil to queue a copy of the event.
    func offer(_ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph, layoutVersion: UInt64,
               mergeable: Bool = true, share: () -> PublishedEvent? = { nil }) -> Bool {
        if excludeOwn && event.origin.connectionID == connectionID && event.origin.kind == .client { return false }
        return state.withLock { state in
            guard !state.ended, state.matches(event, characteristic: characteristic, in: graph, layoutVersion: layoutVersion)
            else { return false }
            if !mergeable, case .value(let change) = event.body { state.occurrenceIDs.insert(change.characteristicID) }
            let queued = share().map(QueuedEvent.shared) ?? .own(event)
            if state.queue.push(queued, mergeable: mergeable) == .overflow { state.overflowed = true }
            guard !state.wakeScheduled else { return false }
            state.wakeScheduled = true
            return flusher.enqueue(self)
        }
    }

    /// Widens or narrows the filter. Under the store's lock, like `offer`, so the
    /// change takes effect between two events: nothing is lost or doubled.
    func updateScope(_ change: (inout SubscriptionScope) -> Void) {
        state.withLock {
            change(&$0.scope)
            $0.lastVerdict = nil
        }
    }

    var scope: SubscriptionScope { state.withLock { $0.scope } }

    func wake() {
        channel.eventLoop.execute { self.flush() }
    }

    func resynced() {
        state.withLock { $0.queue.resynced() }
    }

    var statistics: SubscriptionStats {
        state.withLock {
            SubscriptionStats(subscriptionID: subscriptionID, callID: callID, policy: policy, queueLimit: UInt32(queueLimit),
                              queueDepth: UInt32($0.queue.depth + $0.held.count), sent: $0.sent, merged: $0.queue.merged,
                              dropped: $0.queue.dropped)
        }
    }

    /// Drains the queue into frames while the socket takes them. Event loop only.
    ///
    /// One lock per batch, which also records the batch as sent (the publisher
    /// takes this lock for every event it offers, so each acquisition here can make
    /// it wait).
    func flush() {
        channel.eventLoop.preconditionInEventLoop()
        var wroteAnything = false
        defer { if wroteAnything { channel.flush() } }
        var moreQueued = true
        while moreQueued && channel.isActive && channel.isWritable {
            let (items, overflowed, needsResync, more, resumeAfter) = state.withLock {
                state -> ([SinkItem], Bool, Bool, Bool, UInt64?) in
                state.wakeScheduled = false
                if state.ended { return ([], false, false, false, nil) }
                if !state.preamble.isEmpty {
                    defer { state.preamble = [] }
                    state.recordSent(state.preamble)
                    return (state.preamble, false, false, true, nil)
                }
                if state.overflowed { return ([], true, false, false, nil) }
                var drained = state.queue.drain(max: Self.batchSize)
                // Values coalesced, a gap marker or a resync may still be pending.
                let more = !state.queue.isEmpty
                var resumeAfter: UInt64?
                if minIntervalMs > 0 {
                    drained = shape(drained, state: &state)
                    // Events after a held value go out before it: say where to resume.
                    resumeAfter = state.heldSince.values.min().map { $0 - 1 }
                }
                // Counted as sent now: they are handed to the channel right after.
                state.recordSent(drained)
                return (drained, false, drained.isEmpty && state.queue.needsResync, more, resumeAfter)
            }
            moreQueued = more
            if overflowed {
                end(with: HomeError(.resourceExhausted,
                                    "subscription \(subscriptionID) closed: its queue of \(queueLimit) events overflowed and its policy is disconnect"))
                return
            }
            if needsResync {
                let batch = store.resync(self)
                guard !batch.isEmpty else { break }
                write(batch, resumeAfter: nil)
                state.withLock { $0.recordSent(batch) }
            } else {
                guard !items.isEmpty else { break }
                write(items, resumeAfter: resumeAfter)
            }
            wroteAnything = true
        }
        if minIntervalMs > 0 { scheduleHeldFlushIfNeeded() }
    }

    /// Rate shaping: value events of a characteristic sent less than the minimum
    /// interval ago are held back (the latest wins, counting what it merged) and sent
    /// when the interval has passed. Held values can arrive after events with higher
    /// sequence numbers, so while one is held every message says where a client
    /// must resume (`resume_after`); occurrences (doorbell presses) are never held.
    private func shape(_ items: [SinkItem], state: inout State) -> [SinkItem] {
        let now = currentTimeMs()
        var out: [SinkItem] = []
        out.reserveCapacity(items.count)
        // Values whose interval has passed go first.
        let due = state.held.filter { now - (state.lastSentMs[$0.key] ?? 0) >= minIntervalMs }
        for (id, event) in due.sorted(by: { $0.value.seq < $1.value.seq }) {
            state.held[id] = nil
            state.heldSince[id] = nil
            state.lastSentMs[id] = now
            out.append(.event(.own(event)))
        }
        for item in items {
            guard case .event(let queued) = item, case .value(let change) = queued.event.body,
                  !state.occurrenceIDs.contains(change.characteristicID) else {
                out.append(item)
                continue
            }
            let id = change.characteristicID
            if state.held[id] == nil, now - (state.lastSentMs[id] ?? 0) >= minIntervalMs {
                state.lastSentMs[id] = now
                out.append(item)
            } else {
                var latest = change
                if let previous = state.held[id], case .value(let old) = previous.body {
                    latest.merged = old.merged + change.merged + 1
                }
                var held = queued.event
                held.body = .value(latest)
                if state.held[id] == nil { state.heldSince[id] = held.seq }
                state.held[id] = held
            }
        }
        return out
    }

    /// Wakes the sink when the earliest held value is due.
    private func scheduleHeldFlushIfNeeded() {
        let delay: Int64? = state.withLock { state in
            guard !state.held.isEmpty, !state.heldFlushScheduled, !state.ended else { return nil }
            state.heldFlushScheduled = true
            let now = currentTimeMs()
            let earliest = state.held.keys.map { (state.lastSentMs[$0] ?? 0) + minIntervalMs }.min() ?? now
            return max(earliest - now, 1)
        }
        guard let delay else { return }
        channel.eventLoop.scheduleTask(in: .milliseconds(delay)) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.heldFlushScheduled = false }
            self.flush()
        }
    }

    /// Sends a heartbeat marker if nothing was written for the heartbeat interval
    /// and nothing is pending: its sequence number says the stream is complete up
    /// to there.
    private func heartbeatIfQuiet() {
        let seq = store.lastSeq
        let quiet = state.withLock { state in
            !state.ended && state.queue.isEmpty && state.preamble.isEmpty && state.held.isEmpty
                && currentTimeMs() - state.lastWriteMs >= heartbeatMs - heartbeatMs / 10
        }
        guard quiet, channel.isActive else { return }
        write([.marker(StreamMarker(kind: .heartbeat, seq: seq))], resumeAfter: nil)
        channel.flush()
    }

    /// Encodes items as stream messages (consecutive events share one message) into
    /// one buffer, written with a single channel write. No message is larger than
    /// the frame size the connection negotiated: a run of events or a snapshot page
    /// that would be is split; a single event that alone would be ends the stream
    /// with RESOURCE_EXHAUSTED, naming it (never a silent loss).
    /// - Parameter resumeAfter: added to every message of events (see `shape`).
    private func write(_ items: [SinkItem], resumeAfter: UInt64?) {
        var out = channel.allocator.buffer(capacity: 256)
        var payload = ByteBuffer()
        var queue = items[...]
        var maxRun = Self.batchSize
        while let first = queue.first {
            payload.clear()
            var taken = 1
            switch first {
            case .event:
                taken = encodeEvents(queue, maxRun: maxRun, resumeAfter: resumeAfter, into: &payload)
            case .marker(let marker):
                SubscribeResponse.encode(journalID: journalID, events: [], marker: marker, into: &payload)
            case .snapshotPage(let page):
                SubscribeResponse.encode(journalID: journalID, events: [], snapshot: page[...], marker: nil, into: &payload)
            }
            if WireFrame.messageFrameLength(callID: callID, payloadLength: payload.readableBytes) > frameSize {
                if case .snapshotPage(let page) = first, page.count > 1 {
                    let half = page.count / 2
                    queue = [.snapshotPage(Array(page[..<half])), .snapshotPage(Array(page[half...]))] + queue.dropFirst()
                    continue
                }
                if taken > 1 {
                    maxRun = taken / 2
                    continue
                }
                channel.write(out, promise: nil)
                let seq: String = if case .event(let queued) = first { "event \(queued.event.seq)" } else { "a message" }
                end(with: HomeError(.resourceExhausted, "subscription \(subscriptionID) closed: \(seq) takes "
                                        + "\(payload.readableBytes) bytes, more than the frame size of \(frameSize) bytes "
                                        + "this connection negotiated; subscribe with a larger max_frame_size"))
                return
            }
            WireFrame.encodeMessage(callID: callID, payload: payload, into: &out)
            queue = queue.dropFirst(taken)
            maxRun = Self.batchSize
        }
        channel.write(out, promise: nil)
    }

    /// Encodes the run of events at the head of `items` (at most `maxRun`) as one
    /// stream message's payload; returns how many it took.
    private func encodeEvents(_ items: ArraySlice<SinkItem>, maxRun: Int, resumeAfter: UInt64?,
                              into payload: inout ByteBuffer) -> Int {
        var run: [QueuedEvent] = []
        run.reserveCapacity(min(maxRun, items.count))
        var allShared = true
        for item in items {
            guard run.count < maxRun, case .event(let queued) = item else { break }
            if case .own = queued { allShared = false }
            run.append(queued)
        }
        if allShared || run.count > 1 && run.contains(where: { if case .shared = $0 { true } else { false } }) {
            // Events the publisher packed for every subscriber, and any of this
            // subscriber's own packed one by one, after the journal id.
            payload.writeImmutableBuffer(journalField)
            for queued in run {
                switch queued {
                case .shared(let published): payload.writeImmutableBuffer(published.encoded.bytes)
                case .own(let event): payload.writeImmutableBuffer(EncodedEvent(event).bytes)
                }
            }
            if let resumeAfter { payload.writeImmutableBuffer(SubscribeResponse.resumeField(resumeAfter)) }
        } else {
            // A lone subscriber's events, packed as a batch.
            SubscribeResponse.encode(journalID: journalID, eventCount: run.count, event: { run[$0].event },
                                     marker: nil, resumeAfter: resumeAfter, into: &payload)
        }
        return run.count
    }

    /// Ends the stream from the daemon's side with a status (nil = OK).
    func end(with error: HomeError?) {
        channel.eventLoop.preconditionInEventLoop()
        let alreadyEnded = stop()
        guard !alreadyEnded else { return }
        store.unsubscribe(self)
        channel.writeAndFlush(WireFrame(callID: callID, body: .status(error)).encoded(), promise: nil)
        onEnd(error)
    }

    /// The client cancelled or went away: stop without writing anything more.
    func cancel() {
        _ = stop()
        store.unsubscribe(self)
    }

    /// Marks the sink ended and releases what it held; returns whether it already was.
    private func stop() -> Bool {
        let (wasEnded, heartbeat) = state.withLock { state -> (Bool, RepeatedTask?) in
            defer {
                state.ended = true
                state.heartbeat = nil
                state.held = [:]
                state.heldSince = [:]
            }
            return (state.ended, state.heartbeat)
        }
        heartbeat?.cancel()
        return wasEnded
    }
}

extension SubscriptionSink: ServerStreamCall {
    func finish(with error: HomeError?) {
        flush()
        end(with: error)
    }

    func resumeWriting() {
        flush()
    }
}
