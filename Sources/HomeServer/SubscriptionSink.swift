import HomeModel
import HomeWire
import NIOCore
import Synchronization

/// What a subscription stream sends, in order.
enum SinkItem: Equatable {
    case event(HomeEvent)
    case marker(StreamMarker)
    case snapshotPage([Characteristic])

    static let snapshotPageSize = 256
}

/// Per-subscription statistics, for `homectl stats`.
public struct SubscriptionStatistics: Sendable, Hashable {
    public var subscriptionID: UInt64
    public var connectionID: UInt64
    public var callID: UInt64
    public var queueDepth: Int
    public var sent: UInt64
    public var merged: UInt64
    public var dropped: UInt64
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
    let scope: SubscriptionScope
    let excludeOwn: Bool
    let journalID: String
    private let channel: any Channel
    private let store: HomeStore
    /// Called on the event loop when the stream ends on the daemon's side.
    private let onEnd: @Sendable (HomeError?) -> Void

    private struct State {
        var preamble: [SinkItem] = []
        var queue: SubscriberQueue
        var wakeScheduled = false
        var ended = false
        var overflowed = false
        var sent: UInt64 = 0
    }

    private let state: Mutex<State>

    /// Events per stream message: large enough to amortize a frame, small enough
    /// to stay far below the frame limit.
    static let batchSize = 256

    init(subscriptionID: UInt64, callID: UInt64, connectionID: UInt64, scope: SubscriptionScope,
         request: SubscribeRequest, channel: any Channel, store: HomeStore, queueLimit: Int,
         onEnd: @escaping @Sendable (HomeError?) -> Void) {
        self.subscriptionID = subscriptionID
        self.callID = callID
        self.connectionID = connectionID
        self.scope = scope
        self.excludeOwn = request.excludeOwn
        self.journalID = store.journalID
        self.channel = channel
        self.store = store
        self.onEnd = onEnd
        self.state = Mutex(State(queue: SubscriberQueue(limit: queueLimit, policy: request.policy)))
    }

    /// Whether this subscription wants `event` (filter and own-change exclusion).
    func wants(_ event: HomeEvent, in graph: HomeGraph) -> Bool {
        if excludeOwn && event.origin.connectionID == connectionID && event.origin.kind == .client { return false }
        return scope.matches(event, in: graph)
    }

    /// Items to send before anything queued (set once, at registration).
    func start(with items: [SinkItem]) {
        state.withLock { $0.preamble = items }
    }

    /// Queues an event. Returns true when the caller should `wake()` the sink.
    ///
    /// - Parameter mergeable: false for occurrences that must never be coalesced.
    func offer(_ event: HomeEvent, mergeable: Bool = true) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            if state.queue.push(event, mergeable: mergeable) == .overflow { state.overflowed = true }
            guard !state.wakeScheduled else { return false }
            state.wakeScheduled = true
            return true
        }
    }

    func wake() {
        channel.eventLoop.execute { self.flush() }
    }

    func resynced() {
        state.withLock { $0.queue.resynced() }
    }

    var statistics: SubscriptionStatistics {
        state.withLock {
            SubscriptionStatistics(subscriptionID: subscriptionID, connectionID: connectionID, callID: callID,
                                   queueDepth: $0.queue.depth, sent: $0.sent, merged: $0.queue.merged,
                                   dropped: $0.queue.dropped)
        }
    }

    /// Drains the queue into frames while the socket takes them. Event loop only.
    func flush() {
        channel.eventLoop.preconditionInEventLoop()
        var wroteAnything = false
        defer { if wroteAnything { channel.flush() } }
        while channel.isActive && channel.isWritable {
            let (items, overflowed, needsResync) = state.withLock { state -> ([SinkItem], Bool, Bool) in
                state.wakeScheduled = false
                if state.ended { return ([], false, false) }
                if !state.preamble.isEmpty {
                    defer { state.preamble = [] }
                    return (state.preamble, false, false)
                }
                if state.overflowed { return ([], true, false) }
                let drained = state.queue.drain(max: Self.batchSize).map { item -> SinkItem in
                    switch item {
                    case .event(let event): return .event(event)
                    case .marker(let marker): return .marker(marker)
                    }
                }
                return (drained, false, drained.isEmpty && state.queue.needsResync)
            }
            if overflowed {
                end(with: HomeError(.resourceExhausted,
                                    "subscription \(subscriptionID) closed: its queue of \(statistics.queueDepth) events overflowed and its policy is disconnect"))
                return
            }
            let batch = needsResync ? store.resync(self) : items
            guard !batch.isEmpty else { return }
            write(batch)
            wroteAnything = true
        }
    }

    /// Encodes items as stream messages (consecutive events share one message) into
    /// one buffer, written with a single channel write.
    private func write(_ items: [SinkItem]) {
        var out = ByteBuffer()
        var payload = ByteBuffer()
        var sentEvents: UInt64 = 0
        var index = items.startIndex
        while index < items.endIndex {
            payload.clear()
            switch items[index] {
            case .event:
                var events: [HomeEvent] = []
                events.reserveCapacity(min(Self.batchSize, items.endIndex - index))
                while index < items.endIndex, events.count < Self.batchSize, case .event(let event) = items[index] {
                    events.append(event)
                    index += 1
                }
                sentEvents += UInt64(events.count)
                SubscribeResponse.encode(journalID: journalID, events: events[...], marker: nil, into: &payload)
            case .marker(let marker):
                SubscribeResponse.encode(journalID: journalID, events: [], marker: marker, into: &payload)
                index += 1
            case .snapshotPage(let page):
                SubscribeResponse.encode(journalID: journalID, events: [], snapshot: page[...], marker: nil, into: &payload)
                index += 1
            }
            WireFrame.encodeMessage(callID: callID, payload: payload, into: &out)
        }
        channel.write(out, promise: nil)
        if sentEvents > 0 { state.withLock { $0.sent += sentEvents } }
    }

    /// Ends the stream from the daemon's side with a status (nil = OK).
    func end(with error: HomeError?) {
        channel.eventLoop.preconditionInEventLoop()
        let alreadyEnded = state.withLock { state in
            defer { state.ended = true }
            return state.ended
        }
        guard !alreadyEnded else { return }
        store.unsubscribe(self)
        channel.writeAndFlush(WireFrame(callID: callID, body: .status(error)).encoded(), promise: nil)
        onEnd(error)
    }

    /// The client cancelled or went away: stop without writing anything more.
    func cancel() {
        state.withLock { $0.ended = true }
        store.unsubscribe(self)
    }
}
