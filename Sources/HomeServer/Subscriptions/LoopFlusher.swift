internal import NIOCore

/// Collects the subscription sinks of one event loop that have something to send
/// and flushes them all in one task on that loop.
///
/// A change fanned out to a thousand subscribers then costs one task (and at most
/// one cross-thread wakeup) per event loop, not one per subscriber, and no
/// per-change allocation: the pending list is double-buffered and keeps its
/// capacity. A sink is listed again only once a flush has begun taking its events
/// (its state's `wakeScheduled` flag, which `SubscriptionState.nextBatch` clears),
/// so the list stays within the loop's subscriptions (a sink flushed directly in
/// between, by `resumeWriting` or a held value's timer, may appear twice; its
/// second flush finds nothing to send). Flushers live as long as the store: one
/// per event loop.
final class LoopFlusher: Sendable {
    let eventLoop: any EventLoop

    private struct Pending {
        var sinks: [SubscriptionStream] = []
        /// The list the last flush emptied, handed back for reuse.
        var spare: [SubscriptionStream] = []
        var taskScheduled = false
    }

    private let pending = Locked(Pending())

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Lists a sink for the next flush. Returns true when the caller must
    /// `scheduleFlush()` (no flush task is pending yet); it may do so after
    /// releasing its own locks.
    func enqueue(_ sink: SubscriptionStream) -> Bool {
        pending.withLock { pending in
            pending.sinks.append(sink)
            guard !pending.taskScheduled else { return false }
            pending.taskScheduled = true
            return true
        }
    }

    func scheduleFlush() {
        eventLoop.execute { self.flushAll() }
    }

    private func flushAll() {
        var batch = pending.withLock { pending -> [SubscriptionStream] in
            pending.taskScheduled = false
            var taken = pending.spare
            pending.spare = []
            swap(&taken, &pending.sinks)
            return taken
        }
        for sink in batch { sink.flush() }
        batch.removeAll(keepingCapacity: true)
        pending.withLock { pending in
            if pending.spare.capacity < batch.capacity { pending.spare = batch }
        }
    }
}

/// One `LoopFlusher` per event loop, created on first use.
final class LoopFlushers: Sendable {
    private let flushers = Locked<[ObjectIdentifier: LoopFlusher]>([:])

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
