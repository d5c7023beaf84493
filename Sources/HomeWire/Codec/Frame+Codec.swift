public import HomeModel
public import NIOCore

extension WireFrame {
    /// Appends this frame, header included, to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        packMessage(Proto.Frame(self).build(in: &arena), into: &buffer, withFrameHeader: true)
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
        let frame = try Proto.Frame(serialized: bytes)
        let body: Body
        switch frame.kind {
        case .hello(let hello)?: body = .hello(hello)
        case .helloReply(let reply)?: body = .helloReply(reply)
        case .open(let open)?: body = .open(open)
        case .message(let message)?: body = .message(message.payload)
        case .status(let status)?: body = .status(.fromWire(code: status.code, message: status.message))
        case .cancel?: body = .cancel
        case .ping(let ping)?: body = .ping(nonce: ping.nonce)
        case .pong(let pong)?: body = .pong(nonce: pong.nonce)
        case .goAway(let goAway)?: body = .goAway(reason: goAway.reason, lastCallID: goAway.lastCallID)
        case nil:
            throw HomeError(.invalidArgument, "frame on call \(frame.callID) carries no kind this daemon knows")
        }
        self.init(callID: frame.callID, body: body)
    }
}

extension Proto.Frame {
    init(_ frame: WireFrame) {
        callID = frame.callID
        switch frame.body {
        case .hello(let hello): kind = .hello(hello)
        case .helloReply(let reply): kind = .helloReply(reply)
        case .open(let open): kind = .open(open)
        case .message(let payload): kind = .message(Proto.CallMessage(payload: payload))
        case .status(let error):
            kind = .status(Proto.CallStatus(code: error?.code.wireNumber ?? 0, message: error?.message ?? ""))
        case .cancel: kind = .cancel(Proto.CallCancel())
        case .ping(let nonce): kind = .ping(Proto.Ping(nonce: nonce))
        case .pong(let nonce): kind = .pong(Proto.Pong(nonce: nonce))
        case .goAway(let reason, let lastCallID): kind = .goAway(Proto.GoAway(reason: reason, lastCallID: lastCallID))
        }
    }
}
