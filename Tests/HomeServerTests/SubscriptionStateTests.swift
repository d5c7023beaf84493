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

    /// The event as the store publishes it, routed in the demo graph.
    static func published(_ event: HomeEvent) -> PublishedEvent {
        let route: EventRoute =
            if case .value(let change) = event.body, let characteristic = graph.characteristics[change.characteristicID]
            {
                EventRoute(characteristic: characteristic, in: graph, layoutVersion: 0)
            } else {
                EventRoute(accessoryID: 0, in: graph, layoutVersion: 0)
            }
        return PublishedEvent(event: event, route: route, packed: nil)
    }

    /// Offers an event as its event loop's flusher does.
    @discardableResult
    static func offer(_ state: inout SubscriptionState, _ event: HomeEvent) -> Bool {
        state.offer(published(event))
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
        state.start(with: [.marker(StreamMarker(kind: .subscribed, seq: 0))], replay: [], through: 0)
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

    @Test(
        "a coalescing queue that gives up asks for a snapshot, sends it as a resync, then only what came after it")
    func resyncFromAFreshSnapshot() {
        var state = SubscriptionState(scope: SubscriptionScope(SubscriptionFilter()), options: Self.options(limit: 1))
        Self.offer(&state, Self.value(1, Self.brightness, 1))
        // A non-value event cannot be merged: the queue gives up at seq 2.
        Self.offer(&state, HomeEvent(seq: 2, timeMs: 0, origin: .daemon, body: .primaryHome(1)))
        Self.offer(&state, Self.value(3, Self.brightness, 3))  // before the snapshot is taken: in it
        #expect(state.nextBatch(max: 10, nowMs: 0) == .needsSnapshot)
        // The store stood at 4 when the writer took the snapshot; event 4 is still on its way.
        let resync = Self.items(state.nextBatch(max: 10, nowMs: 0, snapshot: (Self.graph, 4)))
        #expect(
            resync.first
                == .marker(
                    StreamMarker(
                        kind: .resync, seq: 4,
                        reason: "subscriber fell behind by more than its queue holds")))
        #expect(resync.last == .marker(StreamMarker(kind: .snapshotEnd, seq: 4)))
        let snapshot = resync.flatMap { if case .snapshotPage(let page) = $0 { page } else { [] } }
        #expect(snapshot.count == Self.graph.characteristics.values.filter(\.properties.readable).count)
        #expect(state.nextBatch(max: 10, nowMs: 0) == .nothing, "what was queued is in the snapshot")
        Self.offer(&state, Self.value(4, Self.brightness, 4))  // in the snapshot already
        Self.offer(&state, Self.value(5, Self.brightness, 5))
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 0))) == [5])
        #expect(state.nextBatch(max: 10, nowMs: 0) == .nothing)
    }

    @Test("a filter change applies from the event after the sequence number it was asked at, not before")
    func scopeChangeBetweenTwoEvents() {
        var state = SubscriptionState(
            scope: SubscriptionScope(SubscriptionFilter(characteristicIDs: [Self.brightness])),
            options: Self.options(limit: 16))
        state.start(with: [], replay: [], through: 0)
        // Asked when the store stood at 2: events 1 and 2 were published before it,
        // and still reach the subscription after the change was made.
        state.updateScope(after: 2) { scope in
            scope.remove(SubscriptionFilter(characteristicIDs: [Self.brightness]))
            scope.add(SubscriptionFilter(characteristicIDs: [Self.hue]))
        }
        Self.offer(&state, Self.value(1, Self.brightness, 1))
        Self.offer(&state, Self.value(2, Self.hue, 2))
        Self.offer(&state, Self.value(3, Self.brightness, 3))
        Self.offer(&state, Self.value(4, Self.hue, 4))
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 0))) == [1, 4])
    }

    @Test("events up to where the store stood at registration are skipped; a heartbeat says how far it got")
    func skipsWhatRegistrationCovered() {
        var state = SubscriptionState(scope: SubscriptionScope(SubscriptionFilter()), options: Self.options())
        let replay = [Self.published(Self.value(3, Self.brightness, 3))]
        state.start(with: [.marker(StreamMarker(kind: .subscribed, seq: 2))], replay: replay, through: 5)
        #expect(state.offeredThrough == 5)
        for seq in UInt64(4)...6 { Self.offer(&state, Self.value(seq, Self.brightness, Int64(seq))) }
        #expect(state.offeredThrough == 6)
        _ = state.nextBatch(max: 10, nowMs: 0)
        #expect(Self.seqs(Self.items(state.nextBatch(max: 10, nowMs: 0))) == [3, 6])
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

    static func frames(_ buffer: ByteBuffer) throws -> [WireFrame] {
        var buffer = buffer
        var decoder = FrameDecoder()
        var frames: [WireFrame] = []
        while let body = try decoder.decode(buffer: &buffer) { frames.append(try WireFrame(decoding: body)) }
        return frames
    }

    @Test("a run of events too large for one frame is split; every event arrives once, in order")
    func splitsRuns() throws {
        let encoder = StreamMessageEncoder(callID: 5, journalID: "j", frameSize: 10_000)
        var out = ByteBuffer()
        try encoder.encode((1...40).map { Self.event($0, bytes: 1_000) }, resumeAfter: nil, into: &out)
        let frames = try Self.frames(out)
        #expect(frames.count > 1)
        var seqs: [UInt64] = []
        for frame in frames {
            #expect(frame.encoded().readableBytes - 4 <= 10_000)
            guard case .message(let bytes) = frame.body else {
                Issue.record("\(frame)")
                continue
            }
            seqs += try SubscribeResponse(wire: bytes).events.map(\.seq)
        }
        #expect(seqs == Array(1...40))
    }

    @Test("one event larger than the frame size is an error naming it")
    func oversizedEvent() {
        let encoder = StreamMessageEncoder(callID: 5, journalID: "j", frameSize: 10_000)
        var out = ByteBuffer()
        let error = #expect(throws: HomeError.self) {
            try encoder.encode([Self.event(1, bytes: 100), Self.event(2, bytes: 20_000)], resumeAfter: nil, into: &out)
        }
        #expect(error?.code == .resourceExhausted)
        #expect(error?.message.contains("event 2 takes") == true)
    }
}
