import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import NIOEmbedded
import Testing

@testable import HomeServer

/// A subscription registered with a store, writing to a recording writer.
private struct SubscriptionFixture {
    let loop = EmbeddedEventLoop()
    let writer: RecordingWriter
    let store = HomeStore(graph: DemoHome.make(nowMs: 1_700_000_000_000))
    let stream: SubscriptionStream
    let brightness: ObjectID
    private(set) var ended: Bool {
        get { endedBox.value }
        set { endedBox.value = newValue }
    }
    private let endedBox = Box(false)

    init(queueLimit: Int = 1024, policy: SlowConsumerPolicy = .coalesce) throws {
        writer = RecordingWriter(callID: 11, loop: loop)
        let options = SubscriptionState.Options(
            connectionID: 1, excludeOwn: false, policy: policy, queueLimit: queueLimit,
            queueByteLimit: queueLimit * 256, minIntervalMs: 0, heartbeatMs: 0)
        let (store, writer, loop, endedBox) = (store, writer, loop, endedBox)
        stream = try store.subscribe(SubscriptionFilter(kinds: [.valueChanged]), start: .live) { id, scope in
            SubscriptionStream(
                subscriptionID: id, state: SubscriptionState(scope: scope, options: options),
                journalID: store.journalID, journalField: SubscribeResponse.journalField(store.journalID),
                writer: writer, flusher: LoopFlusher(eventLoop: loop), publishedSeq: store.publishedSeq
            ) { endedBox.value = true }
        }
        brightness = try store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
    }

    func setBrightness(_ value: Int) {
        _ = store.write(
            [CharacteristicWrite(characteristicID: brightness, value: .int(Int64(value)))],
            origin: Origin(kind: .client, connectionID: 2, name: "writer"))
    }

    /// What the stream sent: markers by kind, events by their brightness value.
    func sent() throws -> [String] {
        try writer.payloads.flatMap { payload -> [String] in
            let message = try SubscribeResponse(wire: Array(payload.readableBytesView))
            return message.events.map { event -> String in
                if case .value(let change) = event.body, case .int(let value) = change.value { return "\(value)" }
                return "event"
            } + (message.marker.map { ["\($0.kind)"] } ?? [])
        }
    }
}

private final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

@Suite("a subscription stream on a recording writer")
struct SubscriptionStreamTests {
    @Test("events go out in order, batched into messages, after the subscribed marker")
    func inOrder() throws {
        let fixture = try SubscriptionFixture()
        for value in 1...5 { fixture.setBrightness(value) }
        fixture.loop.run()
        #expect(try fixture.sent() == ["subscribed", "1", "2", "3", "4", "5"])
    }

    @Test("while the socket takes no writes nothing is written; when it takes them again every event goes, in order")
    func stopsAndResumes() throws {
        let fixture = try SubscriptionFixture()
        fixture.loop.run()
        fixture.writer.socketWritable = false
        for value in 1...50 { fixture.setBrightness(value) }
        fixture.loop.run()
        #expect(try fixture.sent() == ["subscribed"])
        fixture.writer.socketWritable = true
        fixture.stream.resumeWriting()
        #expect(try fixture.sent() == ["subscribed"] + (1...50).map(String.init))
    }

    @Test("a queue that overflows under the disconnect policy ends the call with RESOURCE_EXHAUSTED")
    func disconnectPolicy() throws {
        let fixture = try SubscriptionFixture(queueLimit: 4, policy: .disconnect)
        fixture.loop.run()
        fixture.writer.socketWritable = false
        for value in 1...20 { fixture.setBrightness(value) }
        fixture.writer.socketWritable = true
        fixture.stream.resumeWriting()
        #expect(fixture.writer.status??.code == .resourceExhausted)
        #expect(fixture.ended)
    }

    @Test("finishing from the daemon's side sends what is queued, then the status")
    func finishFlushesFirst() throws {
        let fixture = try SubscriptionFixture()
        fixture.setBrightness(7)
        fixture.stream.finish(with: HomeError(.unavailable, "shutting down"))
        #expect(try fixture.sent() == ["subscribed", "7"])
        #expect(fixture.writer.status??.code == .unavailable)
        #expect(fixture.ended)
    }
}
