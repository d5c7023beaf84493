import Foundation
import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import Testing

@Suite("envelope and message codec")
struct CodecTests {
    static let frames: [WireFrame] = [
        WireFrame(
            callID: 0, body: .hello(Hello(clientName: "homectl", capabilities: ["a", "b"], maxFrameSize: 65536))),
        WireFrame(
            callID: 0,
            body: .helloReply(
                HelloReply(
                    serverName: "homed", serverVersion: "0.1.0", connectionID: 9,
                    maxFrameSize: 4_194_304, capabilities: ["batch-events"], journalID: "j"))),
        WireFrame(
            callID: 7,
            body: .open(CallOpen(method: HomeMethods.readCharacteristics.name, request: [1, 2, 3], timeoutMs: 250))),
        WireFrame(callID: 7, body: .open(CallOpen(method: HomeMethods.getHome.name, request: []))),
        WireFrame(callID: 7, body: .message([0, 255, 10])),
        WireFrame(callID: 7, body: .status(nil)),
        WireFrame(callID: 7, body: .status(HomeError(.notFound, "no characteristic with id 99"))),
        WireFrame(callID: 3, body: .cancel),
        WireFrame(callID: 0, body: .ping(nonce: 42)),
        WireFrame(callID: 0, body: .pong(nonce: .max)),
        WireFrame(callID: 0, body: .goAway(reason: "shutting down", lastCallID: 12)),
    ]

    @Test("every frame kind survives encode and decode", arguments: frames)
    func frameRoundTrip(_ frame: WireFrame) throws {
        var buffer = frame.encoded()
        let length = buffer.readInteger(as: UInt32.self)
        #expect(length.map(Int.init) == buffer.readableBytes)
        let decoded = try WireFrame(decoding: buffer)
        #expect(decoded == frame)
    }

    @Test("garbage bytes are INVALID_ARGUMENT naming the message")
    func garbage() {
        let error = #expect(throws: HomeError.self) {
            try WireFrame(decoding: ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("malformed home.v1.Frame") == true)
    }

    @Test("a string field with invalid UTF-8 is INVALID_ARGUMENT naming the field")
    func invalidUTF8() {
        // Frame { hello (2) { client_name (2): 0xC3 0x28 } }
        let bytes: [UInt8] = [0x12, 0x04, 0x12, 0x02, 0xC3, 0x28]
        let error = #expect(throws: HomeError.self) { try WireFrame(decoding: ByteBuffer(bytes: bytes)) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "field home.v1.Frame.hello.client_name is not valid UTF-8")
    }

    @Test("a string field with an embedded NUL is INVALID_ARGUMENT (protobuf-c would cut it)")
    func embeddedNUL() {
        // Frame { open (4) { method (1): "a\0b" } }
        let bytes: [UInt8] = [0x22, 0x05, 0x0A, 0x03, 0x61, 0x00, 0x62]
        let error = #expect(throws: HomeError.self) { try WireFrame(decoding: ByteBuffer(bytes: bytes)) }
        #expect(error?.message == "field home.v1.Frame.open.method contains a NUL byte")
    }

    @Test("invalid UTF-8 nested inside a request is found too")
    func nestedInvalidUTF8() {
        // SubscribeRequest { filter (1) { characteristic_types (8): 0xFF } }
        let bytes: [UInt8] = [0x0A, 0x03, 0x42, 0x01, 0xFF]
        let error = #expect(throws: HomeError.self) { try SubscribeRequest(wire: bytes) }
        #expect(error?.message == "field home.v1.SubscribeRequest.filter.characteristic_types is not valid UTF-8")
    }

    @Test("a request that does not decode is INVALID_ARGUMENT naming its type")
    func undecodableRequest() {
        let error = #expect(throws: HomeError.self) { try WriteCharacteristicsRequest(wire: [0x0A, 0x10, 0x01]) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("home.v1.WriteCharacteristicsRequest") == true)
    }

    @Test("a write without a value is INVALID_ARGUMENT naming the characteristic")
    func writeWithoutValue() {
        // WriteCharacteristicsRequest { writes (1) { characteristic_id (1): 5 } }
        let error = #expect(throws: HomeError.self) { try WriteCharacteristicsRequest(wire: [0x0A, 0x02, 0x08, 0x05]) }
        #expect(error?.message == "write to characteristic 5 carries no value")
    }

    @Test("a provider's answer with a status code the schema does not declare is INVALID_ARGUMENT naming it")
    func answerWithUndeclaredCode() {
        // CommandAnswer { request_id (1): 12, code (4): 999 }
        let whole = #expect(throws: HomeError.self) { try CommandAnswer(wire: [0x08, 0x0C, 0x20, 0xE7, 0x07]) }
        #expect(whole?.code == .invalidArgument)
        #expect(
            whole?.message
                == "the answer to request 12: status code 999 is not one the schema defines (StatusCode is 0 to 16)")
        // CommandAnswer { request_id: 12, writes (3) { characteristic_id (1): 86, code (2): 12345 } }
        let write = #expect(throws: HomeError.self) {
            try CommandAnswer(wire: [0x08, 0x0C, 0x1A, 0x05, 0x08, 0x56, 0x10, 0xB9, 0x60])
        }
        #expect(write?.code == .invalidArgument)
        #expect(write?.message.contains("request 12, characteristic 86 of its writes: status code 12345") == true)
        // CommandAnswer { request_id: 12, reads (2) { characteristic_id (1): 87, code (4): 999 } }
        let read = #expect(throws: HomeError.self) {
            try CommandAnswer(wire: [0x08, 0x0C, 0x12, 0x05, 0x08, 0x57, 0x20, 0xE7, 0x07])
        }
        #expect(read?.message.contains("request 12, characteristic 87 of its reads: status code 999") == true)
    }

    @Test("a provider's answer with the last declared status code (UNAUTHENTICATED) is taken")
    func answerWithDeclaredCode() throws {
        // CommandAnswer { request_id: 12, code: 16 }
        let answer = try CommandAnswer(wire: [0x08, 0x0C, 0x20, 0x10])
        #expect(answer.error?.code == .unauthenticated)
    }

    @Test("requests and responses survive encode and decode")
    func messagesRoundTrip() throws {
        let read = ReadCharacteristicsRequest(characteristicIDs: [1, 2, 300_000], fresh: true)
        #expect(try ReadCharacteristicsRequest(wire: read.encoded()) == read)

        let readResponse = ReadCharacteristicsResponse(
            reads: [
                CharacteristicRead(characteristicID: 1, value: .bool(true), lastUpdatedMs: 5),
                CharacteristicRead(
                    characteristicID: 2, value: nil, lastUpdatedMs: 0,
                    error: HomeError(.notFound, "no characteristic with id 2")),
                CharacteristicRead(characteristicID: 3, value: .string("héllo"), lastUpdatedMs: 6),
                CharacteristicRead(characteristicID: 4, value: .data([0, 1, 2]), lastUpdatedMs: 7),
                CharacteristicRead(characteristicID: 5, value: .float(-21.5), lastUpdatedMs: 8),
                CharacteristicRead(characteristicID: 6, value: .int(-3), lastUpdatedMs: 9),
                CharacteristicRead(characteristicID: 7, value: .uint(.max), lastUpdatedMs: 10),
            ], seq: 77)
        #expect(try ReadCharacteristicsResponse(wire: readResponse.encoded()) == readResponse)

        let write = WriteCharacteristicsRequest(
            writes: [CharacteristicWrite(characteristicID: 9, value: .uint(50))],
            atomic: true, validateOnly: true)
        #expect(try WriteCharacteristicsRequest(wire: write.encoded()) == write)

        let writeResponse = WriteCharacteristicsResponse(
            results: [
                WriteResult(characteristicID: 9, seq: 12),
                WriteResult(characteristicID: 10, error: HomeError(.invalidArgument, "too big")),
            ], seq: 12)
        #expect(try WriteCharacteristicsResponse(wire: writeResponse.encoded()) == writeResponse)

        let subscribe = SubscribeRequest(
            filter: SubscriptionFilter(
                homeIDs: [1], roomIDs: [2], zoneIDs: [3], accessoryIDs: [4], serviceIDs: [5],
                characteristicIDs: [6], serviceTypes: ["Lightbulb"], characteristicTypes: ["On"],
                kinds: [.valueChanged, .layoutChanged]),
            snapshot: true, sinceSeq: 0, journalID: "abc", excludeOwn: true, policy: .gap, queueLimit: 10,
            heartbeatMs: 1000, minIntervalMs: 50)
        #expect(try SubscribeRequest(wire: subscribe.encoded()) == subscribe)
        #expect(try SubscribeRequest(wire: SubscribeRequest().encoded()).sinceSeq == nil)
    }

    @Test("every event kind and marker survives a subscribe response")
    func subscribeResponseRoundTrip() throws {
        let origin = Origin(kind: .client, connectionID: 3, name: "homectl")
        let response = SubscribeResponse(
            journalID: "j",
            events: [
                HomeEvent(
                    seq: 1, timeMs: 10, origin: origin,
                    body: .value(
                        ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 4, value: .float(21.5), merged: 3))),
                HomeEvent(
                    seq: 2, timeMs: 11, origin: .simulator, body: .reachability(accessoryID: 2, reachable: false)),
                HomeEvent(
                    seq: 3, timeMs: 12, origin: .daemon,
                    body: .layout(
                        LayoutChange(
                            action: .moved, object: .accessory, objectID: 2, homeID: 1, name: "Lamp", parentID: 5))),
                HomeEvent(seq: 4, timeMs: 13, origin: origin, body: .primaryHome(1)),
                HomeEvent(
                    seq: 5, timeMs: 14, origin: Origin(kind: .automation, name: "Evening"), body: .actionSetExecuted(8)),
                HomeEvent(seq: 6, timeMs: 15, origin: Origin(kind: .automation), body: .triggerFired(9)),
                // Consecutive events from one origin (the decoder reuses the name), then
                // one differing only by connection id.
                HomeEvent(seq: 7, timeMs: 16, origin: origin, body: .triggerFired(9)),
                HomeEvent(seq: 8, timeMs: 16, origin: origin, body: .triggerFired(10)),
                HomeEvent(
                    seq: 9, timeMs: 16, origin: Origin(kind: .client, connectionID: 4, name: "homectl"),
                    body: .triggerFired(11)),
            ], marker: StreamMarker(kind: .gap, seq: 6, gapFrom: 2, gapTo: 5, reason: "full"))
        #expect(try SubscribeResponse(wire: response.encoded()) == response)
    }

    @Test("events packed once and spliced into a stream message encode byte for byte as protobuf-c packs the batch")
    func encodedEventsMatchBatchEncoding() throws {
        let origin = Origin(kind: .client, connectionID: 3, name: "homectl")
        let events = [
            HomeEvent(
                seq: 1, timeMs: 10, origin: origin,
                body: .value(
                    ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 4, value: .float(21.5), merged: 3))),
            HomeEvent(seq: 2, timeMs: 11, origin: .simulator, body: .reachability(accessoryID: 2, reachable: false)),
            HomeEvent(
                seq: 300, timeMs: 12, origin: .daemon,
                body: .layout(
                    LayoutChange(
                        action: .updated, object: .room, objectID: 2, homeID: 1,
                        name: String(repeating: "Wohnzimmer ", count: 20), parentID: 5))),
            HomeEvent(
                seq: 301, timeMs: 13, origin: origin,
                body: .value(
                    ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 5, value: .string("ü"), merged: 0))),
        ]
        var batch = ByteBuffer()
        SubscribeResponse.encode(journalID: "journal-1", events: events[...], marker: nil, into: &batch)
        var spliced = ByteBuffer()
        SubscribeResponse.encode(journalID: "journal-1", encodedEvents: events.map(EncodedEvent.init), into: &spliced)
        #expect(spliced == batch)
        // The long layout event needs a two-byte length: the splice writes varints, not bytes.
        #expect(events.map { EncodedEvent($0).bytes.readableBytes }.max()! > 130)
        #expect(
            try SubscribeResponse(wire: Array(spliced.readableBytesView))
                == SubscribeResponse(journalID: "journal-1", events: events))
        var empty = ByteBuffer()
        SubscribeResponse.encode(journalID: "j", encodedEvents: [EncodedEvent](), into: &empty)
        #expect(
            try SubscribeResponse(wire: Array(empty.readableBytesView)) == SubscribeResponse(journalID: "j", events: [])
        )
    }

    @Test(
        "message frames framed by hand are byte for byte what protobuf-c packs, for every size class of call id and payload",
        arguments: [0, 1, 127, 128, 16_383, 16_384, 300_000])
    func handFramedMessagesMatchProtobufC(payloadLength: Int) throws {
        let payload = (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for callID: UInt64 in [0, 1, 127, 128, 16_383, 16_384, 1 << 35, .max] {
            let packed = WireFrame(callID: callID, body: .message(payload)).encoded()
            var framed = ByteBuffer()
            WireFrame.encodeMessage(callID: callID, payload: ByteBuffer(bytes: payload), into: &framed)
            #expect(framed == packed, "call \(callID), payload of \(payloadLength) bytes")
            // The header alone, with the payload appended in two pieces, as a stream write does.
            var pieces = ByteBuffer()
            WireFrame.encodeMessageHeader(callID: callID, payloadLength: payloadLength, into: &pieces)
            pieces.writeBytes(payload.prefix(payloadLength / 2))
            pieces.writeBytes(payload.dropFirst(payloadLength / 2))
            #expect(pieces == packed, "call \(callID), payload of \(payloadLength) bytes in two pieces")
            framed.moveReaderIndex(forwardBy: 4)
            #expect(try WireFrame(decoding: framed) == WireFrame(callID: callID, body: .message(payload)))
            // And read back by hand, sliced from the frame, as a client reads a response.
            let sliced = WireFrame.messagePayload(of: framed)
            #expect(sliced?.callID == callID && sliced?.payload == ByteBuffer(bytes: payload), "call \(callID)")
        }
    }

    @Test("call-open frames read by hand hold what protobuf-c reads, request sliced from the frame")
    func handReadCallOpens() throws {
        for callID: UInt64 in [1, 128, 1 << 35, .max] {
            for requestLength in [0, 1, 200, 70_000] {
                for timeoutMs: UInt32? in [nil, 0, 5_000, .max] {
                    let request = (0..<requestLength).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                    let open = CallOpen(
                        method: HomeMethods.readCharacteristics.name, request: request, timeoutMs: timeoutMs)
                    var body = WireFrame(callID: callID, body: .open(open)).encoded()
                    body.moveReaderIndex(forwardBy: 4)
                    let read = try #require(WireFrame.callOpen(of: body))
                    let decoded = IncomingCall(open)
                    #expect(read.callID == callID)
                    #expect(read.call.method == decoded.method && read.call.request == decoded.request)
                    #expect(read.call.timeoutMs == decoded.timeoutMs)
                }
            }
        }
        // An open frame with nothing set is an empty call on call 0, as protobuf-c reads it.
        let bare = try #require(WireFrame.callOpen(of: ByteBuffer(bytes: [0x22, 0])))
        #expect(bare.callID == 0 && bare.call.method == "" && bare.call.timeoutMs == nil)
        // Left to protobuf-c (which refuses or merges them): a method with a NUL byte or
        // not UTF-8, a timeout past 32 bits, a field twice, a field the schema lacks.
        let declined: [[UInt8]] = [
            [0x08, 1, 0x22, 4, 0x0A, 2, 0x61, 0x00],
            [0x08, 1, 0x22, 4, 0x0A, 2, 0xC3, 0x28],
            [0x08, 1, 0x22, 7, 0x18, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00],
            [0x08, 1, 0x22, 6, 0x0A, 1, 0x61, 0x0A, 1, 0x62],
            [0x08, 1, 0x22, 2, 0x20, 1],
            [0x08, 1, 0x08, 2, 0x22, 0],
            [0x08, 1, 0x2A, 0],
        ]
        for bytes in declined {
            #expect(WireFrame.callOpen(of: ByteBuffer(bytes: bytes)) == nil, "\(bytes)")
        }
    }

    @Test("a frame the hand reader does not take apart exactly is left to protobuf-c")
    func handReaderDeclinesOtherShapes() throws {
        func body(_ frame: WireFrame) -> ByteBuffer {
            var bytes = frame.encoded()
            bytes.moveReaderIndex(forwardBy: 4)
            return bytes
        }
        // Other kinds of frame.
        #expect(WireFrame.messagePayload(of: body(WireFrame(callID: 3, body: .status(nil)))) == nil)
        #expect(WireFrame.messagePayload(of: body(WireFrame(callID: 3, body: .ping(nonce: 1)))) == nil)
        #expect(WireFrame.messagePayload(of: ByteBuffer()) == nil)
        // Frame { call_id 3, message { payload "ab" }, message { payload "c" } }: protobuf
        // merges the two messages (payload "c"); the hand reader leaves that to protobuf-c.
        let twice = ByteBuffer(bytes: [0x08, 3, 0x2A, 4, 0x0A, 2, 0x61, 0x62, 0x2A, 3, 0x0A, 1, 0x63])
        #expect(WireFrame.messagePayload(of: twice) == nil)
        #expect(try WireFrame(decoding: twice) == WireFrame(callID: 3, body: .message([0x63])))
        // A CallMessage with a field after its payload, and a length past the end.
        #expect(
            WireFrame.messagePayload(of: ByteBuffer(bytes: [0x08, 3, 0x2A, 6, 0x0A, 2, 0x61, 0x62, 0x10, 1])) == nil)
        #expect(WireFrame.messagePayload(of: ByteBuffer(bytes: [0x08, 3, 0x2A, 9, 0x0A, 2, 0x61, 0x62])) == nil)
        // An empty CallMessage is an empty payload, as protobuf-c reads it.
        let empty = ByteBuffer(bytes: [0x08, 3, 0x2A, 0])
        #expect(WireFrame.messagePayload(of: empty)?.payload == ByteBuffer())
        #expect(try WireFrame(decoding: empty) == WireFrame(callID: 3, body: .message([])))
    }

    @Test("the OK status framed by hand is byte for byte what protobuf-c packs")
    func handFramedOKStatusMatchesProtobufC() throws {
        for callID: UInt64 in [0, 1, 127, 128, 16_383, 16_384, 1 << 35, .max] {
            var framed = ByteBuffer()
            WireFrame.encodeOKStatus(callID: callID, into: &framed)
            #expect(framed == WireFrame(callID: callID, body: .status(nil)).encoded(), "call \(callID)")
            framed.moveReaderIndex(forwardBy: 4)
            #expect(try WireFrame(decoding: framed) == WireFrame(callID: callID, body: .status(nil)))
        }
    }

    @Test("the demo home survives GetHome's encoding, ids and all")
    func homeRoundTrip() throws {
        let graph = DemoHome.make(nowMs: 1_700_000_000_000)
        let response = GetHomeResponse(graph: graph, seq: 5, journalID: "j")
        let decoded = try GetHomeResponse(wire: response.encoded())
        #expect(decoded.graph == graph)
        #expect(decoded.seq == 5)
        #expect(decoded.journalID == "j")
    }

    /// The pages of a paged GetHome of `graph`, `pageSize` accessories each, as the daemon cuts them.
    static func pages(of graph: HomeGraph, pageSize: Int, seq: UInt64 = 5) -> [GetHomePage] {
        let total = graph.homeOrder.reduce(0) { $0 + (graph.homes[$1]?.accessoryIDs.count ?? 0) }
        return stride(from: 0, to: max(total, 1), by: pageSize).map { offset in
            let end = min(offset + pageSize, total)
            var buffer = ByteBuffer()
            GetHomeResponse.encodePage(
                graph: graph, homeIDs: graph.homeOrder, accessories: offset..<end, withTables: offset == 0,
                seq: seq, journalID: "j", nextPageToken: end < total ? "t\(end)" : "", into: &buffer)
            return GetHomePage(bytes: Array(buffer.readableBytesView))
        }
    }

    @Test("a home in pages of any size puts together to the same home", arguments: [1, 2, 3, 5, 256])
    func pagedHomeRoundTrip(pageSize: Int) throws {
        // Two homes, so that pages cross from one home's accessories to the next's.
        var graph = DemoHome.make(nowMs: 1_700_000_000_000)
        let second = try graph.addHome(name: "Cabin")
        let room = try graph.addRoom(name: "Loft", homeID: second)
        _ = try graph.addAccessory(
            AccessorySpec(
                name: "Loft Lamp", category: .lightbulb, manufacturer: "m", model: "m", serialNumber: "s",
                firmwareRevision: "1", provider: "test",
                services: [ServiceSpec(type: "Lightbulb", primary: true, characteristics: ["On": .bool(true)])]),
            homeID: second, roomID: room, nowMs: 0)
        var assembler = GetHomeAssembler()
        var tokens: [String] = []
        for page in Self.pages(of: graph, pageSize: pageSize) { tokens.append(try assembler.add(page)) }
        #expect(tokens.last == "" && tokens.dropLast().allSatisfy { !$0.isEmpty })
        let assembled = try assembler.response()
        #expect(assembled.graph == graph)
        #expect(assembled.seq == 5)
        #expect(assembled.journalID == "j")
    }

    @Test("pages from different snapshots, or naming a home the first page did not, are refused")
    func mismatchedPages() throws {
        let graph = DemoHome.make(nowMs: 1_700_000_000_000)
        var assembler = GetHomeAssembler()
        _ = try assembler.add(Self.pages(of: graph, pageSize: 2, seq: 5)[0])
        let later = #expect(throws: HomeError.self) {
            _ = try assembler.add(Self.pages(of: graph, pageSize: 2, seq: 6)[1])
        }
        #expect(later?.code == .invalidArgument)
        #expect(later?.message.contains("seq 6") == true)

        // A later page (no tables) for a home the first page did not bring.
        var other = DemoHome.make(nowMs: 1_700_000_000_000)
        let cabin = try other.addHome(name: "Cabin")
        _ = try other.addAccessory(
            AccessorySpec(
                name: "Cabin Lamp", category: .lightbulb, manufacturer: "m", model: "m", serialNumber: "s",
                firmwareRevision: "1", provider: "test",
                services: [ServiceSpec(type: "Lightbulb", primary: true, characteristics: ["On": .bool(true)])]),
            homeID: cabin, roomID: try #require(other.homes[cabin]).defaultRoomID, nowMs: 0)
        var stray = ByteBuffer()
        GetHomeResponse.encodePage(
            graph: other, homeIDs: [cabin], accessories: 0..<1, withTables: false, seq: 5,
            journalID: "j", nextPageToken: "", into: &stray)
        var fresh = GetHomeAssembler()
        _ = try fresh.add(Self.pages(of: graph, pageSize: 2)[0])
        let unknown = #expect(throws: HomeError.self) {
            _ = try fresh.add(GetHomePage(bytes: Array(stray.readableBytesView)))
        }
        #expect(unknown?.message.contains("home \(cabin), which the first page did not") == true)
        // A page alone is not a home.
        let alone = #expect(throws: HomeError.self) {
            _ = try GetHomeResponse(wire: Self.pages(of: graph, pageSize: 2)[0].bytes)
        }
        #expect(alone?.message.contains("GetHomeAssembler") == true)
    }
}

@Suite("golden frames shared with every client")
struct GoldenFrameTests {
    static func fixture(_ name: String) throws -> ByteBuffer {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/frames").standardized
        return ByteBuffer(bytes: try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// Decodes the file and checks it re-encodes to the same bytes.
    static func check(_ name: String, _ expected: WireFrame) throws {
        var bytes = try fixture(name)
        let original = bytes
        let length = bytes.readInteger(as: UInt32.self)
        #expect(length.map(Int.init) == bytes.readableBytes)
        let decoded = try WireFrame(decoding: bytes)
        #expect(decoded == expected)
        #expect(expected.encoded() == original)
    }

    /// The request a fixture's call-open frame carries.
    static func openedRequest(_ name: String) throws -> [UInt8] {
        var bytes = try fixture(name)
        bytes.moveReaderIndex(forwardBy: 4)
        guard case .open(let open) = try WireFrame(decoding: bytes).body else {
            throw HomeError(.invalidArgument, "\(name) is not a call-open frame")
        }
        return open.request
    }

    @Test("open_register_accessories.bin")
    func openRegisterAccessories() throws {
        let request = RegisterAccessoriesRequest(accessories: [
            ProvidedAccessory(
                key: "lamp-1", name: "Desk Lamp", category: .lightbulb,
                services: [
                    ProvidedService(
                        type: "Lightbulb",
                        characteristics: [
                            ProvidedCharacteristic(type: "On", value: .bool(true)),
                            // The format is given: an UNSPECIFIED one decodes as the catalog's (int)
                            // and would not re-encode to the same bytes.
                            ProvidedCharacteristic(
                                type: "Brightness",
                                metadata: CharacteristicMetadata(format: .int, minValue: 0, maxValue: 50)),
                        ])
                ])
        ])
        try Self.check(
            "open_register_accessories.bin",
            WireFrame(
                callID: 8,
                body: .open(CallOpen(method: HomeMethods.registerAccessories.name, request: request.encoded()))))
        #expect(try RegisterAccessoriesRequest(wire: Self.openedRequest("open_register_accessories.bin")) == request)
    }

    @Test("message_provider_write_command.bin")
    func providerWriteCommand() throws {
        let command = ProviderCommand(
            requestID: 12, timeoutMs: 5_000,
            kind: .write([CharacteristicWrite(characteristicID: 86, value: .bool(false))], atomic: false))
        try Self.check("message_provider_write_command.bin", WireFrame(callID: 7, body: .message(command.encoded())))
        var bytes = try Self.fixture("message_provider_write_command.bin")
        bytes.moveReaderIndex(forwardBy: 4)
        guard case .message(let payload) = try WireFrame(decoding: bytes).body else {
            Issue.record("not a message")
            return
        }
        #expect(try ProviderCommand(wire: payload) == command)
    }

    @Test("open_answer_command.bin")
    func openAnswerCommand() throws {
        let answer = CommandAnswer(requestID: 12, writes: [WriteResult(characteristicID: 86)])
        try Self.check(
            "open_answer_command.bin",
            WireFrame(
                callID: 9,
                body: .open(CallOpen(method: HomeMethods.answerCommand.name, request: answer.encoded()))))
        #expect(try CommandAnswer(wire: Self.openedRequest("open_answer_command.bin")) == answer)
    }

    @Test("hello.bin")
    func hello() throws {
        try Self.check("hello.bin", WireFrame(callID: 0, body: .hello(Hello(clientName: "homectl"))))
    }

    @Test("open_read_characteristics.bin")
    func openRead() throws {
        try Self.check(
            "open_read_characteristics.bin",
            WireFrame(
                callID: 1,
                body: .open(
                    CallOpen(
                        method: "home.v1.HomeService/ReadCharacteristics",
                        request: ReadCharacteristicsRequest(characteristicIDs: [7, 8]).encoded()))))
    }

    @Test("status_not_found.bin")
    func statusNotFound() throws {
        try Self.check(
            "status_not_found.bin",
            WireFrame(callID: 1, body: .status(HomeError(.notFound, "no characteristic with id 99"))))
    }

    @Test("open_subscribe_since_zero.bin: since_seq present with 0 is not absent")
    func subscribeSinceZero() throws {
        let request = SubscribeRequest(sinceSeq: 0, journalID: "golden-journal")
        try Self.check(
            "open_subscribe_since_zero.bin",
            WireFrame(
                callID: 3,
                body: .open(
                    CallOpen(
                        method: HomeMethods.subscribe.name, request: request.encoded()))))
        var bytes = try Self.fixture("open_subscribe_since_zero.bin")
        bytes.moveReaderIndex(forwardBy: 4)
        guard case .open(let open) = try WireFrame(decoding: bytes).body else {
            Issue.record("not an open")
            return
        }
        #expect(try SubscribeRequest(wire: open.request).sinceSeq == 0)
        #expect(try SubscribeRequest(wire: SubscribeRequest(journalID: "golden-journal").encoded()).sinceSeq == nil)
    }

    @Test("message_subscribe_value_event.bin")
    func subscribeValueEvent() throws {
        let response = SubscribeResponse(
            journalID: "golden-journal",
            events: [
                HomeEvent(
                    seq: 42, timeMs: 1_700_000_000_000, origin: Origin(kind: .client, connectionID: 3, name: "homectl"),
                    body: .value(ValueChange(accessoryID: 2, serviceID: 10, characteristicID: 12, value: .float(21.5))))
            ])
        try Self.check("message_subscribe_value_event.bin", WireFrame(callID: 2, body: .message(response.encoded())))
    }
}

@Suite("enum numbers the schema does not define")
struct UnknownEnumTests {
    @Test("a request's unknown enum number is INVALID_ARGUMENT naming the field and the number")
    func refused() throws {
        // SubscribeRequest { policy (6): 7 }
        let policy = #expect(throws: HomeError.self) { _ = try SubscribeRequest(wire: [0x30, 0x07]) }
        #expect(
            policy
                == HomeError(.invalidArgument, "SubscribeRequest.policy: unknown value 7, not one the schema defines"))
        // SubscribeRequest { filter (1) { kinds (9): [99] } }, packed
        let kind = #expect(throws: HomeError.self) { _ = try SubscribeRequest(wire: [0x0A, 0x03, 0x4A, 0x01, 99]) }
        #expect(kind?.message == "SubscriptionFilter.kinds: unknown value 99, not one the schema defines")
        // The defined ones still decode.
        #expect(try SubscribeRequest(wire: [0x30, 0x02]).policy == .disconnect)
        // A registration's characteristic with format 99: named by its place in the request.
        let characteristic: [UInt8] = [0x0A, 0x02] + Array("On".utf8) + [0x22, 0x02, 0x08, 99]
        let service: [UInt8] =
            [0x0A, 0x09] + Array("Lightbulb".utf8) + [0x32, UInt8(characteristic.count)] + characteristic
        let accessory: [UInt8] = [0x0A, 0x01] + Array("k".utf8) + [0x18, 0x05, 0x52, UInt8(service.count)] + service
        let format = #expect(throws: HomeError.self) {
            _ = try RegisterAccessoriesRequest(wire: [0x12, UInt8(accessory.count)] + accessory)
        }
        #expect(
            format?.message
                == "accessory 1 (key \"k\"), service 1 (\"Lightbulb\"), characteristic 1 (\"On\"): metadata.format: "
                + "unknown value 99, not one the schema defines")
    }
}
