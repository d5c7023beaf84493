internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore
internal import Synchronization

/// What the store sees of a subscription: the one interface between them, called in
/// one direction (the store offers; a subscription never calls the store).
protocol Subscriber: AnyObject, Sendable {
    var subscriptionID: UInt64 { get }
    var connectionID: UInt64 { get }

    /// Sets what the stream sends before anything offered (once, at registration,
    /// under the store's lock so that nothing falls between the two).
    func start(with items: [SinkItem])

    /// Offers a published event, under the store's lock; never waits.
    ///
    /// - Returns: the flusher to schedule once the lock is released, when the
    ///   subscription was just listed with it.
    func offer(
        _ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph,
        graphSeq: UInt64, layoutVersion: UInt64, mergeable: Bool,
        share: () -> PublishedEvent?
    ) -> LoopFlusher?

    /// Widens or narrows the filter, under the store's lock (between two events).
    func updateScope(_ change: (inout SubscriptionScope) -> Void)

    var statistics: SubscriptionStats { get }
}

/// One server-streaming subscription: it owns its call's writer, the timers and
/// the encoding, and sends what its `SubscriptionState` decides.
///
/// The publisher offers under the store's lock and never waits; `flush()` — the
/// one entry point for sending, run on the connection's event loop — drains the
/// state into batched frames and stops while the socket is not writable, so a slow
/// reader fills only its own queue, whose policy then applies.
final class SubscriptionStream: Subscriber {
    let subscriptionID: UInt64
    let callID: UInt64
    let connectionID: UInt64
    private let writer: any StreamCallWriter
    private let encoder: StreamMessageEncoder
    /// Batches this stream's flushes with the other streams of its event loop.
    let flusher: LoopFlusher
    /// The daemon's sequence number as last published, for heartbeats.
    private let publishedSeq: PublishedSequence
    /// Called once on the event loop when the stream ends, whichever side ended it.
    private let onEnd: @Sendable () -> Void
    private let state: Locked<SubscriptionState>
    private let timers = Locked<Timers>(Timers())

    private struct Timers {
        var heartbeat: RepeatedTask?
        var heldFlushScheduled = false
    }

    /// Events per stream message: large enough to amortize a frame, small enough
    /// to stay far below the frame limit.
    static let batchSize = 256

    init(
        subscriptionID: UInt64, state: SubscriptionState, journalID: String, journalField: ByteBuffer,
        writer: any StreamCallWriter, flusher: LoopFlusher, publishedSeq: PublishedSequence,
        onEnd: @escaping @Sendable () -> Void
    ) {
        self.subscriptionID = subscriptionID
        self.callID = writer.callID
        self.connectionID = state.options.connectionID
        self.writer = writer
        self.encoder = StreamMessageEncoder(journalID: journalID, journalField: journalField)
        self.flusher = flusher
        self.publishedSeq = publishedSeq
        self.onEnd = onEnd
        self.state = Locked(state)
    }

    // MARK: Subscriber

    func start(with items: [SinkItem]) {
        let heartbeatMs = state.withLock { state in
            state.start(with: items)
            return state.options.heartbeatMs
        }
        writer.eventLoop.execute { self.flush() }
        guard heartbeatMs > 0 else { return }
        let interval = TimeAmount.milliseconds(heartbeatMs)
        let task = writer.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            self?.heartbeatIfQuiet()
        }
        timers.withLock { $0.heartbeat = task }
    }

    func offer(
        _ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph,
        graphSeq: UInt64, layoutVersion: UInt64, mergeable: Bool,
        share: () -> PublishedEvent?
    ) -> LoopFlusher? {
        state.withLock { state in
            guard
                state.offer(
                    event, characteristic: characteristic, in: graph, graphSeq: graphSeq,
                    layoutVersion: layoutVersion, mergeable: mergeable, share: share)
            else { return nil }
            return flusher.enqueue(self) ? flusher : nil
        }
    }

    func updateScope(_ change: (inout SubscriptionScope) -> Void) {
        state.withLock { $0.updateScope(change) }
    }

    var statistics: SubscriptionStats {
        state.withLock {
            SubscriptionStats(
                subscriptionID: subscriptionID, callID: callID, policy: $0.options.policy,
                queueLimit: UInt32($0.options.queueLimit), queueDepth: UInt32($0.depth), sent: $0.sent,
                merged: $0.queue.merged, dropped: $0.queue.dropped)
        }
    }

    // MARK: Writing (event loop only)

    /// Sends what is pending while the socket takes it: the one way anything is sent.
    ///
    /// One lock per batch, which also records the batch as sent (the publisher
    /// takes this lock for every event it offers, so each acquisition here can make
    /// it wait).
    func flush() {
        writer.eventLoop.preconditionInEventLoop()
        var wroteAnything = false
        defer { if wroteAnything { writer.flush() } }
        // When the earliest held value is due, learnt under the lock that takes the
        // last batch (one lock per batch, not one more per flush).
        var heldDue: Int64?
        while writer.isWritable {
            let (batch, more, due) = state.withLock { state in
                let now = currentTimeMs()
                let batch = state.nextBatch(max: Self.batchSize, nowMs: now)
                let more = state.hasMore
                return (batch, more, more ? nil : state.heldDueInMs(nowMs: now))
            }
            heldDue = due
            switch batch {
            case .nothing:
                scheduleHeldFlush(in: due)
                return
            case .overflowed:
                let limit = state.withLock { $0.options.queueLimit }
                end(
                    with: HomeError(
                        .resourceExhausted,
                        "subscription \(subscriptionID) closed: its queue of \(limit) "
                            + "events overflowed and its policy is disconnect"))
                return
            case .items(let items, let resumeAfter):
                do throws(HomeError) {
                    try encoder.encode(items, resumeAfter: resumeAfter, to: writer)
                } catch {
                    // What was written before the event that cannot go goes first.
                    end(with: error)
                    return
                }
                wroteAnything = true
            }
            if !more { break }
        }
        // Left with more to send (the socket is full): the flush on writability
        // works it out again.
        scheduleHeldFlush(in: heldDue)
    }

    /// Wakes the stream when the earliest held value is due (`delay` ms from now;
    /// nil: none is held).
    private func scheduleHeldFlush(in delay: Int64?) {
        guard let delay else { return }
        let schedule = timers.withLock { timers in
            defer { timers.heldFlushScheduled = true }
            return !timers.heldFlushScheduled
        }
        guard schedule else { return }
        writer.eventLoop.scheduleTask(in: .milliseconds(delay)) { [weak self] in
            guard let self else { return }
            self.timers.withLock { $0.heldFlushScheduled = false }
            self.flush()
        }
    }

    /// Sends a heartbeat marker if nothing was written for the heartbeat interval
    /// and nothing is pending: its sequence number says the stream is complete up
    /// to there.
    private func heartbeatIfQuiet() {
        // Read before the state: every event up to it was offered already.
        let seq = publishedSeq.value
        let items: [SinkItem]? = state.withLock { state in
            let now = currentTimeMs()
            guard state.isQuiet(nowMs: now) else { return nil }
            let items: [SinkItem] = [.marker(StreamMarker(kind: .heartbeat, seq: seq))]
            state.recordSent(items, nowMs: now)
            return items
        }
        guard let items, writer.isOpen else { return }
        try? encoder.encode(items, resumeAfter: nil, to: writer)
        writer.flush()
    }

    // MARK: Ending

    /// Ends the stream from the daemon's side with a status (nil = OK).
    func end(with error: HomeError?) {
        writer.eventLoop.preconditionInEventLoop()
        guard stop() else { return }
        writer.finish(with: error)
        onEnd()
    }

    /// Marks the stream ended and stops its timers; false when it already was.
    private func stop() -> Bool {
        let wasEnded = state.withLock { $0.end() }
        timers.withLock { timers in
            timers.heartbeat?.cancel()
            timers.heartbeat = nil
        }
        return !wasEnded
    }
}

extension SubscriptionStream: ServerStreamCall {
    /// The client cancelled or went away: stop without writing anything more.
    func cancel() {
        if stop() { onEnd() }
    }

    func finish(with error: HomeError?) {
        flush()
        end(with: error)
    }

    func resumeWriting() {
        flush()
    }
}

/// The daemon's last published sequence number, readable without the store's lock
/// (heartbeats say the stream is complete up to it).
final class PublishedSequence: Sendable {
    private let seq = Atomic<UInt64>(0)

    var value: UInt64 { seq.load(ordering: .acquiring) }

    func publish(_ value: UInt64) {
        seq.store(value, ordering: .releasing)
    }
}
