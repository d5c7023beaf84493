internal import NIOCore
internal import Synchronization

/// The fan-out of one event loop: the subscriptions open on it, the events
/// published for them, and the one task that hands those events to every
/// subscription and flushes the ones with something to send.
///
/// The publisher's cost per change is one append per event loop, whatever the
/// number of subscribers: filtering, queueing, the slow-consumer policies and the
/// encoding all happen here, on the loop, outside the store's lock, and in
/// parallel on every loop. A change fanned out to a thousand subscribers costs one
/// task (and at most one cross-thread wakeup) per loop, and no per-change
/// allocation: the pending lists are double-buffered and keep their capacity.
/// Flushers live as long as the store: one per event loop.
final class LoopFlusher: Sendable {
    let eventLoop: any EventLoop

    private struct Pending {
        /// Events published since the last flush, in sequence order.
        var inbox: [PublishedEvent] = []
        var spareInbox: [PublishedEvent] = []
        var taskScheduled = false
    }

    private let pending = Mutex(Pending())
    /// The subscriptions open on this loop, each offered every event published.
    private let subscriptions = Mutex<[SubscriptionStream]>([])

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Adds a subscription (under the store's lock, with its registration).
    func register(_ stream: SubscriptionStream) {
        subscriptions.withLock { $0.append(stream) }
    }

    func unregister(_ stream: SubscriptionStream) {
        subscriptions.withLock { streams in streams.removeAll { $0 === stream } }
    }

    /// Hands a published event to this loop's subscriptions (under the store's lock,
    /// in sequence order). Returns true when the caller must `scheduleFlush()` once
    /// it has released its lock (no flush task is pending yet).
    func deliver(_ event: PublishedEvent) -> Bool {
        pending.withLock { pending in
            pending.inbox.append(event)
            guard !pending.taskScheduled else { return false }
            pending.taskScheduled = true
            return true
        }
    }

    func scheduleFlush() {
        eventLoop.execute { self.flushAll() }
    }

    /// One round: every subscription of the loop is handed what was published and
    /// flushed. Events published during the round are picked up before each next
    /// subscription's turn (a subscription late in a long round sends what came
    /// since it started); those the earlier ones missed go round again.
    private func flushAll() {
        var events = takeInbox()
        var missed: [PublishedEvent] = []
        for stream in subscriptions.withLock({ $0 }) {
            let arrived = takeInbox()
            if !arrived.isEmpty {
                events += arrived
                missed += arrived
            }
            if !events.isEmpty, stream.take(events) { stream.flush() }
        }
        if !missed.isEmpty {
            // Before anything published since: a subscription takes events in
            // sequence order and skips what it took already.
            let schedule = pending.withLock { pending in
                pending.inbox.insert(contentsOf: missed, at: 0)
                defer { pending.taskScheduled = true }
                return !pending.taskScheduled
            }
            if schedule { scheduleFlush() }
        }
        events.removeAll(keepingCapacity: true)
        pending.withLock { pending in
            if pending.spareInbox.capacity < events.capacity { pending.spareInbox = events }
        }
    }

    /// The events published since the last take (the first take of a round also
    /// clears the flag that a round is scheduled).
    private func takeInbox() -> [PublishedEvent] {
        pending.withLock { pending in
            pending.taskScheduled = false
            guard !pending.inbox.isEmpty else { return [] }
            var events = pending.spareInbox
            pending.spareInbox = []
            swap(&events, &pending.inbox)
            return events
        }
    }
}

/// One `LoopFlusher` per event loop, created on first use.
final class LoopFlushers: Sendable {
    private let flushers = Mutex<[ObjectIdentifier: LoopFlusher]>([:])

    func flusher(for eventLoop: any EventLoop) -> LoopFlusher {
        flushers.withLock { flushers in
            let key = ObjectIdentifier(eventLoop)
            if let flusher = flushers[key] { return flusher }
            let flusher = LoopFlusher(eventLoop: eventLoop)
            flushers[key] = flusher
            return flusher
        }
    }
}
