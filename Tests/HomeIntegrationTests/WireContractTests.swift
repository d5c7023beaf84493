import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import NIOCore
import Testing

/// What docs/protocol.md promises a client written from the schema alone, each
/// checked over a real socket with a raw connection (no Swift client in between).
@Suite("the wire contract, over a real socket", .timeLimit(.safetyNet))
struct WireContractTests {
    static func status(_ frame: WireFrame?) -> HomeError? {
        if case .status(let error)? = frame?.body { return error }
        return nil
    }

    static func open(
        _ raw: RawConnection, _ callID: UInt64, _ method: String, _ request: some WireMessage,
        timeoutMs: UInt32? = nil
    ) throws {
        try raw.send(
            WireFrame(
                callID: callID,
                body: .open(
                    CallOpen(
                        method: method, request: request.encoded(),
                        timeoutMs: timeoutMs))))
    }

    @Test("the negotiated frame size binds the client: a larger frame gets RESOURCE_EXHAUSTED on call 0 and a close")
    func inboundLimit() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            let reply = try raw.hello(maxFrameSize: 100)
            #expect(reply.maxFrameSize == 65_536)  // the stated floor
            let ids = (0..<20_000).map { ObjectID($0) }  // ~ 60 KB of varints + more
            try Self.open(
                raw, 1, HomeMethods.readCharacteristics.name,
                ReadCharacteristicsRequest(characteristicIDs: ids + ids))
            let frames = try raw.receiveUntilClosed()
            #expect(frames.last?.callID == 0)
            #expect(Self.status(frames.last)?.code == .resourceExhausted)
            #expect(Self.status(frames.last)?.message.contains("negotiated") == true)
        }
    }

    @Test(
        "the negotiated frame size binds the daemon: a larger response is RESOURCE_EXHAUSTED on its call; streams split"
    )
    func outboundLimit() async throws {
        let graph = ScaleHome.make(accessories: 400, rooms: 4)
        try await withPatientServer(graph: graph) { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello(maxFrameSize: 65_536)
            try Self.open(raw, 1, HomeMethods.getHome.name, GetHomeRequest())
            let refused = try raw.receive()
            #expect(refused?.callID == 1)
            #expect(Self.status(refused)?.code == .resourceExhausted)
            #expect(Self.status(refused)?.message.contains("65536") == true)
            // The connection carries on; a snapshot of 2 400 readable values comes in frames of at most 64 KiB.
            try Self.open(raw, 2, HomeMethods.subscribe.name, SubscribeRequest(snapshot: true))
            var snapshot = 0
            while let frame = try raw.receive() {
                #expect(frame.encoded().readableBytes - 4 <= 65_536)
                guard case .message(let bytes) = frame.body else {
                    Issue.record("\(frame)")
                    break
                }
                let message = try SubscribeResponse(wire: bytes)
                snapshot += message.snapshot.count
                if message.marker?.kind == .snapshotEnd { break }
            }
            #expect(snapshot == graph.characteristics.values.filter(\.properties.readable).count)
        }
    }

    @Test(
        "after RegisterAccessories its response comes first, then the read of what it gave no value (Clients/README.md)"
    )
    func registrationReadFollowsResponse() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try Self.open(raw, 1, HomeMethods.openProvider.name, OpenProviderRequest(providerID: "raw"))
            let opened = try #require(try raw.receive())
            guard case .message(let first) = opened.body, case .opened = try ProviderCommand(wire: first).kind else {
                Issue.record("the stream did not open: \(opened)")
                return
            }
            let sensor = ProvidedAccessory(
                key: "door", name: "Hall Door", category: .sensor,
                services: [
                    ProvidedService(
                        type: "ContactSensor", characteristics: [ProvidedCharacteristic(type: "ContactSensorState")])
                ])
            try Self.open(
                raw, 2, HomeMethods.registerAccessories.name, RegisterAccessoriesRequest(accessories: [sensor]))
            var order: [String] = []
            var readIDs: [ObjectID] = []
            var registered: RegisterAccessoriesResponse?
            while order.count < 3, let frame = try raw.receive() {
                switch (frame.callID, frame.body) {
                case (2, .message(let bytes)):
                    registered = try RegisterAccessoriesResponse(wire: bytes)
                    order.append("response")
                case (2, .status(let error)):
                    order.append(error == nil ? "ok" : "status \(String(describing: error))")
                case (1, .message(let bytes)):
                    if case .read(let ids) = try ProviderCommand(wire: bytes).kind { readIDs = ids }
                    order.append("read")
                default:
                    order.append("\(frame)")
                }
            }
            #expect(order == ["response", "ok", "read"])
            // The read names the characteristic the response gave the provider.
            let contact = registered?.characteristics.values.first { $0.type.name == "ContactSensorState" }
            #expect(readIDs == [try #require(contact).id])
        }
    }

    @Test("a second open on an open call id is refused on call 0; the first call gets exactly one status, its own")
    func duplicateCallID() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try Self.open(raw, 5, HomeMethods.subscribe.name, SubscribeRequest())
            #expect(try raw.receive()?.callID == 5)  // SUBSCRIBED
            try Self.open(raw, 5, HomeMethods.getStatus.name, GetStatusRequest())
            let refusal = try raw.receive()
            #expect(refusal?.callID == 0)
            #expect(Self.status(refusal)?.code == .alreadyExists)
            try raw.send(WireFrame(callID: 5, body: .cancel))
            let end = try raw.receive()
            #expect(end?.callID == 5)
            #expect(Self.status(end)?.code == .cancelled)
            // Nothing more for call 5; the connection is fine.
            try Self.open(raw, 6, HomeMethods.getStatus.name, GetStatusRequest())
            #expect(try raw.receive()?.callID == 6)
            #expect(try raw.receive().map { Self.status($0) == nil && $0.callID == 6 } == true)
        }
    }

    @Test("timeout_ms ends a stream with DEADLINE_EXCEEDED; present and 0 refuses the call and does nothing")
    func deadlines() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            let lamp = server.store.snapshot().graph.id("Living Room/Lamp/Brightness")
            try Self.open(raw, 1, HomeMethods.subscribe.name, SubscribeRequest(), timeoutMs: 200)
            #expect(try raw.receive()?.callID == 1)  // SUBSCRIBED
            let end = try raw.receive()
            #expect(end?.callID == 1)
            #expect(Self.status(end)?.code == .deadlineExceeded)
            let before = server.store.lastSeq
            try Self.open(
                raw, 2, HomeMethods.writeCharacteristics.name,
                WriteCharacteristicsRequest(writes: [CharacteristicWrite(characteristicID: lamp, value: .int(3))]),
                timeoutMs: 0)
            let refused = try raw.receive()
            #expect(Self.status(refused)?.code == .deadlineExceeded)
            #expect(server.store.lastSeq == before)
        }
    }

    @Test("go-away carries the highest call id accepted; SUBSCRIBED is every stream's first message")
    func goAwayAndSubscribedFirst() async throws {
        let server = try await startPatientServer()
        let raw = try RawConnection(path: server.socketPath)
        _ = try raw.hello()
        for (callID, request) in [
            (3, SubscribeRequest(snapshot: true)), (11, SubscribeRequest()),
            (7, SubscribeRequest(sinceSeq: 0, journalID: "gone")),
        ] as [(UInt64, SubscribeRequest)] {
            try Self.open(raw, callID, HomeMethods.subscribe.name, request)
        }
        // Each stream's first message, whatever the others sent in between.
        var firsts: [UInt64: StreamMarker.Kind?] = [:]
        while firsts.count < 3, let frame = try raw.receive() {
            guard firsts[frame.callID] == nil, case .message(let bytes) = frame.body else { continue }
            firsts[frame.callID] = try SubscribeResponse(wire: bytes).marker?.kind
        }
        #expect(firsts == [3: .subscribed, 11: .subscribed, 7: .subscribed])
        await server.stop()
        let frames = try raw.receiveUntilClosed()
        let goAway = frames.first { if case .goAway = $0.body { true } else { false } }
        guard case .goAway(_, let lastCallID)? = goAway?.body else {
            Issue.record("no go-away in \(frames)")
            return
        }
        #expect(lastCallID == 11)
    }

    @Test("resuming from a sequence number never issued says so in the resync reason")
    func resumeFromTheFuture() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            var iterator = client.subscribe(SubscribeRequest(sinceSeq: 1_000_000, journalID: client.hello.journalID))
                .makeAsyncIterator()
            _ = try await iterator.next()  // SUBSCRIBED
            let resync = try await iterator.next()?.marker
            #expect(resync?.kind == .resync)
            #expect(resync?.reason.contains("sequence number 1000000 was never issued") == true)
            await client.close()
        }
    }

    @Test("a connection with a stream that never answers pings is closed; its subscription goes")
    func unansweredPings() async throws {
        try await withPatientServer(configure: { $0.keepaliveIntervalMs = 100 }) { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try Self.open(raw, 1, HomeMethods.subscribe.name, SubscribeRequest())
            let frames = try raw.receiveUntilClosed()
            #expect(frames.contains { if case .ping = $0.body { true } else { false } })
            #expect(frames.last?.callID == 0)
            #expect(Self.status(frames.last)?.code == .deadlineExceeded)
            // The daemon drops the subscription as it sees the close, a moment after the client does.
            for _ in 0..<200 where server.store.subscriptionCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(server.store.subscriptionCount == 0)
        }
    }
}

@Suite("what one client can pin", .timeLimit(.safetyNet))
struct MemoryCapTests {
    @Test("queue limits are capped per subscription and, in bytes, per connection")
    func caps() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            var huge = client.subscribe(SubscribeRequest(queueLimit: 65_536)).makeAsyncIterator()
            let refused = await #expect(throws: HomeError.self) { _ = try await huge.next() }
            #expect(refused?.code == .invalidArgument)
            #expect(refused?.message.contains("queue_limit 65536 exceeds the daemon's maximum of 16384") == true)
            // 16 384 events × 256 bytes = 4 MiB a subscription: four fit in a connection's 16 MiB, a fifth does not.
            var open: [HomeSubscription.AsyncIterator] = []
            for _ in 0..<4 {
                var iterator = client.subscribe(SubscribeRequest(queueLimit: 16_384)).makeAsyncIterator()
                #expect(try await iterator.next()?.marker?.kind == .subscribed)
                open.append(iterator)
            }
            var fifth = client.subscribe(SubscribeRequest(queueLimit: 16_384)).makeAsyncIterator()
            let full = await #expect(throws: HomeError.self) { _ = try await fifth.next() }
            #expect(full?.code == .resourceExhausted)
            #expect(full?.message.contains("already reserve 16777216") == true)
            // Another connection has its own budget.
            let other = try await server.connect()
            var elsewhere = other.subscribe(SubscribeRequest(queueLimit: 16_384)).makeAsyncIterator()
            #expect(try await elsewhere.next()?.marker?.kind == .subscribed)
            await client.close()
            await other.close()
            _ = open
        }
    }
}

@Suite("found by torture tests", .timeLimit(.safetyNet))
struct TortureTests {
    @Test("a timer dated near INT64_MIN is refused over the wire; the daemon keeps serving and saves nothing")
    func ancientTimer() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let before = server.store.snapshot().graph
            let home = try #require(before.homeOrder.first)
            let error = await #expect(throws: HomeError.self) {
                try await client.changeLayout(
                    .addTrigger(
                        name: "Crash loop", homeID: home,
                        kind: .timer(fireDateMs: .min + 1, timeZone: "UTC", recurrence: .hourly),
                        actionSetIDs: [], enabled: true))
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("fire_date_ms \(Int64.min + 1) is outside") == true)
            try await Task.sleep(for: .milliseconds(200))  // when the old daemon trapped
            #expect(try await client.status().seq == server.store.lastSeq)
            #expect(server.store.snapshot().graph == before)
            await client.close()
        }
    }
}

extension TortureTests {
    @Test("an unknown policy is refused over the wire, not taken as coalesce")
    func unknownPolicy() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try raw.send(
                WireFrame(callID: 1, body: .open(CallOpen(method: HomeMethods.subscribe.name, request: [0x30, 0x07]))))
            let answer = try raw.receive()
            #expect(answer?.callID == 1)
            guard case .status(let error?)? = answer?.body else {
                Issue.record("\(String(describing: answer))")
                return
            }
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("SubscribeRequest.policy: unknown value 7"))
            #expect(server.store.subscriptionCount == 0)
        }
    }
}
