import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import Testing

@testable import HomeServer

/// A subscription's decisions, message by message, with no channel and no store.
@Suite("a subscription's state")
struct SubscriptionStateTests {
    static let graph = DemoHome.make(nowMs: 0)
    static let brightness = try! graph.resolve(path: "Living Room/Lamp/Brightness")
    static let hue = try! graph.resolve(path: "Living Room/Lamp/Hue")

    static func options(
        _ policy: SlowConsumerPolicy = .coalesce, limit: Int = 4, bytes: Int = .max,
        minIntervalMs: Int64 = 0, heartbeatMs: Int64 = 0, excludeOwn: Bool = false
    ) -> SubscriptionState.Options {
        .init(
            connectionID: 7, excludeOwn: excludeOwn, policy: policy, queueLimit: limit, queueByteLimit: bytes,
            minIntervalMs: minIntervalMs, heartbeatMs: heartbeatMs)
    }

    static func value(_ seq: UInt64, _ id: ObjectID, _ value: Int64, connection: UInt64 = 3) -> HomeEvent {
        HomeEvent(
            seq: seq, timeMs: 0, origin: Origin(kind: .client, connectionID: connection, name: "c"),
            body: .value(ValueChange(accessoryID: 0, serviceID: 0, characteristicID: id, value: .int(value))))
    }

    /// Offers an event as the publisher does, with the graph standing at `graphSeq`.
    @discardableResult
    static func offer(_ state: inout SubscriptionState, _ event: HomeEvent, graphSeq: UInt64? = nil) -> Bool {
        var index: HomeGraph.CharacteristicIndex?
        if case .value(let change) = event.body { index = graph.characteristics.index(forKey: change.characteristicID) }
        return state.offer(
            event, characteristic: index, in: graph, graphSeq: graphSeq ?? event.seq, layoutVersion: 0,
            mergeable: true
        ) { nil }
    }

    static func items(_ batch: SubscriptionState.Batch) -> [SinkItem] {
        if case .items(let items, _) = batch { return items }
        return []
    }

    static func seqs(_ items: [SinkItem]) -> [UInt64] {
        items.compactMap { if case .event(let queued) = $0 { queued.event.seq } else { nil } }
    }

    @Test("what it must send first goes before anything offered; it asks to be woken once per flush")
    func preambleFirst() {
        var state = SubscriptionState(scope: SubscriptionScope(SubscriptionFilter()), options: Self.options())
        state.start(with: [.marker(StreamMarker(kind: .subscribed, seq: 0))])
        #expect(Self.offer(&state, Self.value(1, Self.brightness, 1)))
        #expect(!Self.offer(&state, Self.value(2, Self.brightness, 2)), "already listed with its flusher")
        #expect(Self.items(state.nextBatch(max: 10, nowMs: 0)) == [.marker(StreamMarker(kind: .subscribed, seq: 0))])
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 0))) == [1, 2])
        #expect(state.sent == 2)
        #expect(Self.offer(&state, Self.value(3, Self.brightness, 3)), "flushed: listed again")
    }

    @Test("exclude-own leaves out the subscriber's own client changes only")
    func excludeOwn() {
        var state = SubscriptionState(
            scope: SubscriptionScope(SubscriptionFilter()), options: Self.options(excludeOwn: true))
        Self.offer(&state, Self.value(1, Self.brightness, 1, connection: 7))
        Self.offer(&state, Self.value(2, Self.brightness, 2, connection: 8))
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 0))) == [2])
    }

    @Test("a coalescing queue that gives up sends the commit's graph as a resync snapshot, then what came after")
    func resyncFromTheOfferedGraph() {
        var state = SubscriptionState(scope: SubscriptionScope(SubscriptionFilter()), options: Self.options(limit: 1))
        Self.offer(&state, Self.value(1, Self.brightness, 1))
        // A non-value event cannot be merged: the queue gives up at seq 2, in a commit standing at 3.
        _ = state.offer(
            HomeEvent(seq: 2, timeMs: 0, origin: .daemon, body: .primaryHome(1)), characteristic: nil,
            in: Self.graph, graphSeq: 3, layoutVersion: 0, mergeable: true
        ) { nil }
        Self.offer(&state, Self.value(3, Self.brightness, 3), graphSeq: 3)  // in the snapshot already
        Self.offer(&state, Self.value(4, Self.brightness, 4))
        let resync = Self.items(state.nextBatch(max: 10, nowMs: 0))
        #expect(
            resync.first
                == .marker(
                    StreamMarker(
                        kind: .resync, seq: 3,
                        reason: "subscriber fell behind by more than its queue holds")))
        #expect(resync.last == .marker(StreamMarker(kind: .snapshotEnd, seq: 3)))
        let snapshot = resync.flatMap { if case .snapshotPage(let page) = $0 { page } else { [] } }
        #expect(snapshot.count == Self.graph.characteristics.values.filter(\.properties.readable).count)
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 0))) == [4])
        #expect(state.nextBatch(max: 10, nowMs: 0) == .nothing)
    }

    @Test("disconnect: an overflowing queue asks the writer to end the stream")
    func disconnect() {
        var state = SubscriptionState(
            scope: SubscriptionScope(SubscriptionFilter()), options: Self.options(.disconnect, limit: 2))
        for seq in UInt64(1)...3 { Self.offer(&state, Self.value(seq, Self.brightness, Int64(seq))) }
        #expect(state.nextBatch(max: 10, nowMs: 0) == .overflowed)
    }

    @Test("a minimum interval holds a value back, says where to resume meanwhile, and sends the latest when due")
    func rateShaping() {
        var state = SubscriptionState(
            scope: SubscriptionScope(SubscriptionFilter()), options: Self.options(limit: 100, minIntervalMs: 1000))
        Self.offer(&state, Self.value(1, Self.brightness, 1))
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 5_000))) == [1])
        Self.offer(&state, Self.value(2, Self.brightness, 2))
        Self.offer(&state, Self.value(3, Self.brightness, 3))
        Self.offer(&state, Self.value(4, Self.hue, 4))
        guard case .items(let items, let resumeAfter) = state.nextBatch(max: 10, nowMs: 5_100) else {
            Issue.record("expected items")
            return
        }
        #expect(Self.seqs(items) == [4])
        #expect(resumeAfter == 1, "brightness from seq 2 is held: resume after 1")
        #expect(state.heldDueInMs(nowMs: 5_100) == 900)
        guard case .items(let due, nil) = state.nextBatch(max: 10, nowMs: 6_000) else {
            Issue.record("expected the held value")
            return
        }
        guard case .event(let held)? = due.first, case .value(let change) = held.event.body else {
            Issue.record("\(due)")
            return
        }
        #expect(held.event.seq == 3 && change.merged == 1)
    }

    @Test("a heartbeat is due only when nothing is pending and nothing was written for the interval")
    func heartbeat() {
        var state = SubscriptionState(
            scope: SubscriptionScope(SubscriptionFilter()), options: Self.options(heartbeatMs: 1000))
        #expect(state.isQuiet(nowMs: 1000))
        Self.offer(&state, Self.value(1, Self.brightness, 1))
        #expect(!state.isQuiet(nowMs: 5000))
        _ = state.nextBatch(max: 10, nowMs: 5000)
        #expect(!state.isQuiet(nowMs: 5500))
        #expect(state.isQuiet(nowMs: 6000))
    }

    @Test("large values fill a queue's byte budget before its event limit; the policy applies there")
    func byteBudget() {
        var queue = SubscriberQueue(limit: 1000, byteLimit: 4096, policy: .gap)
        let big = { (seq: UInt64) in
            HomeEvent(
                seq: seq, timeMs: 0, origin: .simulator,
                body: .value(
                    ValueChange(
                        accessoryID: 0, serviceID: 0, characteristicID: 9,
                        value: .data([UInt8](repeating: 0, count: 1000)))))
        }
        var outcomes: [SubscriberQueue.PushOutcome] = []
        for seq in UInt64(1)...10 { outcomes.append(queue.push(big(seq))) }
        #expect(outcomes.prefix(4).allSatisfy { $0 == .queued })
        #expect(outcomes.suffix(5).allSatisfy { $0 == .absorbed })
        #expect(queue.bytes <= 4096 + big(0).approximateSize)
        let drained = queue.drain(max: 100)
        guard case .marker(let gap)? = drained.last else {
            Issue.record("expected a gap marker")
            return
        }
        #expect(gap.kind == .gap && gap.gapTo == 10)
        #expect(queue.bytes == 0)
    }
}

@Suite("stream messages within the frame size")
struct StreamMessageEncoderTests {
    static func event(_ seq: UInt64, bytes: Int) -> SinkItem {
        .event(
            .own(
                HomeEvent(
                    seq: seq, timeMs: 0, origin: .simulator,
                    body: .value(
                        ValueChange(
                            accessoryID: 1, serviceID: 2, characteristicID: 3,
                            value: .data([UInt8](repeating: 7, count: bytes)))))))
    }

    @Test("a run of events too large for one frame is split; every event arrives once, in order")
    func splitsRuns() throws {
        let encoder = StreamMessageEncoder(journalID: "j")
        let writer = RecordingWriter(callID: 5, frameSize: 10_000)
        try encoder.encode((1...40).map { Self.event($0, bytes: 1_000) }, resumeAfter: nil, to: writer)
        writer.flush()
        #expect(writer.payloads.count > 1)
        var seqs: [UInt64] = []
        for payload in writer.payloads {
            #expect(WireFrame.messageFrameLength(callID: 5, payloadLength: payload.readableBytes) <= 10_000)
            seqs += try SubscribeResponse(wire: Array(payload.readableBytesView)).events.map(\.seq)
        }
        #expect(seqs == Array(1...40))
    }

    @Test("one event larger than the frame size is an error naming it")
    func oversizedEvent() {
        let encoder = StreamMessageEncoder(journalID: "j")
        let writer = RecordingWriter(callID: 5, frameSize: 10_000)
        let error = #expect(throws: HomeError.self) {
            try encoder.encode(
                [Self.event(1, bytes: 100), Self.event(2, bytes: 20_000)], resumeAfter: nil, to: writer)
        }
        #expect(error?.code == .resourceExhausted)
        #expect(error?.message.contains("event 2 takes") == true)
        writer.flush()
        #expect(writer.payloads.count == 1, "the event before it was written")
    }
}
