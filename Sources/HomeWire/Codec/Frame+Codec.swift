internal import CHomeProto
public import HomeModel
public import NIOCore

extension WireFrame {
    /// Appends this frame, header included, to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let frame = arena.allocate(Home__V1__Frame.self)
        home__v1__frame__init(frame)
        frame.pointee.call_id = callID
        switch body {
        case .hello(let hello):
            let message = arena.allocate(Home__V1__Hello.self)
            home__v1__hello__init(message)
            message.pointee.protocol_version = hello.protocolVersion
            message.pointee.client_name = arena.cString(hello.clientName)
            message.pointee.max_frame_size = hello.maxFrameSize
            message.pointee.n_capabilities = hello.capabilities.count
            message.pointee.capabilities = arena.array(
                UnsafeMutablePointer<CChar>?.self, count: hello.capabilities.count
            ) {
                $0.cString(hello.capabilities[$1])
            }
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_HELLO
            frame.pointee.hello = message
        case .helloReply(let reply):
            let message = arena.allocate(Home__V1__HelloReply.self)
            home__v1__hello_reply__init(message)
            message.pointee.protocol_version = reply.protocolVersion
            message.pointee.server_name = arena.cString(reply.serverName)
            message.pointee.server_version = arena.cString(reply.serverVersion)
            message.pointee.connection_id = reply.connectionID
            message.pointee.max_frame_size = reply.maxFrameSize
            message.pointee.journal_id = arena.cString(reply.journalID)
            message.pointee.n_capabilities = reply.capabilities.count
            message.pointee.capabilities = arena.array(
                UnsafeMutablePointer<CChar>?.self, count: reply.capabilities.count
            ) {
                $0.cString(reply.capabilities[$1])
            }
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_HELLO_REPLY
            frame.pointee.hello_reply = message
        case .open(let open):
            let message = arena.allocate(Home__V1__CallOpen.self)
            home__v1__call_open__init(message)
            message.pointee.method = arena.cString(open.method)
            message.pointee.request = arena.binary(open.request)
            if let timeout = open.timeoutMs {
                message.pointee.timeout_present_case = HOME__V1__CALL_OPEN__TIMEOUT_PRESENT_TIMEOUT_MS
                message.pointee.timeout_ms = timeout
            }
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_OPEN
            frame.pointee.open = message
        case .message(let payload):
            let message = arena.allocate(Home__V1__CallMessage.self)
            home__v1__call_message__init(message)
            message.pointee.payload = arena.binary(payload)
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_MESSAGE
            frame.pointee.message = message
        case .status(let error):
            let message = arena.allocate(Home__V1__CallStatus.self)
            home__v1__call_status__init(message)
            if let error {
                message.pointee.code = Home__V1__StatusCode(rawValue: UInt32(error.code.rawValue))
                message.pointee.message = arena.cString(error.message)
            }
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_STATUS
            frame.pointee.status = message
        case .cancel:
            let message = arena.allocate(Home__V1__CallCancel.self)
            home__v1__call_cancel__init(message)
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_CANCEL
            frame.pointee.cancel = message
        case .ping(let nonce):
            let message = arena.allocate(Home__V1__Ping.self)
            home__v1__ping__init(message)
            message.pointee.nonce = nonce
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_PING
            frame.pointee.ping = message
        case .pong(let nonce):
            let message = arena.allocate(Home__V1__Pong.self)
            home__v1__pong__init(message)
            message.pointee.nonce = nonce
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_PONG
            frame.pointee.pong = message
        case .goAway(let reason, let lastCallID):
            let message = arena.allocate(Home__V1__GoAway.self)
            home__v1__go_away__init(message)
            message.pointee.reason = arena.cString(reason)
            message.pointee.last_call_id = lastCallID
            frame.pointee.kind_case = HOME__V1__FRAME__KIND_GO_AWAY
            frame.pointee.go_away = message
        }
        packMessage(frame, into: &buffer, withFrameHeader: true)
    }

    /// The encoded frame, header included.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return buffer
    }

    /// Decodes one frame body (the bytes after the header).
    public init(decoding body: ByteBuffer) throws(HomeError) {
        let result: Result<WireFrame, HomeError> = body.withUnsafeReadableBytes { bytes in
            do throws(HomeError) {
                return .success(try WireFrame(decoding: bytes))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.Frame", unpack: home__v1__frame__unpack,
            free: home__v1__frame__free_unpacked
        ) { frame throws(HomeError) in
            let callID = frame.pointee.call_id
            switch frame.pointee.kind_case {
            case HOME__V1__FRAME__KIND_HELLO:
                let hello = frame.pointee.hello!.pointee
                return WireFrame(
                    callID: callID,
                    body: .hello(
                        Hello(
                            protocolVersion: hello.protocol_version,
                            clientName: swiftString(hello.client_name),
                            capabilities: try swiftArray(hello.capabilities, hello.n_capabilities) { swiftString($0) },
                            maxFrameSize: hello.max_frame_size)))
            case HOME__V1__FRAME__KIND_HELLO_REPLY:
                let reply = frame.pointee.hello_reply!.pointee
                return WireFrame(
                    callID: callID,
                    body: .helloReply(
                        HelloReply(
                            protocolVersion: reply.protocol_version,
                            serverName: swiftString(reply.server_name),
                            serverVersion: swiftString(reply.server_version),
                            connectionID: reply.connection_id,
                            maxFrameSize: reply.max_frame_size,
                            capabilities: try swiftArray(reply.capabilities, reply.n_capabilities) { swiftString($0) },
                            journalID: swiftString(reply.journal_id))))
            case HOME__V1__FRAME__KIND_OPEN:
                let open = frame.pointee.open!.pointee
                let timeout =
                    open.timeout_present_case == HOME__V1__CALL_OPEN__TIMEOUT_PRESENT_TIMEOUT_MS ? open.timeout_ms : nil
                return WireFrame(
                    callID: callID,
                    body: .open(
                        CallOpen(
                            method: swiftString(open.method), request: swiftBytes(open.request), timeoutMs: timeout)))
            case HOME__V1__FRAME__KIND_MESSAGE:
                return WireFrame(callID: callID, body: .message(swiftBytes(frame.pointee.message!.pointee.payload)))
            case HOME__V1__FRAME__KIND_STATUS:
                let status = frame.pointee.status!.pointee
                let error = HomeError.Code(wireValue: Int(status.code.rawValue)).map {
                    HomeError($0, swiftString(status.message))
                }
                return WireFrame(callID: callID, body: .status(error))
            case HOME__V1__FRAME__KIND_CANCEL:
                return WireFrame(callID: callID, body: .cancel)
            case HOME__V1__FRAME__KIND_PING:
                return WireFrame(callID: callID, body: .ping(nonce: frame.pointee.ping!.pointee.nonce))
            case HOME__V1__FRAME__KIND_PONG:
                return WireFrame(callID: callID, body: .pong(nonce: frame.pointee.pong!.pointee.nonce))
            case HOME__V1__FRAME__KIND_GO_AWAY:
                let goAway = frame.pointee.go_away!.pointee
                return WireFrame(
                    callID: callID,
                    body: .goAway(
                        reason: swiftString(goAway.reason),
                        lastCallID: goAway.last_call_id))
            default:
                throw HomeError(
                    .invalidArgument,
                    "frame on call \(callID) carries no known kind (field number \(frame.pointee.kind_case.rawValue))")
            }
        }
    }
}

extension WireFrame {
    /// Appends a `message` frame carrying `payload` (an encoded response or stream
    /// message): the hot path of every reply and every stream write.
    public static func encodeMessage(callID: UInt64, payload: ByteBuffer, into buffer: inout ByteBuffer) {
        encodeMessageHeader(callID: callID, payloadLength: payload.readableBytes, into: &buffer)
        buffer.writeImmutableBuffer(payload)
    }

    /// Appends everything of a `message` frame up to its payload, which the caller
    /// then appends (`payloadLength` bytes, possibly in several pieces): a stream
    /// write puts the events packed for every subscriber straight after it, with
    /// no intermediate buffer.
    ///
    /// Written by hand rather than by protobuf-c, which can only pack a payload it
    /// is handed whole: `Frame { call_id = 1; message = 5 { payload = 1 } }` has a
    /// fixed shape, and a test checks these bytes against protobuf-c's for every
    /// size class of call id and payload. Zero call ids and empty payloads are
    /// left out, as protobuf-c leaves out proto3 defaults.
    public static func encodeMessageHeader(callID: UInt64, payloadLength: Int, into buffer: inout ByteBuffer) {
        let payloadField = payloadLength == 0 ? 0 : 1 + varintSize(UInt64(payloadLength)) + payloadLength
        let frameLength = messageFrameLength(callID: callID, payloadLength: payloadLength)
        buffer.reserveCapacity(minimumWritableBytes: frameHeaderLength + frameLength)
        buffer.writeInteger(UInt32(truncatingIfNeeded: frameLength))
        if callID != 0 {
            buffer.writeInteger(callIDKey)
            buffer.writeVarint(callID)
        }
        buffer.writeInteger(messageKey)
        buffer.writeVarint(UInt64(payloadField))
        if payloadLength != 0 {
            buffer.writeInteger(payloadKey)
            buffer.writeVarint(UInt64(payloadLength))
        }
    }

    /// The length a `message` frame with this payload announces in its header (the
    /// frame's size as a frame-size limit counts it: without the 4-byte header).
    public static func messageFrameLength(callID: UInt64, payloadLength: Int) -> Int {
        let payloadField = payloadLength == 0 ? 0 : 1 + varintSize(UInt64(payloadLength)) + payloadLength
        let callIDField = callID == 0 ? 0 : 1 + varintSize(callID)
        return callIDField + 1 + varintSize(UInt64(payloadField)) + payloadField
    }

    /// Appends the OK `status` frame that closes a call: written by hand for the
    /// same reason, after every unary reply (checked against protobuf-c by a test).
    public static func encodeOKStatus(callID: UInt64, into buffer: inout ByteBuffer) {
        let callIDField = callID == 0 ? 0 : 1 + varintSize(callID)
        // An OK CallStatus has only defaults: an empty message.
        buffer.writeInteger(UInt32(callIDField + 2))
        if callID != 0 {
            buffer.writeInteger(callIDKey)
            buffer.writeVarint(callID)
        }
        buffer.writeInteger(statusKey)
        buffer.writeInteger(UInt8(0))
    }

    /// `Frame.call_id`: field 1, varint.
    private static let callIDKey: UInt8 = 1 << 3 | 0
    /// `Frame.message`: field 5, length-delimited.
    private static let messageKey: UInt8 = 5 << 3 | 2
    /// `Frame.status`: field 6, length-delimited.
    private static let statusKey: UInt8 = 6 << 3 | 2
    /// `CallMessage.payload`: field 1, length-delimited.
    private static let payloadKey: UInt8 = 1 << 3 | 2

    private static func varintSize(_ value: UInt64) -> Int {
        // 7 bits a byte; 0 still takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }
}
