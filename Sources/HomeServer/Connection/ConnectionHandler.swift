internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import Logging
internal import NIOCore

/// Events the connection handler receives from outside the pipeline.
enum ConnectionCommand: Sendable {
    /// The daemon is shutting down: say go-away, end streams, close.
    case goAway(reason: String)
}

/// The transport of one client connection: frames in and out, timers, and the
/// carrying out of what `ConnectionStateMachine` decides. Calls go to the router;
/// this type knows no method.
///
/// Unary calls are answered synchronously on the event loop when their handler
/// can, so a pipelined batch of requests is answered with one flush at
/// `channelReadComplete`.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = Never
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    let router: HomeRouter
    /// Notes a call refused for its role in the audit (once per method per
    /// connection: a client retrying cannot fill the journal).
    let noteDenial: @Sendable (Origin, String) -> Void
    var deniedMethods: Set<String> = []
    let registry: ConnectionRegistry
    let configuration: ServerConfiguration
    let journalID: String
    /// Who connected (SO_PEERCRED when it was accepted): its role is looked up at every call.
    let peer: Peer
    var logger: Logger

    var machine: ConnectionStateMachine
    private(set) var frames: NIOSingleStepByteToMessageProcessor<FrameDecoder>
    let session = ConnectionSession()
    var connectionID: UInt64 = 0
    var helloTimeout: Scheduled<Void>?
    /// Runs while part of a frame is buffered: a client that starts a frame must finish it.
    var partialFrameTimeout: Scheduled<Void>?
    var deadlines: [UInt64: Scheduled<Void>] = [:]
    /// Liveness: whether a frame came since the last keepalive check, and the
    /// nonce of a ping still unanswered.
    var keepalive: RepeatedTask?
    /// The connection failed and its close is lingering (see `fail`).
    var failed = false
    var heardSinceCheck = false
    var unansweredPing: UInt64?
    var context: ChannelHandlerContext?
    /// Within `channelRead`: answers written now are flushed at its end.
    var reading = false
    /// Calls of a grouped method waiting for the rest of the read (`runWaitingGroup`).
    var waitingGroup: WaitingGroup?

    init(
        router: HomeRouter, registry: ConnectionRegistry, configuration: ServerConfiguration, journalID: String,
        peer: Peer, logger: Logger, noteDenial: @escaping @Sendable (Origin, String) -> Void = { _, _ in }
    ) {
        self.noteDenial = noteDenial
        self.router = router
        self.peer = peer
        self.registry = registry
        self.configuration = configuration
        self.journalID = journalID
        self.logger = logger
        self.machine = ConnectionStateMachine(
            limits: .init(
                maxFrameSize: configuration.maxFrameSize,
                maxStreams: configuration.maxStreamsPerConnection))
        self.frames = NIOSingleStepByteToMessageProcessor(FrameDecoder(maxFrameSize: configuration.maxFrameSize))
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let id = registry.add(context.channel, peer: peer, limit: configuration.maxConnections) else {
            let error =
                registry.isClosing
                ? HomeError(.unavailable, "the daemon is shutting down; it takes no new connections")
                : HomeError(
                    .resourceExhausted,
                    "too many connections: the daemon accepts at most \(configuration.maxConnections)")
            fail(context, error)
            return
        }
        connectionID = id
        logger[metadataKey: "connection"] = "\(id)"
        logger[metadataKey: "uid"] = "\(peer.uid)"
        let timeout = configuration.helloTimeoutMs
        helloTimeout = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(timeout)) { [weak self] in
            guard let self, self.machine.phase == .awaitingHello, let context = self.context else { return }
            self.fail(context, HomeError(.deadlineExceeded, "no hello within \(timeout) ms of connecting"))
        }
        let interval = TimeAmount.milliseconds(configuration.keepaliveIntervalMs)
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        keepalive = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            loopBound.value.checkLiveness()
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloTimeout?.cancel()
        partialFrameTimeout?.cancel()
        keepalive?.cancel()
        for deadline in deadlines.values { deadline.cancel() }
        deadlines.removeAll()
        for call in machine.closed() {
            if case .stream(let stream) = call { stream.cancel() }
        }
        if connectionID != 0 { registry.remove(connectionID) }
        logger.debug("connection closed", metadata: ["client": "\(machine.clientName)"])
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection error: \(error)")
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            for call in machine.calls.values {
                if case .stream(let stream) = call { stream.resumeWriting() }
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let command = event as? ConnectionCommand, case .goAway(let reason) = command {
            goAway(context, reason: reason)
            return
        }
        if failed, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed, frames.unprocessedBytes > 0 {
            logger.debug(
                "connection closed in the middle of a frame (\(frames.unprocessedBytes) bytes of an incomplete frame)")
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Failed: the status is written; the rest is dropped while the close lingers.
        guard !failed else { return }
        reading = true
        defer { reading = false }
        do {
            try frames.process(buffer: unwrapInboundIn(data)) { body in
                self.receive(context, body)
            }
            // What came together is run together; the answers are flushed at the read's end.
            runWaitingGroup()
        } catch let error as HomeError {
            fail(context, error)
        } catch {
            fail(context, HomeError(.invalidArgument, "unreadable frame", cause: error))
        }
        // A processor that consumed everything still holds the read's buffer, which
        // pins NIO's pooled receive buffer and makes the pool allocate another (2 KiB
        // per connection, and again per later read): start afresh instead.
        if frames.unprocessedBytes == 0 {
            frames = NIOSingleStepByteToMessageProcessor(FrameDecoder(maxFrameSize: configuration.maxFrameSize))
        }
        watchPartialFrame(context)
    }

    private func receive(_ context: ChannelHandlerContext, _ body: ByteBuffer) {
        guard context.channel.isActive else { return }
        heardSinceCheck = true
        guard machine.phase == .awaitingHello || body.readableBytes <= machine.frameSize else {
            fail(
                context,
                HomeError(
                    .resourceExhausted,
                    "frame of \(body.readableBytes) bytes exceeds the maximum "
                        + "frame size of \(machine.frameSize) bytes negotiated by this connection's hello"))
            return
        }
        let action: ConnectionStateMachine.FrameAction
        // A call's open frame, the common one, is taken apart by hand once the hello is in.
        if machine.phase != .awaitingHello, let (callID, call) = WireFrame.callOpen(of: body) {
            action = machine.open(callID: callID, call)
        } else {
            do throws(HomeError) {
                action = machine.receive(try WireFrame(decoding: body))
            } catch {
                fail(context, HomeError(.invalidArgument, "unreadable frame: \(error.message)", cause: error))
                return
            }
        }
        if case .dispatch = action {
            // `dispatch` runs or joins the waiting group.
        } else {
            runWaitingGroup()
        }
        switch action {
        case .acceptHello(let hello, let frameSize):
            helloTimeout?.cancel()
            registry.update(connectionID, name: hello.clientName)
            logger[metadataKey: "client"] = "\(hello.clientName)"
            write(
                context,
                WireFrame(
                    callID: 0,
                    body: .helloReply(
                        HelloReply(
                            serverName: configuration.serverName, serverVersion: configuration.serverVersion,
                            connectionID: connectionID, maxFrameSize: UInt32(frameSize), capabilities: ["batch-events"],
                            journalID: journalID))))
            logger.debug("hello")
        case .fail(let error):
            fail(context, error)
        case .dispatch(let callID, let open):
            dispatch(context, callID: callID, open)
        case .reply(let frame):
            write(context, frame)
        case .cancel(let callID, let call):
            deadlines.removeValue(forKey: callID)?.cancel()
            if case .stream(let stream) = call { stream.cancel() }
            registry.update(connectionID, openStreams: machine.openStreamCount)
            write(
                context,
                WireFrame(
                    callID: callID, body: .status(HomeError(.cancelled, "call \(callID) cancelled by the client"))))
        case .ignore:
            break
        }
    }

}
