import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import NIOEmbedded
import Testing

@testable import HomeServer

/// A provider's session in the hub, its command stream on a recording writer: the
/// provider path with no socket.
private struct ProviderSessionFixture {
    let loop = EmbeddedEventLoop()
    let writer: RecordingWriter
    let hub: ProviderHub
    let store: HomeStore
    let stream: ProviderCommandStream

    init(frameSize: Int = 64 * 1024, providerID: String = "lamps") throws {
        writer = RecordingWriter(callID: 9, frameSize: frameSize, loop: loop)
        hub = ProviderHub(limits: LiveLimits(), pingIntervalMs: 600_000)
        store = HomeStore(graph: DemoHome.make(nowMs: 1_700_000_000_000))
        stream = ProviderCommandStream(
            providerID: providerID, connectionID: 3, writer: writer, hub: hub, store: store, onEnd: {})
        try hub.open(
            ProviderHub.Session(
                providerID: providerID, connectionID: 3, clientName: "test provider",
                stream: NIOLoopBound(stream, eventLoop: loop), eventLoop: loop))
        stream.start(knownKeys: [])
    }

    /// The commands the provider has been sent, in order.
    func commands() throws -> [ProviderCommand] {
        try writer.payloads.map { try ProviderCommand(wire: Array($0.readableBytesView)) }
    }

    func read(_ ids: [ObjectID], timeoutMs: UInt32 = 60_000) -> EventLoopFuture<CommandAnswer> {
        let future = hub.send(.read(characteristicIDs: ids), to: "lamps", timeoutMs: timeoutMs, on: loop)
        loop.run()
        return future
    }
}

@Suite("a provider's command stream and the hub, on a recording writer")
struct ProviderStreamTests {
    @Test("the stream opens with the opened message; a request is a command with its id and deadline")
    func commandsGoOut() throws {
        let fixture = try ProviderSessionFixture()
        _ = fixture.read([1, 2], timeoutMs: 1_500)
        let commands = try fixture.commands()
        #expect(commands.count == 2)
        guard case .opened(let opened)? = commands.first?.kind else {
            Issue.record("no opened message: \(commands)")
            return
        }
        #expect(opened.providerID == "lamps")
        #expect(commands.last?.kind == .read(characteristicIDs: [1, 2]))
        #expect(commands.last?.timeoutMs == 1_500)
        #expect(commands.last?.requestID != 0)
    }

    @Test("while the provider's socket takes no writes, commands wait in order and go when it does")
    func backPressure() throws {
        let fixture = try ProviderSessionFixture()
        fixture.writer.socketWritable = false
        _ = fixture.read([1])
        _ = fixture.read([2])
        #expect(try fixture.commands().count == 1, "only the opened message went")
        fixture.writer.socketWritable = true
        fixture.stream.resumeWriting()
        let reads = try fixture.commands().dropFirst().map(\.kind)
        #expect(reads == [.read(characteristicIDs: [1]), .read(characteristicIDs: [2])])
    }

    @Test("a command larger than the provider's frame fails its request with RESOURCE_EXHAUSTED; later ones still go")
    func oversizedCommand() throws {
        let fixture = try ProviderSessionFixture(frameSize: 1_000)
        let big = fixture.hub.send(
            .write(
                [CharacteristicWrite(characteristicID: 7, value: .string(String(repeating: "x", count: 2_000)))],
                atomic: false),
            to: "lamps", timeoutMs: 60_000, on: fixture.loop)
        fixture.loop.run()
        let error = #expect(throws: HomeError.self) { try big.wait() }
        #expect(error?.code == .resourceExhausted)
        #expect(error?.message.contains("provider \"lamps\"") == true)
        _ = fixture.read([1])
        #expect(try fixture.commands().last?.kind == .read(characteristicIDs: [1]))
        #expect(fixture.hub.infos(known: [:]).first?.requestsInFlight == 1, "the refused one is not in flight")
    }

    @Test("an answer completes its request; one after the deadline or from another connection is dropped")
    func answers() throws {
        let fixture = try ProviderSessionFixture()
        let answered = fixture.read([1])
        let requestID = try #require(try fixture.commands().last?.requestID)
        #expect(!fixture.hub.answer(CommandAnswer(requestID: requestID), fromConnection: 4), "not its connection")
        #expect(fixture.hub.answer(CommandAnswer(requestID: requestID), fromConnection: 3))
        #expect(try answered.wait().requestID == requestID)

        let late = fixture.read([2], timeoutMs: 10)
        let lateID = try #require(try fixture.commands().last?.requestID)
        fixture.loop.advanceTime(by: .milliseconds(10))
        let error = #expect(throws: HomeError.self) { try late.wait() }
        #expect(error?.code == .deadlineExceeded)
        #expect(!fixture.hub.answer(CommandAnswer(requestID: lateID), fromConnection: 3), "too late")
    }

    @Test("the session's end fails its waiting requests with UNAVAILABLE and sends nothing more")
    func sessionEnds() throws {
        let fixture = try ProviderSessionFixture()
        fixture.writer.socketWritable = false
        let waiting = fixture.read([1])
        fixture.stream.finish(with: HomeError(.unavailable, "shutting down"))
        let error = #expect(throws: HomeError.self) { try waiting.wait() }
        #expect(error?.code == .unavailable)
        #expect(fixture.writer.status??.code == .unavailable)
        fixture.writer.socketWritable = true
        fixture.stream.resumeWriting()
        #expect(try fixture.commands().count == 1, "the waiting command was dropped with its session")
        let after = fixture.read([2])
        #expect(throws: HomeError.self) { try after.wait() }
    }
}
