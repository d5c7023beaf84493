internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// One subscriber's bounded queue of pending events, and what it does when full.
///
/// Pure data: the publisher pushes (never waits), the connection drains. Memory is
/// bounded by `limit` events and by `byteLimit` bytes (an estimate of what the
/// queued events hold: large string or data values count for their size), plus, for
/// `.coalesce`, one pending value per characteristic — at most `limit` of those too;
/// past that the queue gives up and asks for a resync (a marker and a fresh
/// snapshot), never a silent loss.
struct SubscriberQueue {
    /// Events and markers (the queue never holds snapshot pages).
    typealias Item = SinkItem

    enum PushOutcome: Equatable {
        case queued
        /// Merged into a pending value of the same characteristic, or dropped into a gap.
        case absorbed
        /// The policy is `.disconnect` and the queue is full.
        case overflow
        /// The policy is `.coalesce` and merging could not keep up: the queue
        /// emptied itself, and the owner must send a fresh snapshot standing at (or
        /// after) this event before anything still queued.
        case resync
    }

    let limit: Int
    /// The most bytes the queued events may hold (see `HomeEvent.approximateSize`).
    let byteLimit: Int
    let policy: SlowConsumerPolicy
    /// The estimated bytes held by everything queued.
    private(set) var bytes = 0
    private var items = CircularBuffer<Item>(initialCapacity: 1)
    /// `.coalesce` once full: the latest value per characteristic, in first-arrival order.
    private var coalesced: [ObjectID: HomeEvent] = [:]
    private var coalescedOrder: [ObjectID] = []
    /// `.coalesce` once full: occurrences that must never be merged (a doorbell's
    /// presses), each kept, at most `limit` of them.
    private var occurrences: [HomeEvent] = []
    /// `.gap`: the range dropped since the queue filled.
    private var pendingGap: (from: UInt64, to: UInt64)?
    /// Events were lost beyond what coalescing can express: a resync must be sent
    /// before anything queued since (`resynced()` once it is).
    private(set) var needsResync = false

    private(set) var merged: UInt64 = 0
    private(set) var dropped: UInt64 = 0

    init(limit: Int, byteLimit: Int = .max, policy: SlowConsumerPolicy) {
        self.limit = max(limit, 1)
        self.byteLimit = max(byteLimit, 1)
        self.policy = policy
        // No capacity reserved up front: an idle subscription holds nothing, and the
        // ring grows (by doubling) only while its subscriber lags.
    }

    var depth: Int { items.count + coalescedOrder.count + occurrences.count }
    var isEmpty: Bool { depth == 0 && pendingGap == nil && !needsResync }
    private var isOverflowing: Bool { !coalescedOrder.isEmpty || !occurrences.isEmpty }
    private var hasRoom: Bool { items.count < limit && bytes < byteLimit }

    /// Queues an event, or applies the policy when the queue is full.
    ///
    /// - Parameter mergeable: false for occurrences of event characteristics
    ///   (ProgrammableSwitchEvent: every press counts), which are never coalesced.
    mutating func push(_ event: HomeEvent, mergeable: Bool = true) -> PushOutcome {
        push(.own(event), size: event.approximateSize, mergeable: mergeable)
    }

    /// Queues an event (its own copy, or the publisher's shared object), or applies
    /// the policy when the queue is full.
    ///
    /// - Parameter size: the event's `approximateSize`.
    mutating func push(_ queued: QueuedEvent, size: Int, mergeable: Bool = true) -> PushOutcome {
        // The common case first, without copying the event out of `queued`.
        if pendingGap == nil && !isOverflowing && hasRoom {
            bytes += size
            items.append(.event(queued))
            return .queued
        }
        let event = queued.event
        if let gap = pendingGap {
            if hasRoom {
                items.append(
                    .marker(
                        StreamMarker(
                            kind: .gap, seq: gap.to, gapFrom: gap.from, gapTo: gap.to,
                            reason: "subscriber queue full (\(limit) events)")))
                pendingGap = nil
                bytes += size
                items.append(.event(queued))
                return .queued
            }
            pendingGap = (gap.from, event.seq)
            dropped += 1
            return .absorbed
        }
        switch policy {
        case .disconnect:
            return .overflow
        case .gap:
            pendingGap = (event.seq, event.seq)
            dropped += 1
            return .absorbed
        case .coalesce:
            guard case .value(let change) = event.body else {
                return startResync()
            }
            if !mergeable {
                guard occurrences.count < limit, bytes + size <= byteLimit else { return startResync() }
                bytes += size
                occurrences.append(event)
                return .queued
            }
            if var pending = coalesced[change.characteristicID], case .value(let old) = pending.body {
                var latest = change
                latest.merged = old.merged + change.merged + 1
                bytes += size - pending.approximateSize
                pending = event
                pending.body = .value(latest)
                coalesced[change.characteristicID] = pending
                merged += 1
                return .absorbed
            }
            guard coalescedOrder.count < limit, bytes + size <= byteLimit else { return startResync() }
            bytes += size
            coalesced[change.characteristicID] = event
            coalescedOrder.append(change.characteristicID)
            return .queued
        }
    }

    /// Gives up on what is queued: the owner sends a fresh snapshot instead, which
    /// covers the event being pushed too. What arrives after it queues as usual.
    private mutating func startResync() -> PushOutcome {
        dropped += UInt64(depth + 1)
        items.removeAll(keepingCapacity: false)
        coalesced = [:]
        coalescedOrder = []
        occurrences = []
        bytes = 0
        needsResync = true
        return .resync
    }

    /// Takes up to `max` items in delivery order. Coalesced values follow the queued
    /// events once those are gone, ordered by sequence number, so a stream's sequence
    /// numbers only ever increase.
    mutating func drain(max: Int) -> [Item] {
        if items.isEmpty && isOverflowing {
            let pending = (coalescedOrder.compactMap { coalesced[$0] } + occurrences).sorted { $0.seq < $1.seq }
            coalesced = [:]
            coalescedOrder = []
            occurrences = []
            for event in pending { items.append(.event(.own(event))) }
        }
        var batch: [Item] = []
        batch.reserveCapacity(min(max, items.count + 1))
        while batch.count < max, let item = items.popFirst() { batch.append(item) }
        if items.isEmpty && !isOverflowing {
            // Nothing is held any more (the usual drain, all at once): no event's
            // size to work out again.
            bytes = 0
        } else {
            for case .event(let queued) in batch { bytes -= queued.approximateSize }
        }
        if items.isEmpty, !isOverflowing, let gap = pendingGap, batch.count < max {
            batch.append(
                .marker(
                    StreamMarker(
                        kind: .gap, seq: gap.to, gapFrom: gap.from, gapTo: gap.to,
                        reason: "subscriber queue full (\(limit) events)")))
            pendingGap = nil
        }
        return batch
    }

    /// Called once the resync snapshot has been sent.
    mutating func resynced() {
        needsResync = false
    }
}

/// An event in a subscriber's queue: a copy of its own, or the object the
/// publisher shares among every queue holding the event.
enum QueuedEvent: Equatable {
    case own(HomeEvent)
    case shared(PublishedEvent)

    var event: HomeEvent {
        switch self {
        case .own(let event): return event
        case .shared(let published): return published.event
        }
    }

    /// What holding it costs a queue, for its byte limit: a shared event counts in
    /// full in every queue holding it, which overstates, never understates.
    var approximateSize: Int {
        switch self {
        case .own(let event): return event.approximateSize
        case .shared(let published): return published.approximateSize
        }
    }
}

/// An event as the store published it, when more than one subscriber queues it:
/// queueing it is then a retain rather than a copy, and it is packed once for all
/// of them. (A lone subscriber's events are copied into its queue and packed in
/// batches when sent: one allocation per event, made on the publisher's thread
/// and freed on the subscriber's, cost more than it saved there.)
final class PublishedEvent: Sendable, Equatable {
    let event: HomeEvent
    let encoded: EncodedEvent
    let approximateSize: Int

    init(_ event: HomeEvent) {
        self.event = event
        self.encoded = EncodedEvent(event)
        self.approximateSize = event.approximateSize
    }

    static func == (lhs: PublishedEvent, rhs: PublishedEvent) -> Bool {
        lhs.event == rhs.event
    }
}
