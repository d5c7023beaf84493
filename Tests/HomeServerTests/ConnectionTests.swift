import Foundation
import HomeModel
@_spi(Wire) import HomeWire
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import HomeServer

/// A connection driven frame by frame through an `EmbeddedChannel`: no socket, no
/// store, a router with test handlers, and time that moves only when told.
final class EmbeddedConnection {
    let channel: EmbeddedChannel
    let loop: EmbeddedEventLoop
    /// The roles the connection's calls are checked against (replace them to reload).
    let configurationRoles: RoleTable
    /// What the slow test method's callers are waiting for.
    var slowPromises: [EventLoopPromise<GetStatusResponse>] = []
    let streams = StreamLog()

    /// The call ids of each group the grouped test method was handed, in order.
    var groups: [[UInt64]] = []

    static let slow = UnaryMethod<GetStatusRequest, GetStatusResponse>("test.Service/Slow")
    static let grouped = UnaryMethod<GetStatusRequest, GetStatusResponse>("test.Service/Grouped")
    static let stream = ServerStreamingMethod<GetStatusRequest, SubscribeResponse>("test.Service/Stream")

    init(
        peer: Peer = Peer(pid: 1, uid: getuid(), gid: getgid()),
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = ServerConfiguration(socketPath: "/unused")
        configure(&configuration)
        configurationRoles = configuration.roles
        loop = EmbeddedEventLoop()
        channel = EmbeddedChannel(loop: loop)
        var router = HomeRouter()
        router.register(HomeMethods.getStatus, role: .viewer) { _, context in
            var status = GetStatusResponse()
            status.connectionID = context.connectionID
            status.serverVersion = String(repeating: "v", count: 10)
            return status
        }
        let promises = NIOLoopBound(self, eventLoop: loop)
        router.register(
            Self.slow, role: .viewer,
            deferred: { _, context in
                let promise = context.eventLoop.makePromise(of: GetStatusResponse.self)
                promises.value.slowPromises.append(promise)
                return promise.futureResult
            })
        router.register(
            Self.grouped, role: .viewer,
            grouped: { calls in
                promises.value.groups.append(calls.map(\.context.callID))
                return calls.map { call in
                    var status = GetStatusResponse()
                    status.connectionID = call.context.callID
                    return call.context.eventLoop.makeSucceededFuture(status)
                }
            })
        let streams = self.streams
        router.register(Self.stream, role: .viewer) { _, context, _ in
            let stream = TestStream(callID: context.callID, ended: context.streamEnded, log: streams)
            streams.opened.append(context.callID)
            return stream
        }
        let handler = ConnectionHandler(
            router: router, registry: ConnectionRegistry(), configuration: configuration,
            journalID: "journal", peer: peer, logger: Logger(label: "test"))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/unused")).wait()
    }

    func send(_ frame: WireFrame) throws {
        try channel.writeInbound(frame.encoded())
    }

    func sendRaw(_ bytes: [UInt8]) throws {
        try channel.writeInbound(ByteBuffer(bytes: bytes))
    }

    /// Every frame the connection wrote so far.
    func received() throws -> [WireFrame] {
        var frames: [WireFrame] = []
        var decoder = FrameDecoder()
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
            while let body = try decoder.decode(buffer: &buffer) { frames.append(try WireFrame(decoding: body)) }
        }
        return frames
    }

    @discardableResult
    func hello(maxFrameSize: UInt32 = 0) throws -> HelloReply {
        try send(WireFrame(callID: 0, body: .hello(Hello(clientName: "embedded", maxFrameSize: maxFrameSize))))
        guard case .helloReply(let reply)? = try received().first?.body else {
            throw HomeError(.internal, "no hello reply")
        }
        return reply
    }

    func open(_ callID: UInt64, _ method: String, timeoutMs: UInt32? = nil) throws {
        try send(WireFrame(callID: callID, body: .open(CallOpen(method: method, request: [], timeoutMs: timeoutMs))))
    }

    /// Opens the calls in one read, as a pipelining client's frames arrive.
    func openTogether(_ calls: [(callID: UInt64, method: String)]) throws {
        var buffer = ByteBuffer()
        for call in calls {
            var frame = WireFrame(callID: call.callID, body: .open(CallOpen(method: call.method, request: [])))
                .encoded()
            buffer.writeBuffer(&frame)
        }
        try channel.writeInbound(buffer)
    }
}

/// What the test streams saw.
final class StreamLog: @unchecked Sendable {
    var opened: [UInt64] = []
    var cancelled: [UInt64] = []
    var finished: [(UInt64, HomeError?)] = []
}

/// A stream that writes nothing and records what its connection asks of it.
final class TestStream: ServerStreamCall {
    let callID: UInt64
    let ended: @Sendable (UInt64) -> Void
    let log: StreamLog

    init(callID: UInt64, ended: @escaping @Sendable (UInt64) -> Void, log: StreamLog) {
        self.callID = callID
        self.ended = ended
        self.log = log
    }

    func cancel() { log.cancelled.append(callID) }
    func finish(with error: HomeError?) {
        log.finished.append((callID, error))
        ended(callID)
    }
    func resumeWriting() {}
}

@Suite("a connection, frame by frame (EmbeddedChannel, no socket)")
struct ConnectionTests {
    @Test("the first frame must be a hello; anything else is refused on call 0 and the connection closes")
    func helloFirst() throws {
        let connection = try EmbeddedConnection()
        try connection.open(1, HomeMethods.getStatus.name)
        let frames = try connection.received()
        #expect(frames.map(\.callID) == [0])
        guard case .status(let error?) = frames.first?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .failedPrecondition)
        #expect(error.message.contains("the first frame must be a hello, not open (call 1)"))
        #expect(!connection.channel.isActive)
    }

    @Test("a hello that asks for a tiny frame size gets the stated floor; 0 gets the daemon's limit")
    func frameSizeFloor() throws {
        #expect(
            try EmbeddedConnection().hello(maxFrameSize: 100).maxFrameSize
                == UInt32(ConnectionStateMachine.minimumFrameSize))
        #expect(try EmbeddedConnection().hello(maxFrameSize: 0).maxFrameSize == UInt32(defaultMaxFrameSize))
        #expect(try EmbeddedConnection().hello(maxFrameSize: 100_000).maxFrameSize == 100_000)
        #expect(try EmbeddedConnection().hello(maxFrameSize: UInt32.max).maxFrameSize == UInt32(defaultMaxFrameSize))
    }

    @Test("a frame above the negotiated size gets RESOURCE_EXHAUSTED on call 0 and a close")
    func inboundFrameLimit() throws {
        let connection = try EmbeddedConnection()
        try connection.hello(maxFrameSize: 70_000)
        let big = [UInt8](repeating: 1, count: 80_000)
        try connection.send(
            WireFrame(callID: 1, body: .open(CallOpen(method: HomeMethods.getStatus.name, request: big))))
        let frames = try connection.received()
        guard case .status(let error?) = frames.last?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(frames.last?.callID == 0)
        #expect(error.code == .resourceExhausted)
        #expect(error.message.contains("negotiated"))
        #expect(!connection.channel.isActive)
    }

    @Test("a response larger than the negotiated frame size is RESOURCE_EXHAUSTED on its call, never a larger frame")
    func outboundFrameLimit() throws {
        let connection = try EmbeddedConnection()
        try connection.hello(maxFrameSize: 1)  // the floor: 64 KiB
        // GetStatus's handler is small; ask the slow one to answer with a huge version string.
        try connection.open(1, EmbeddedConnection.slow.name)
        var huge = GetStatusResponse()
        huge.serverVersion = String(repeating: "x", count: 70_000)
        connection.slowPromises.first?.succeed(huge)
        let frames = try connection.received()
        #expect(frames.count == 1)
        guard case .status(let error?) = frames.first?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(frames.first?.callID == 1)
        #expect(error.code == .resourceExhausted)
        #expect(connection.channel.isActive)
    }

    @Test("a second open on a call id still open is refused on call 0; the open call is untouched and ends once")
    func duplicateCallID() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        try connection.open(5, EmbeddedConnection.stream.name)
        try connection.open(5, HomeMethods.getStatus.name)
        let frames = try connection.received()
        #expect(frames.count == 1)
        #expect(frames.first?.callID == 0)
        guard case .status(let error?) = frames.first?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .alreadyExists)
        #expect(error.message.contains("call 5 is already open"))
        #expect(connection.streams.opened == [5])
        #expect(connection.streams.cancelled.isEmpty && connection.streams.finished.isEmpty)
        // Once it ends, the id may be used again.
        try connection.send(WireFrame(callID: 5, body: .cancel))
        #expect(try connection.received().map(\.callID) == [5])
        try connection.open(5, HomeMethods.getStatus.name)
        #expect(try connection.received().count == 2)  // message and OK status
    }

    @Test("a stream whose timeout runs out ends with DEADLINE_EXCEEDED; timeout 0 is refused without running")
    func streamDeadline() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        try connection.open(3, EmbeddedConnection.stream.name, timeoutMs: 250)
        connection.loop.advanceTime(by: .milliseconds(249))
        #expect(connection.streams.finished.isEmpty)
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(connection.streams.finished.map(\.0) == [3])
        #expect(connection.streams.finished.first?.1?.code == .deadlineExceeded)
        #expect(connection.streams.finished.first?.1?.message.contains("deadline of 250 ms") == true)
        try connection.open(4, EmbeddedConnection.stream.name, timeoutMs: 0)
        let frames = try connection.received()
        guard case .status(let error?) = frames.last?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(frames.last?.callID == 4)
        #expect(error.code == .deadlineExceeded)
        #expect(connection.streams.opened == [3])
    }

    @Test("a deferred answer after its deadline is dropped: the call ends once, with DEADLINE_EXCEEDED")
    func lateAnswerDropped() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        try connection.open(7, EmbeddedConnection.slow.name, timeoutMs: 100)
        connection.loop.advanceTime(by: .milliseconds(100))
        connection.slowPromises.first?.succeed(GetStatusResponse())
        let frames = try connection.received()
        #expect(frames.count == 1)
        guard case .status(let error?) = frames.first?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .deadlineExceeded)
    }

    @Test("go-away carries the highest call id accepted and ends every open stream with UNAVAILABLE")
    func goAway() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        try connection.open(9, EmbeddedConnection.stream.name)
        try connection.open(4, HomeMethods.getStatus.name)
        _ = try connection.received()
        connection.channel.pipeline.fireUserInboundEventTriggered(ConnectionCommand.goAway(reason: "test"))
        let frames = try connection.received()
        guard case .goAway(_, let lastCallID)? = frames.first?.body else {
            Issue.record("no go-away: \(frames)")
            return
        }
        #expect(lastCallID == 9)
        #expect(connection.streams.finished.map(\.0) == [9])
        #expect(connection.streams.finished.first?.1?.code == .unavailable)
    }

    @Test("calls of a grouped method that come in one read are handed over together, in order, split by any other call")
    func groupedCallsOfOneRead() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        let grouped = EmbeddedConnection.grouped.name
        try connection.openTogether([
            (1, grouped), (2, grouped), (3, grouped), (4, HomeMethods.getStatus.name), (5, grouped), (6, grouped),
        ])
        // One read later, a call alone.
        try connection.open(7, grouped)
        #expect(connection.groups == [[1, 2, 3], [5, 6], [7]])
        // Every call answered once, the ones before the other call first.
        let answered = try connection.received().compactMap { frame -> UInt64? in
            if case .status(nil) = frame.body { frame.callID } else { nil }
        }
        #expect(answered == [1, 2, 3, 4, 5, 6, 7])
    }

    @Test("a group holds at most WaitingGroup.largest calls; a failing frame runs the group before it first")
    func groupBoundsAndFailure() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        let largest = ConnectionHandler.WaitingGroup.largest
        try connection.openTogether((1...UInt64(largest + 1)).map { ($0, EmbeddedConnection.grouped.name) })
        #expect(connection.groups.map(\.count) == [largest, 1])
        _ = try connection.received()
        var bytes = WireFrame(callID: 900, body: .open(CallOpen(method: EmbeddedConnection.grouped.name, request: [])))
            .encoded()
        bytes.writeBytes([0, 0, 0, 3, 0xFF, 0xFF, 0xFF])  // a frame that is not a Frame
        try connection.channel.writeInbound(bytes)
        #expect(connection.groups.last == [900])
        // The call answered, then the connection's failure.
        let statuses = try connection.received().compactMap { frame -> UInt64? in
            if case .status = frame.body { frame.callID } else { nil }
        }
        #expect(statuses == [900, 0])
    }

    @Test("ping is answered with the same nonce; an unknown method names the methods served")
    func pingAndUnknownMethod() throws {
        let connection = try EmbeddedConnection()
        try connection.hello()
        try connection.send(WireFrame(callID: 0, body: .ping(nonce: 42)))
        try connection.open(2, "home.v1.HomeService/Nope")
        let frames = try connection.received()
        #expect(frames.first?.body == .pong(nonce: 42))
        guard case .status(let error?) = frames.last?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .unimplemented)
        #expect(error.message.contains("'home.v1.HomeService/Nope' (call 2)"))
        #expect(error.message.contains(HomeMethods.getStatus.name))
    }

    @Test("half a frame that never completes closes the connection with DEADLINE_EXCEEDED")
    func partialFrameDeadline() throws {
        let connection = try EmbeddedConnection { $0.frameTimeoutMs = 1_000 }
        try connection.hello()
        try connection.sendRaw([0, 0, 1, 0, 1, 2, 3])  // announces 256 bytes, sends 3
        connection.loop.advanceTime(by: .milliseconds(999))
        #expect(connection.channel.isActive)
        connection.loop.advanceTime(by: .milliseconds(1))
        let frames = try connection.received()
        guard case .status(let error?) = frames.last?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .deadlineExceeded)
        #expect(error.message.contains("(7 bytes received)"))
        #expect(!connection.channel.isActive)
    }

    @Test("a connection with an open stream that stops talking is pinged, then closed; an idle one is left alone")
    func keepalive() throws {
        let connection = try EmbeddedConnection { $0.keepaliveIntervalMs = 1_000 }
        try connection.hello()
        connection.loop.advanceTime(by: .milliseconds(3_000))
        #expect(try connection.received().isEmpty)  // no open call: no ping
        try connection.open(1, EmbeddedConnection.stream.name)
        connection.loop.advanceTime(by: .milliseconds(1_000))  // heard the open: fine
        connection.loop.advanceTime(by: .milliseconds(1_000))  // silent for an interval: ping
        let pings = try connection.received()
        guard case .ping(let nonce)? = pings.last?.body else {
            Issue.record("no ping: \(pings)")
            return
        }
        try connection.send(WireFrame(callID: 0, body: .pong(nonce: nonce)))
        connection.loop.advanceTime(by: .milliseconds(1_000))
        #expect(connection.channel.isActive)
        connection.loop.advanceTime(by: .milliseconds(1_000))  // silent again: ping
        #expect(try connection.received().count == 1)
        connection.loop.advanceTime(by: .milliseconds(1_000))  // and no answer: closed
        let frames = try connection.received()
        guard case .status(let error?) = frames.last?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .deadlineExceeded)
        #expect(error.message.contains("no answer to the daemon's ping"))
        #expect(!connection.channel.isActive)
        #expect(connection.streams.cancelled == [1])
    }

    @Test("no hello within the hello timeout closes the connection")
    func helloTimeout() throws {
        let connection = try EmbeddedConnection { $0.helloTimeoutMs = 500 }
        connection.loop.advanceTime(by: .milliseconds(500))
        let frames = try connection.received()
        guard case .status(let error?) = frames.last?.body else {
            Issue.record("no status: \(frames)")
            return
        }
        #expect(error.code == .deadlineExceeded)
        #expect(!connection.channel.isActive)
    }
}

@Suite("the router")
struct RouterTests {
    @Test("the daemon routes exactly the schema's methods, and only Backup, Subscribe and OpenProvider stream")
    func routesMatchSchema() {
        let router = HomeService(
            store: HomeStore(graph: HomeGraph()), registry: ConnectionRegistry(),
            configuration: ServerConfiguration(socketPath: "/unused"),
            providers: ProviderHub(limits: LiveLimits(.init(providerTimeoutMs: 1_000)), pingIntervalMs: 1_000),
            flushers: LoopFlushers(), eventLoops: EmbeddedEventLoop()
        ).router()
        #expect(router.methodNames == HomeMethods.schemaMethodNames.sorted())
        let streaming = router.methodNames.filter {
            if case .serverStreaming = router.route(for: $0)?.route { return true }
            return false
        }
        #expect(streaming == [HomeMethods.backup.name, HomeMethods.openProvider.name, HomeMethods.subscribe.name])
    }
}

@Suite("roles at the router")
struct RoleEnforcementTests {
    @Test("a call the caller's role does not allow is refused whole, naming the role it needs and the caller")
    func refused() throws {
        let stranger = Peer(pid: 77, uid: 4242, gid: 4242)
        let connection = try EmbeddedConnection(peer: stranger) { configuration in
            configuration.roles = RoleTable(RolePolicy(defaultRole: nil, daemonUID: 1))
        }
        try connection.hello()
        try connection.open(1, HomeMethods.getStatus.name)
        guard case .status(let error?) = try connection.received().first?.body else {
            Issue.record("no error status")
            return
        }
        #expect(error.code == .permissionDenied)
        #expect(
            error.message
                == "home.v1.HomeService/GetStatus needs the viewer role; the caller (uid 4242, pid 77) has no role")
        // A reload that gives the role applies to the open connection at its next call.
        connection.configurationRoles.replace(
            with: RolePolicy(members: [.viewer: [.group(4242)]], defaultRole: nil, daemonUID: 1))
        try connection.open(2, HomeMethods.getStatus.name)
        let frames = try connection.received()
        #expect(frames.contains { if case .status(nil) = $0.body { return $0.callID == 2 } else { return false } })
    }

    @Test("each method needs the role Protos/home_v1.proto lists for it")
    func rolesMatchSchema() throws {
        let router = HomeService(
            store: HomeStore(graph: HomeGraph()), registry: ConnectionRegistry(),
            configuration: ServerConfiguration(socketPath: "/unused"),
            providers: ProviderHub(limits: LiveLimits(.init(providerTimeoutMs: 1_000)), pingIntervalMs: 1_000),
            flushers: LoopFlushers(), eventLoops: EmbeddedEventLoop()
        ).router()
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protos/home_v1.proto")
        var listed: [String: Role] = [:]
        var current: Role?
        for line in try String(contentsOf: schema, encoding: .utf8).split(separator: "\n") {
            guard line.hasPrefix("//   ") || line.hasPrefix("//  ") else {
                current = nil
                continue
            }
            var text = line.dropFirst(2).trimmingCharacters(in: .whitespaces)
            if let colon = text.firstIndex(of: ":"), let role = Role(name: String(text[..<colon])) {
                current = role
                text = String(text[text.index(after: colon)...])
            }
            guard let current else { continue }
            for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) })
            where !name.isEmpty {
                listed["home.v1.HomeService/\(name)"] = current
            }
        }
        #expect(Set(listed.keys) == Set(router.methodNames))
        for method in router.methodNames {
            #expect(router.route(for: method)?.role == listed[method], "\(method)")
        }
    }
}

@Suite("role policy")
struct RolePolicyTests {
    @Test("root and the daemon's user are admins; else the highest role given to the user or a group; else the default")
    func lookup() {
        let policy = RolePolicy(
            members: [.admin: [.user(1001)], .user: [.group(500)], .viewer: [.user(1002), .user(1003)]],
            defaultRole: .viewer, daemonUID: 999)
        #expect(policy.role(of: Peer(pid: 1, uid: 0, gid: 0)) == .admin)
        #expect(policy.role(of: Peer(pid: 1, uid: 999, gid: 999)) == .admin)
        #expect(policy.role(of: Peer(pid: 1, uid: 1001, gid: 1001)) == .admin)
        // Listed as viewer, but a member of a group with the user role: the higher.
        #expect(policy.role(of: Peer(pid: 1, uid: 1002, gid: 1002, groups: [500])) == .user)
        #expect(policy.role(of: Peer(pid: 1, uid: 1003, gid: 500)) == .user)
        #expect(policy.role(of: Peer(pid: 1, uid: 1004, gid: 1004)) == .viewer)
        var closed = policy
        closed.defaultRole = nil
        #expect(closed.role(of: Peer(pid: 1, uid: 1004, gid: 1004)) == nil)
        #expect(Role.viewer < .user && Role.user < .admin)
    }
}
