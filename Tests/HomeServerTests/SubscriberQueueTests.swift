import HomeModel
@_spi(Wire) import HomeWire
import Testing

@testable import HomeServer

@Suite("a subscriber's bounded queue")
struct SubscriberQueueTests {
    static func value(_ seq: UInt64, characteristic: ObjectID, _ value: Int64) -> HomeEvent {
        HomeEvent(
            seq: seq, timeMs: 0, origin: .simulator,
            body: .value(
                ValueChange(
                    accessoryID: 1, serviceID: 2, characteristicID: characteristic, value: .int(value))))
    }

    static func events(_ items: [SubscriberQueue.Item]) -> [HomeEvent] {
        items.compactMap { if case .event(let queued) = $0 { queued.event } else { nil } }
    }

    @Test("within its limit every event is delivered in order")
    func withinLimit() {
        var queue = SubscriberQueue(limit: 10, policy: .coalesce)
        for seq in UInt64(1)...10 { #expect(queue.push(Self.value(seq, characteristic: seq, 1)) == .queued) }
        #expect(Self.events(queue.drain(max: 100)).map(\.seq) == Array(UInt64(1)...10))
        #expect(queue.isEmpty)
    }

    @Test("coalesce: past the limit, the latest value per characteristic wins with a merged count")
    func coalesce() {
        var queue = SubscriberQueue(limit: 2, policy: .coalesce)
        _ = queue.push(Self.value(1, characteristic: 100, 1))
        _ = queue.push(Self.value(2, characteristic: 200, 1))
        for seq in UInt64(3)...12 { _ = queue.push(Self.value(seq, characteristic: 100 + (seq % 2) * 100, Int64(seq))) }
        let delivered = Self.events(queue.drain(max: 100)) + Self.events(queue.drain(max: 100))
        #expect(delivered.map(\.seq) == [1, 2, 11, 12])
        guard case .value(let last) = delivered[3].body, case .value(let previous) = delivered[2].body else {
            Issue.record("expected value events")
            return
        }
        #expect(last.value == .int(12) && last.merged == 4)
        #expect(previous.value == .int(11) && previous.merged == 4)
        #expect(queue.merged == 8)
        #expect(queue.dropped == 0)
    }

    @Test("coalesce never merges occurrences: ten doorbell presses stay ten events")
    func occurrencesNeverMerge() {
        // The queue holds `limit` events plus `limit` unmergeable occurrences.
        var queue = SubscriberQueue(limit: 5, policy: .coalesce)
        for seq in UInt64(1)...10 {
            _ = queue.push(Self.value(seq, characteristic: 500, 0), mergeable: false)
        }
        var delivered: [HomeEvent] = []
        for _ in 0..<20 where !queue.isEmpty { delivered += Self.events(queue.drain(max: 2)) }
        #expect(delivered.map(\.seq) == Array(UInt64(1)...10))
        #expect(queue.merged == 0)
        #expect(!queue.needsResync)
    }

    @Test("coalesce: more occurrences than it can hold is a resync, not a merge")
    func tooManyOccurrences() {
        var queue = SubscriberQueue(limit: 5, policy: .coalesce)
        for seq in UInt64(1)...11 {
            _ = queue.push(Self.value(seq, characteristic: 500, 0), mergeable: false)
        }
        #expect(queue.needsResync)
        #expect(queue.merged == 0)
    }

    @Test("coalesce: more distinct characteristics than it can hold ends in an explicit resync, never a silent loss")
    func coalesceThenResync() {
        var queue = SubscriberQueue(limit: 2, policy: .coalesce)
        for seq in UInt64(1)...5 { _ = queue.push(Self.value(seq, characteristic: seq, 1)) }
        #expect(queue.needsResync)
        #expect(queue.drain(max: 10).isEmpty)
        #expect(queue.depth == 0, "memory is released while the resync is pending")
        queue.resynced()
        #expect(queue.push(Self.value(6, characteristic: 1, 2)) == .queued)
    }

    @Test("coalesce: a non-value event that does not fit forces a resync")
    func coalesceLayoutResync() {
        var queue = SubscriberQueue(limit: 1, policy: .coalesce)
        _ = queue.push(Self.value(1, characteristic: 1, 1))
        _ = queue.push(HomeEvent(seq: 2, timeMs: 0, origin: .daemon, body: .primaryHome(1)))
        #expect(queue.needsResync)
    }

    @Test("gap: drops past the limit, then a marker naming exactly the lost range")
    func gap() {
        var queue = SubscriberQueue(limit: 2, policy: .gap)
        for seq in UInt64(1)...6 { _ = queue.push(Self.value(seq, characteristic: 1, Int64(seq))) }
        let first = queue.drain(max: 10)
        #expect(Self.events(first).map(\.seq) == [1, 2])
        guard case .marker(let marker)? = first.last else {
            Issue.record("expected a gap marker")
            return
        }
        #expect(marker.kind == .gap && marker.gapFrom == 3 && marker.gapTo == 6)
        #expect(queue.dropped == 4)
    }

    @Test("gap: events after the gap follow its marker, in order")
    func gapThenMore() {
        var queue = SubscriberQueue(limit: 2, policy: .gap)
        for seq in UInt64(1)...4 { _ = queue.push(Self.value(seq, characteristic: 1, 1)) }
        _ = queue.drain(max: 2)
        _ = queue.push(Self.value(5, characteristic: 1, 1))
        let next = queue.drain(max: 10)
        guard case .marker(let marker)? = next.first else {
            Issue.record("expected the marker first")
            return
        }
        #expect(marker.gapFrom == 3 && marker.gapTo == 4)
        #expect(Self.events(next).map(\.seq) == [5])
    }

    @Test("disconnect: a full queue reports overflow")
    func disconnect() {
        var queue = SubscriberQueue(limit: 1, policy: .disconnect)
        #expect(queue.push(Self.value(1, characteristic: 1, 1)) == .queued)
        #expect(queue.push(Self.value(2, characteristic: 1, 2)) == .overflow)
    }

    @Test("memory stays bounded however many events a stalled subscriber misses")
    func bounded() {
        var queue = SubscriberQueue(limit: 100, policy: .coalesce)
        for seq in UInt64(1)...100_000 { _ = queue.push(Self.value(seq, characteristic: seq % 50, Int64(seq))) }
        #expect(queue.depth <= 150)
        var gapQueue = SubscriberQueue(limit: 100, policy: .gap)
        for seq in UInt64(1)...100_000 { _ = gapQueue.push(Self.value(seq, characteristic: seq, 1)) }
        #expect(gapQueue.depth == 100)
    }
}
