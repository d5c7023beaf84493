import Dispatch
import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import NIOEmbedded
import Synchronization
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
                providerID: providerID, connectionID: 3, clientName: "test provider", uid: 0,
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

/// The write path: a value router over a store whose demo accessories are served by
/// provider "simulator", connected through a recording writer.
private struct WritePathFixture {
    let session: ProviderSessionFixture
    let router: ValueRouter
    let graph: HomeGraph
    let origin = Origin(kind: .client, connectionID: 8, name: "writer")

    init() throws {
        session = try ProviderSessionFixture(providerID: DemoHome.provider)
        router = ValueRouter(store: session.store, providers: session.hub, eventLoops: session.loop)
        graph = session.store.snapshot().graph
    }

    func write(_ path: String, _ value: CharacteristicValue) throws -> EventLoopFuture<WriteOutcome> {
        let future = router.write(
            [CharacteristicWrite(characteristicID: try graph.resolve(path: path), value: value)], origin: origin,
            timeoutMs: 60_000, on: session.loop)
        session.loop.run()
        return future
    }

    /// Confirms the last write command the provider was sent, every item of it.
    func confirmLastWrite() throws {
        let command = try #require(try session.commands().last)
        guard case .write(let writes, _) = command.kind else {
            Issue.record("the last command is not a write: \(command)")
            return
        }
        let answer = CommandAnswer(
            requestID: command.requestID, writes: writes.map { WriteResult(characteristicID: $0.characteristicID) })
        #expect(session.hub.answer(answer, fromConnection: 3))
        session.loop.run()
    }
}

@Suite("the write path through a provider, on a recording writer")
struct WritePathTests {
    @Test("a provider's write is sent once, applied only when it confirms, and acknowledged with its event's seq")
    func appliedOnConfirmation() throws {
        let fixture = try WritePathFixture()
        let brightness = try fixture.graph.resolve(path: "Living Room/Lamp/Brightness")
        let before = fixture.session.store.lastSeq
        let outcome = try fixture.write("Living Room/Lamp/Brightness", .int(33))
        #expect(try fixture.session.commands().filter { if case .write = $0.kind { true } else { false } }.count == 1)
        #expect(fixture.session.store.read([brightness]).reads.first?.value != .int(33), "not before it confirms")
        try fixture.confirmLastWrite()
        let result = try outcome.wait()
        #expect(result.results.map(\.error) == [nil])
        #expect(result.seq == before + 1)
        #expect(fixture.session.store.read([brightness]).reads.first?.value == .int(33))
    }

    @Test("a confirmation for an accessory removed while the provider was answering commits nothing: NOT_FOUND")
    func layoutChangedUnderConfirmation() throws {
        let fixture = try WritePathFixture()
        let outcome = try fixture.write("Living Room/Lamp/Brightness", .int(33))
        let lamp = try fixture.graph.resolve(path: "Living Room/Lamp")
        try fixture.session.store.changeLayout(.remove(id: lamp), origin: fixture.origin)
        let seq = fixture.session.store.lastSeq
        try fixture.confirmLastWrite()
        let result = try outcome.wait()
        #expect(result.results.first?.error?.code == .notFound)
        #expect(fixture.session.store.lastSeq == seq, "nothing was published")
    }

    @Test("a report after a write's answer was taken lands after the confirmation, however late the writer")
    func reportAfterConfirmation() throws {
        let fixture = try WritePathFixture()
        let writerLoop = NIOAsyncTestingEventLoop()
        defer { try? writerLoop.syncShutdownGracefully() }
        let brightness = try fixture.graph.resolve(path: "Living Room/Lamp/Brightness")
        let outcome = fixture.router.write(
            [CharacteristicWrite(characteristicID: brightness, value: .int(33))], origin: fixture.origin,
            timeoutMs: 60_000, on: writerLoop)
        fixture.session.loop.run()
        // The writer's loop is busy while the provider answers (accepted) and then
        // reports the value its device settled on.
        let busy = DispatchSemaphore(value: 0)
        writerLoop.execute { busy.wait() }
        try fixture.confirmLastWrite()
        let origin = Origin(kind: .provider, connectionID: 3, name: DemoHome.provider)
        let reported = fixture.session.store.report(
            [CharacteristicWrite(characteristicID: brightness, value: .int(35))], reachability: [],
            provider: DemoHome.provider, origin: origin)
        #expect(reported.rejected.isEmpty)
        busy.signal()
        #expect(try outcome.wait().results.map(\.error) == [nil])
        #expect(
            fixture.session.store.read([brightness]).reads.first?.value == .int(35),
            "the device's report, not the written value it came after")
    }

    @Test("a report after a fresh read's answer was taken lands after the answer's value, however late the reader")
    func reportAfterFreshRead() throws {
        let fixture = try WritePathFixture()
        let readerLoop = NIOAsyncTestingEventLoop()
        defer { try? readerLoop.syncShutdownGracefully() }
        let brightness = try fixture.graph.resolve(path: "Living Room/Lamp/Brightness")
        let outcome = fixture.router.read([brightness], fresh: true, timeoutMs: 60_000, on: readerLoop)
        fixture.session.loop.run()
        let busy = DispatchSemaphore(value: 0)
        readerLoop.execute { busy.wait() }
        let command = try #require(try fixture.session.commands().last)
        let answer = CommandAnswer(
            requestID: command.requestID,
            reads: [CharacteristicRead(characteristicID: brightness, value: .int(12), lastUpdatedMs: 0)])
        #expect(fixture.session.hub.answer(answer, fromConnection: 3))
        let origin = Origin(kind: .provider, connectionID: 3, name: DemoHome.provider)
        let reported = fixture.session.store.report(
            [CharacteristicWrite(characteristicID: brightness, value: .int(14))], reachability: [],
            provider: DemoHome.provider, origin: origin)
        #expect(reported.rejected.isEmpty)
        busy.signal()
        #expect(try outcome.wait().reads.first?.value == .int(12), "the read answers what the provider answered")
        #expect(fixture.session.store.read([brightness]).reads.first?.value == .int(14), "the later report is kept")
    }

    @Test("a provider that refuses a write fails it with its error, and nothing changes")
    func refused() throws {
        let fixture = try WritePathFixture()
        let outcome = try fixture.write("Living Room/Lamp/On", .bool(false))
        let command = try #require(try fixture.session.commands().last)
        let id = try fixture.graph.resolve(path: "Living Room/Lamp/On")
        #expect(
            fixture.session.hub.answer(
                CommandAnswer(
                    requestID: command.requestID,
                    writes: [WriteResult(characteristicID: id, error: HomeError(.unavailable, "bulb offline"))]),
                fromConnection: 3))
        fixture.session.loop.run()
        #expect(try outcome.wait().results.first?.error == HomeError(.unavailable, "bulb offline"))
        #expect(fixture.session.store.read([id]).reads.first?.value == .bool(true))
    }
}

@Suite("how often a call takes the store's lock")
struct StoreLockCountTests {
    private static func taken(_ store: HomeStore, during body: () throws -> Void) rethrows -> Int {
        let before = store.lockAcquisitions.load(ordering: .relaxed)
        try body()
        return store.lockAcquisitions.load(ordering: .relaxed) - before
    }

    @Test("a write through a provider takes it twice: once to decide, once to commit the confirmation")
    func providerWrite() throws {
        let fixture = try WritePathFixture()
        var outcome: EventLoopFuture<WriteOutcome>?
        let taken = try Self.taken(fixture.session.store) {
            outcome = try fixture.write("Living Room/Lamp/Brightness", .int(33))
            try fixture.confirmLastWrite()
            _ = try outcome?.wait()
        }
        #expect(try outcome?.wait().results.map(\.error) == [nil])
        #expect(taken == 2)
    }

    @Test("a conditional write through a provider too: its claim is taken in the decision and ends in the confirmation")
    func conditionalProviderWrite() throws {
        let fixture = try WritePathFixture()
        let id = try fixture.graph.resolve(path: "Living Room/Lamp/Brightness")
        let seq = try #require(fixture.session.store.read([id]).reads.first?.changeSeq)
        var outcome: EventLoopFuture<WriteOutcome>?
        let taken = try Self.taken(fixture.session.store) {
            outcome = fixture.router.write(
                [CharacteristicWrite(characteristicID: id, value: .int(40), condition: WriteCondition(seq: seq))],
                origin: fixture.origin, timeoutMs: 60_000, on: fixture.session.loop)
            fixture.session.loop.run()
            try fixture.confirmLastWrite()
        }
        #expect(try outcome?.wait().results.map(\.error) == [nil])
        #expect(taken == 2)
        // The claim ended with the confirmation: the next conditional write of it is sent.
        let next = try #require(fixture.session.store.read([id]).reads.first?.changeSeq)
        let again = fixture.router.write(
            [CharacteristicWrite(characteristicID: id, value: .int(41), condition: WriteCondition(seq: next))],
            origin: fixture.origin, timeoutMs: 60_000, on: fixture.session.loop)
        fixture.session.loop.run()
        try fixture.confirmLastWrite()
        #expect(try again.wait().results.map(\.error) == [nil])
    }

    @Test("a fresh read through a provider takes it twice: once to read and group, once to store and read back")
    func freshRead() throws {
        let fixture = try WritePathFixture()
        let id = try fixture.graph.resolve(path: "Living Room/Lamp/Brightness")
        var outcome: EventLoopFuture<ReadOutcome>?
        let taken = try Self.taken(fixture.session.store) {
            outcome = fixture.router.read([id], fresh: true, timeoutMs: 60_000, on: fixture.session.loop)
            fixture.session.loop.run()
            let command = try #require(try fixture.session.commands().last)
            let answer = CommandAnswer(
                requestID: command.requestID,
                reads: [CharacteristicRead(characteristicID: id, value: .int(12), lastUpdatedMs: 0)])
            #expect(fixture.session.hub.answer(answer, fromConnection: 3))
            fixture.session.loop.run()
        }
        #expect(try outcome?.wait().reads.first?.value == .int(12))
        #expect(taken == 2)
    }

    @Test("a write of the daemon's own characteristic takes it once")
    func daemonOwnedWrite() throws {
        let loop = EmbeddedEventLoop()
        let store = HomeStore(graph: DemoHome.make(nowMs: 1_700_000_000_000))
        let hub = ProviderHub(limits: LiveLimits(), pingIntervalMs: 600_000, inProcessProviders: [DemoHome.provider])
        let router = ValueRouter(store: store, providers: hub, eventLoops: loop)
        let id = try store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        var outcome: EventLoopFuture<WriteOutcome>?
        let taken = Self.taken(store) {
            outcome = router.write(
                [CharacteristicWrite(characteristicID: id, value: .int(5))], origin: Origin(kind: .client),
                timeoutMs: nil, on: loop)
        }
        #expect(try outcome?.wait().results.map(\.error) == [nil])
        #expect(taken == 1)
    }
}

@Suite("providers known from before the daemon started")
struct ProviderStartupGraceTests {
    /// A hub waiting for provider "lamps", which has not come back yet.
    private static func waitingHub(loop: EmbeddedEventLoop, graceMs: UInt32 = 10_000) -> ProviderHub {
        let hub = ProviderHub(limits: LiveLimits(), pingIntervalMs: 600_000)
        hub.awaitReturn(of: ["lamps"], graceMs: graceMs, on: loop)
        return hub
    }

    @Test("within the grace, a request to a known provider waits for it and is sent once it has registered")
    func waitsForReturn() throws {
        let loop = EmbeddedEventLoop()
        let hub = Self.waitingHub(loop: loop)
        let read = hub.send(.read(characteristicIDs: [4]), to: "lamps", timeoutMs: 5_000, on: loop)
        loop.run()
        let writer = RecordingWriter(loop: loop)
        let stream = ProviderCommandStream(
            providerID: "lamps", connectionID: 3, writer: writer, hub: hub,
            store: HomeStore(graph: DemoHome.make(nowMs: 1_700_000_000_000)), onEnd: {})
        try hub.open(
            ProviderHub.Session(
                providerID: "lamps", connectionID: 3, clientName: "lamps", uid: 0,
                stream: NIOLoopBound(stream, eventLoop: loop),
                eventLoop: loop))
        stream.start(knownKeys: [])
        hub.sendParked(to: "lamps")
        loop.run()
        let commands = try writer.payloads.map { try ProviderCommand(wire: Array($0.readableBytesView)) }
        #expect(commands.last?.kind == .read(characteristicIDs: [4]))
        let requestID = try #require(commands.last?.requestID)
        #expect(hub.answer(CommandAnswer(requestID: requestID), fromConnection: 3))
        #expect(try read.wait().requestID == requestID)
    }

    @Test("a request still waiting at its deadline fails DEADLINE_EXCEEDED, saying the provider has not come back")
    func deadlineWhileWaiting() {
        let loop = EmbeddedEventLoop()
        let hub = Self.waitingHub(loop: loop)
        let read = hub.send(.read(characteristicIDs: [4]), to: "lamps", timeoutMs: 200, on: loop)
        loop.advanceTime(by: .milliseconds(200))
        let error = #expect(throws: HomeError.self) { try read.wait() }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.message.contains("has not come back since the daemon started") == true)
    }

    @Test("at the grace's end, waiting requests fail UNAVAILABLE, and later ones fail at once")
    func graceEnds() {
        let loop = EmbeddedEventLoop()
        let hub = Self.waitingHub(loop: loop, graceMs: 1_000)
        let read = hub.send(.read(characteristicIDs: [4]), to: "lamps", timeoutMs: 60_000, on: loop)
        loop.advanceTime(by: .milliseconds(1_000))
        let error = #expect(throws: HomeError.self) { try read.wait() }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("within 1000 ms of the daemon's start") == true)
        let later = hub.send(.read(characteristicIDs: [4]), to: "lamps", timeoutMs: 60_000, on: loop)
        loop.run()
        #expect(throws: HomeError.self) { try later.wait() }
        #expect(hub.infos(known: [:]).first { $0.providerID == "lamps" }?.requestsInFlight ?? 0 == 0)
    }

    @Test("a provider that was never known is not waited for")
    func unknownProvider() {
        let loop = EmbeddedEventLoop()
        let hub = Self.waitingHub(loop: loop)
        let read = hub.send(.read(characteristicIDs: [4]), to: "plugs", timeoutMs: 60_000, on: loop)
        loop.run()
        let error = #expect(throws: HomeError.self) { try read.wait() }
        #expect(error?.code == .unavailable)
    }
}
