internal import HomeModel
@_spi(Wire) internal import HomeWire

/// Everything a connection decides, with no I/O: the hello and the frame size it
/// negotiates, the table of open calls, per-connection limits, go-away.
///
/// `ConnectionHandler` feeds it each frame and carries out what it answers; tests
/// drive it directly or through an `EmbeddedChannel`.
struct ConnectionStateMachine {
    /// The limits a connection runs with (from `ServerConfiguration`).
    struct Limits {
        /// The largest frame either side may send; a hello may ask for less, down
        /// to `minimumFrameSize`.
        var maxFrameSize: Int
        var maxStreams: Int
    }

    /// The smallest frame size a hello can negotiate: enough for any hello reply,
    /// status or single event, so that a client asking for 100 bytes cannot break
    /// its own connection. Documented in docs/protocol.md.
    static let minimumFrameSize = 64 * 1024

    /// An open call, as the connection tracks it.
    enum OpenCall {
        /// A unary call whose answer comes later (the handler returned a future).
        case unary
        /// A server stream, until it ends.
        case stream(any ServerStreamCall)
    }

    enum Phase: Equatable {
        case awaitingHello
        case open
        /// Go-away was sent: no new calls; open ones finish.
        case goingAway
    }

    let limits: Limits
    private(set) var phase = Phase.awaitingHello
    private(set) var clientName = ""
    /// The frame size both sides keep to, once the hello negotiated it.
    private(set) var frameSize: Int
    private(set) var calls: [UInt64: OpenCall] = [:]
    /// The highest call id this connection accepted: what go-away reports.
    private(set) var highestAcceptedCallID: UInt64 = 0

    init(limits: Limits) {
        self.limits = limits
        self.frameSize = limits.maxFrameSize
    }

    var openStreamCount: Int {
        calls.values.reduce(0) { count, call in
            if case .stream = call { return count + 1 }
            return count
        }
    }

    // MARK: Frames

    /// What the connection must do with a frame.
    enum FrameAction {
        /// The hello was accepted: answer with a hello reply of this frame size.
        case acceptHello(Hello, frameSize: Int)
        /// Answer on call 0 with this status and close: the connection is unusable.
        case fail(HomeError)
        /// Run the call (the router decides what it is).
        case dispatch(callID: UInt64, IncomingCall)
        /// Answer with this frame and carry on.
        case reply(WireFrame)
        /// The client cancelled this call: stop it, then confirm with CANCELLED.
        case cancel(callID: UInt64, OpenCall)
        case ignore
    }

    /// Decides what a frame from the client means.
    mutating func receive(_ frame: WireFrame) -> FrameAction {
        if phase == .awaitingHello { return receiveHello(frame) }
        switch frame.body {
        case .open(let open):
            return self.open(callID: frame.callID, IncomingCall(open))
        case .cancel:
            guard let call = calls.removeValue(forKey: frame.callID) else { return .ignore }
            return .cancel(callID: frame.callID, call)
        case .ping(let nonce):
            return .reply(WireFrame(callID: 0, body: .pong(nonce: nonce)))
        case .pong:
            return .ignore
        case .hello:
            return .reply(
                WireFrame(
                    callID: 0,
                    body: .status(
                        HomeError(
                            .failedPrecondition, "hello was already received on this connection"))))
        case .helloReply, .message, .status, .goAway:
            return .reply(
                WireFrame(
                    callID: frame.callID,
                    body: .status(
                        HomeError(
                            .unimplemented, "clients may not send \(frame.body.kindName) frames (call \(frame.callID))")
                    )))
        }
    }

    private mutating func receiveHello(_ frame: WireFrame) -> FrameAction {
        guard case .hello(let hello) = frame.body else {
            return .fail(
                HomeError(
                    .failedPrecondition,
                    "the first frame must be a hello, not \(frame.body.kindName) (call \(frame.callID))"))
        }
        guard hello.protocolVersion == homeProtocolVersion else {
            return .fail(
                HomeError(
                    .failedPrecondition,
                    "protocol version \(hello.protocolVersion) is not supported: "
                        + "this daemon speaks version \(homeProtocolVersion)"))
        }
        phase = .open
        clientName = hello.clientName
        frameSize = Self.negotiatedFrameSize(asked: hello.maxFrameSize, limit: limits.maxFrameSize)
        return .acceptHello(hello, frameSize: frameSize)
    }

    /// The frame size a hello's `max_frame_size` gets: 0 is the daemon's limit;
    /// otherwise the smaller of the two, but never below `minimumFrameSize`.
    static func negotiatedFrameSize(asked: UInt32, limit: Int) -> Int {
        guard asked != 0 else { return limit }
        return min(max(Int(asked), min(minimumFrameSize, limit)), limit)
    }

    mutating func open(callID: UInt64, _ open: IncomingCall) -> FrameAction {
        guard callID != 0 else {
            return .reply(
                WireFrame(
                    callID: 0,
                    body: .status(
                        HomeError(
                            .invalidArgument, "call id 0 is reserved for the connection; open calls with ids from 1"))))
        }
        // The refusal goes on call 0, so that the open call with this id sees
        // nothing but its own messages and its one status.
        guard calls[callID] == nil else {
            return .reply(
                WireFrame(
                    callID: 0,
                    body: .status(
                        HomeError(
                            .alreadyExists,
                            "call \(callID) is already open on this connection; the second open was ignored"))))
        }
        guard phase == .open else {
            return .reply(
                WireFrame(callID: callID, body: .status(HomeError(.unavailable, "the daemon is shutting down"))))
        }
        highestAcceptedCallID = max(highestAcceptedCallID, callID)
        return .dispatch(callID: callID, open)
    }

    // MARK: Calls

    /// Whether another stream may open (the handler asks before it starts one).
    func checkStreamLimit() throws(HomeError) {
        guard openStreamCount < limits.maxStreams else {
            throw HomeError(.resourceExhausted, "too many open streams on this connection (limit \(limits.maxStreams))")
        }
    }

    /// Records a call that stays open after its open frame was handled.
    mutating func opened(_ callID: UInt64, _ call: OpenCall) {
        calls[callID] = call
    }

    /// Forgets a call that ended; returns it if it was still open (so that its end
    /// is reported exactly once).
    mutating func ended(_ callID: UInt64) -> OpenCall? {
        calls.removeValue(forKey: callID)
    }

    func stream(_ callID: UInt64) -> (any ServerStreamCall)? {
        if case .stream(let stream) = calls[callID] { return stream }
        return nil
    }

    /// Starts going away: no new calls. Returns the call id to report and the
    /// streams to end, or nil when already going away.
    mutating func goAway() -> (lastCallID: UInt64, streams: [any ServerStreamCall])? {
        guard phase != .goingAway else { return nil }
        phase = .goingAway
        let streams = calls.values.compactMap { call -> (any ServerStreamCall)? in
            if case .stream(let stream) = call { return stream }
            return nil
        }
        return (highestAcceptedCallID, streams)
    }

    /// The connection closed: every open call is dropped.
    mutating func closed() -> [OpenCall] {
        defer { calls.removeAll() }
        return Array(calls.values)
    }
}

extension WireFrame.Body {
    /// The frame kind's name in the schema, for error messages.
    var kindName: String {
        switch self {
        case .hello: return "hello"
        case .helloReply: return "hello_reply"
        case .open: return "open"
        case .message: return "message"
        case .status: return "status"
        case .cancel: return "cancel"
        case .ping: return "ping"
        case .pong: return "pong"
        case .goAway: return "go_away"
        }
    }
}
