import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

/// Every kind of bad input gets a clear error or a closed connection, and the
/// daemon keeps serving everyone else with nothing changed.
@Suite("bad input over the wire", .timeLimit(.safetyNet))
struct BadInputTests {
    /// A healthy client on the same daemon still reads the lamp afterwards.
    static func stillServes(_ server: TestServer) async throws {
        let client = try await server.connect(name: "bystander")
        let graph = try await client.getHome().graph
        let read = try await client.read([graph.id("Living Room/Lamp/Brightness")])
        #expect(read.reads.first?.error == nil)
        await client.close()
    }

    @Test("garbage bytes instead of a hello: INVALID_ARGUMENT on call 0, then the connection closes")
    func garbage() async throws {
        try await withPatientServer { server in
            let before = server.store.snapshot().graph
            let raw = try RawConnection(path: server.socketPath)
            try raw.send([0, 0, 0, 6, 0xDE, 0xAD, 0xBE, 0xEF, 0xFF, 0xFF])
            let frames = try raw.receiveUntilClosed()
            #expect(frames.count == 1)
            guard case .status(let error)? = frames.first?.body else {
                Issue.record("expected a status")
                return
            }
            #expect(frames.first?.callID == 0)
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("unreadable frame") == true)
            try await Self.stillServes(server)
            #expect(server.store.snapshot().graph == before)
        }
    }

    @Test("garbage after a good hello closes only that connection")
    func garbageAfterHello() async throws {
        try await withPatientServer { server in
            let other = try await server.connect(name: "other")
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try raw.send([0, 0, 0, 3, 0xFF, 0xFF, 0xFF])
            let frames = try raw.receiveUntilClosed()
            guard case .status(let error)? = frames.last?.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .invalidArgument)
            _ = try await other.status()  // the other connection is untouched
            await other.close()
        }
    }

    @Test("a truncated frame then a disconnect leaves the daemon serving")
    func truncatedThenDisconnect() async throws {
        try await withPatientServer { server in
            do {
                let raw = try RawConnection(path: server.socketPath)
                _ = try raw.hello()
                try raw.send([0, 0, 0, 100, 1, 2, 3])  // announces 100 bytes, sends 3
                raw.shutdownWrite()
                #expect(try raw.receiveUntilClosed().isEmpty)
            }
            try await Self.stillServes(server)
        }
    }

    @Test("a length over the limit: RESOURCE_EXHAUSTED naming both sizes, then close")
    func oversizedLength() async throws {
        try await withPatientServer(configure: { $0.maxFrameSize = 64 * 1024 }) { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try raw.send([0x7F, 0xFF, 0xFF, 0xFF])  // 2 GiB, never sent
            let frames = try raw.receiveUntilClosed()
            guard case .status(let error)? = frames.last?.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .resourceExhausted)
            #expect(error?.message == "frame of 2147483647 bytes exceeds the maximum frame size of 65536 bytes")
            try await Self.stillServes(server)
        }
    }

    @Test("an unknown method: UNIMPLEMENTED naming it; the connection stays usable")
    func unknownMethod() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try raw.send(
                WireFrame(callID: 4, body: .open(CallOpen(method: "home.v1.HomeService/Explode", request: []))))
            let frame = try #require(try raw.receive())
            #expect(frame.callID == 4)
            guard case .status(let error) = frame.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .unimplemented)
            #expect(error?.message.hasPrefix("unknown method 'home.v1.HomeService/Explode' (call 4)") == true)
            try raw.send(WireFrame(callID: 0, body: .ping(nonce: 99)))
            #expect(try raw.receive() == WireFrame(callID: 0, body: .pong(nonce: 99)))
        }
    }

    @Test("a request that does not decode: INVALID_ARGUMENT naming the request type")
    func undecodableRequest() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try raw.send(
                WireFrame(
                    callID: 1,
                    body: .open(
                        CallOpen(
                            method: HomeMethods.readCharacteristics.name,
                            request: [0x0A, 0x7F, 0x01]))))
            let frame = try #require(try raw.receive())
            guard case .status(let error) = frame.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("home.v1.ReadCharacteristicsRequest") == true)
        }
    }

    @Test("invalid UTF-8 in a string field: INVALID_ARGUMENT naming the field")
    func invalidUTF8() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            // SubscribeRequest { journal_id (4): 0xC3 0x28 }
            try raw.send(
                WireFrame(
                    callID: 2,
                    body: .open(
                        CallOpen(
                            method: HomeMethods.subscribe.name,
                            request: [0x22, 0x02, 0xC3, 0x28]))))
            let frame = try #require(try raw.receive())
            guard case .status(let error) = frame.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "field home.v1.SubscribeRequest.journal_id is not valid UTF-8")
            #expect(server.store.subscriptionCount == 0)
        }
    }

    @Test("a call before hello: FAILED_PRECONDITION, then close")
    func callBeforeHello() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            try raw.send(WireFrame(callID: 1, body: .open(CallOpen(method: HomeMethods.getStatus.name, request: []))))
            let frames = try raw.receiveUntilClosed()
            guard case .status(let error)? = frames.first?.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message == "the first frame must be a hello, not open (call 1)")
        }
    }

    @Test("an unsupported protocol version: FAILED_PRECONDITION naming both versions")
    func wrongVersion() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            try raw.send(WireFrame(callID: 0, body: .hello(Hello(protocolVersion: 9, clientName: "future"))))
            let frames = try raw.receiveUntilClosed()
            guard case .status(let error)? = frames.first?.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message == "protocol version 9 is not supported: this daemon speaks version 1")
        }
    }

    @Test("no hello within the timeout: DEADLINE_EXCEEDED, then close")
    func helloTimeout() async throws {
        try await withPatientServer(configure: { $0.helloTimeoutMs = 100 }) { server in
            let raw = try RawConnection(path: server.socketPath)
            let frames = try raw.receiveUntilClosed()
            guard case .status(let error)? = frames.first?.body else {
                Issue.record("expected a status")
                return
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.message == "no hello within 100 ms of connecting")
        }
    }

    @Test("more connections than the limit: RESOURCE_EXHAUSTED for the extra one")
    func connectionLimit() async throws {
        try await withPatientServer(configure: { $0.maxConnections = 2 }) { server in
            let first = try await server.connect()
            let second = try await server.connect()
            let error = await #expect(throws: HomeError.self) { _ = try await server.connect() }
            #expect(error?.code == .resourceExhausted)
            #expect(error?.message == "too many connections: the daemon accepts at most 2")
            await first.close()
            await second.close()
        }
    }
}
