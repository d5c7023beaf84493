internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// The client's end of one connection, on its event loop: matches frames to the
/// calls waiting for them, answers pings, hands stream messages to their
/// subscriptions with back-pressure.
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    typealias StreamSource = NIOThrowingAsyncSequenceProducer<
        SubscribeResponse, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark,
        SubscriptionDelegate
    >.Source

    private enum Pending {
        case unary(EventLoopPromise<ByteBuffer>, response: ByteBuffer?)
        case stream(StreamSource)
        /// A stream whose messages are handed on undecoded, without back-pressure
        /// (a provider's commands: the daemon bounds how many are outstanding).
        case rawStream(AsyncThrowingStream<[UInt8], any Error>.Continuation)
    }

    private var hello: EventLoopPromise<HelloReply>?
    private var calls: [UInt64: Pending] = [:]
    private var pausedStreams = Set<UInt64>()
    private var context: ChannelHandlerContext?
    /// Set once the daemon said go-away or the connection closed: new calls fail at once.
    private(set) var closedReason: HomeError?
    /// The last status the daemon sent on call 0: the reason, if the connection closes.
    private var connectionError: HomeError?

    /// The hello, written by the event loop the moment the connection is up: a
    /// caller whose task is slow to resume (a busy machine, a starved thread pool)
    /// cannot hold it back past the daemon's hello timeout.
    private var helloFrame: ByteBuffer?

    init(hello: EventLoopPromise<HelloReply>, helloFrame: ByteBuffer) {
        self.hello = hello
        self.helloFrame = helloFrame
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        if let frame = helloFrame {
            helloFrame = nil
            context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Calls (event loop only)

    func startUnary(callID: UInt64, open: CallOpen, promise: EventLoopPromise<ByteBuffer>) {
        guard let context, closedReason == nil else {
            promise.fail(closedReason ?? HomeError(.unavailable, "the connection to homed is closed"))
            return
        }
        calls[callID] = .unary(promise, response: nil)
        context.writeAndFlush(wrapOutboundOut(WireFrame(callID: callID, body: .open(open)).encoded()), promise: nil)
    }

    func startRawStream(
        callID: UInt64, open: CallOpen, continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    ) {
        guard let context, closedReason == nil else {
            continuation.finish(throwing: closedReason ?? HomeError(.unavailable, "the connection to homed is closed"))
            return
        }
        calls[callID] = .rawStream(continuation)
        context.writeAndFlush(wrapOutboundOut(WireFrame(callID: callID, body: .open(open)).encoded()), promise: nil)
    }

    func startStream(callID: UInt64, open: CallOpen, source: StreamSource) {
        guard let context, closedReason == nil else {
            source.finish(closedReason ?? HomeError(.unavailable, "the connection to homed is closed"))
            return
        }
        calls[callID] = .stream(source)
        context.writeAndFlush(wrapOutboundOut(WireFrame(callID: callID, body: .open(open)).encoded()), promise: nil)
    }

    /// The consumer stopped iterating: cancel the call on the wire.
    func cancel(callID: UInt64) {
        guard calls.removeValue(forKey: callID) != nil else { return }
        resume(callID)
        context?.writeAndFlush(wrapOutboundOut(WireFrame(callID: callID, body: .cancel).encoded()), promise: nil)
    }

    /// The consumer wants more: read again if this stream had paused reading.
    func resume(_ callID: UInt64) {
        guard pausedStreams.remove(callID) != nil, pausedStreams.isEmpty, let context else { return }
        // Options set from the event loop apply at once.
        context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        context.read()
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        // A response message, the common frame, is sliced out of the frame as it is.
        if let (callID, payload) = WireFrame.messagePayload(of: body), callID != 0 {
            message(context, callID: callID, payload: payload)
            return
        }
        let frame: WireFrame
        do throws(HomeError) {
            frame = try WireFrame(decoding: body)
        } catch {
            shutDown(
                hello != nil
                    ? Self.notHomed(error.message)
                    : HomeError(.internal, "homed sent an unreadable frame: \(error.message)"))
            context.close(promise: nil)
            return
        }
        if frame.callID == 0 {
            connectionFrame(context, frame)
            return
        }
        switch (frame.body, calls[frame.callID]) {
        case (.message(let payload), _):
            message(context, callID: frame.callID, payload: ByteBuffer(bytes: payload))
        case (.status(let error), .unary(let promise, let response)):
            calls[frame.callID] = nil
            if let error {
                promise.fail(error)
            } else if let response {
                promise.succeed(response)
            } else {
                promise.fail(HomeError(.internal, "call \(frame.callID) ended OK without a response message"))
            }
        case (.status(let error), .rawStream(let continuation)):
            calls[frame.callID] = nil
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        case (.status(let error), .stream(let source)):
            calls[frame.callID] = nil
            pausedStreams.remove(frame.callID)
            if let error { source.finish(error) } else { source.finish() }
        default:
            break  // a late frame for a call we cancelled
        }
    }

    private func message(_ context: ChannelHandlerContext, callID: UInt64, payload: ByteBuffer) {
        switch calls[callID] {
        case .unary(let promise, _):
            // Copied: the caller decodes it on its own task, later, and a slice would
            // hold the connection's read buffer (every read after it would copy that).
            calls[callID] = .unary(promise, response: ByteBuffer(bytes: payload.readableBytesView))
        case .stream(let source):
            do throws(HomeError) {
                let response = try SubscribeResponse(fromDaemon: payload)
                if source.yield(response) == .stopProducing {
                    if pausedStreams.isEmpty {
                        context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                    }
                    pausedStreams.insert(callID)
                }
            } catch {
                calls[callID] = nil
                source.finish(error)
            }
        case .rawStream(let continuation):
            continuation.yield(Array(payload.readableBytesView))
        case nil:
            break  // a late message for a call we cancelled
        }
    }

    private func connectionFrame(_ context: ChannelHandlerContext, _ frame: WireFrame) {
        switch frame.body {
        case .helloReply(let reply):
            hello?.succeed(reply)
            hello = nil
        case .ping(let nonce):
            context.writeAndFlush(
                wrapOutboundOut(WireFrame(callID: 0, body: .pong(nonce: nonce)).encoded()), promise: nil)
        case .goAway(let reason, _):
            closedReason = HomeError(.unavailable, "homed is going away: \(reason)")
        case .status(let error):
            // About the connection, not a call. When the daemon closes the
            // connection next, this is why; when it does not (a refused frame that
            // had no call of its own), the connection carries on.
            connectionError = error

        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        shutDown(closedReason ?? connectionError ?? HomeError(.unavailable, "the connection to homed closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let detail = (error as? HomeError)?.message ?? "\(error)"
        // Before the hello's reply, bytes that are no frame of ours (an oversized
        // "length", say) mean another program answers on the socket.
        shutDown(
            hello != nil ? Self.notHomed(detail) : HomeError(.unavailable, "connection to homed failed: \(detail)"))
        context.close(promise: nil)
    }

    /// The start of the message for a socket whose answer is not homed's;
    /// `HomeClient.connect` puts the socket's path before it.
    static let notHomedMessage = "the program listening there does not speak homed's protocol"

    private static func notHomed(_ detail: String) -> HomeError {
        HomeError(.unavailable, "\(notHomedMessage) (\(detail))")
    }

    /// Fails every waiting call with `error`.
    private func shutDown(_ error: HomeError) {
        if closedReason == nil { closedReason = error }
        hello?.fail(error)
        hello = nil
        let pending = calls
        calls.removeAll()
        for call in pending.values {
            switch call {
            case .unary(let promise, _): promise.fail(error)
            case .stream(let source): source.finish(error)
            case .rawStream(let continuation): continuation.finish(throwing: error)
            }
        }
    }
}

/// Connects a subscription's async sequence to its call on the wire.
struct SubscriptionDelegate: NIOAsyncSequenceProducerDelegate {
    let callID: UInt64
    let handler: NIOLoopBound<ClientHandler>

    func produceMore() {
        handler.eventLoop.execute { handler.value.resume(callID) }
    }

    func didTerminate() {
        handler.eventLoop.execute { handler.value.cancel(callID: callID) }
    }
}
