import HomeModel
import HomeWire
import Logging
import NIOCore

/// Events the connection handler receives from outside the pipeline.
enum ConnectionCommand: Sendable {
    /// The daemon is shutting down: say go-away, end streams, close.
    case goAway(reason: String)
}

/// One client connection: hello, call dispatch, streams, ping, go-away.
///
/// Unary calls are answered synchronously on the event loop (the store's lock is
/// held only for in-memory work), so a pipelined batch of requests is answered
/// with one flush at `channelReadComplete`.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = Never
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    private let store: HomeStore
    private let registry: ConnectionRegistry
    private let configuration: ServerConfiguration
    private var logger: Logger

    private var connectionID: UInt64 = 0
    private var clientName = ""
    private var saidHello = false
    private var goingAway = false
    private var streams: [UInt64: SubscriptionSink] = [:]
    /// A GetHome in pages under way, and how many this connection started.
    private var homePaging: HomePaging?
    private var pagings = 0
    private var helloTimeout: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(store: HomeStore, registry: ConnectionRegistry, configuration: ServerConfiguration, logger: Logger) {
        self.store = store
        self.registry = registry
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let id = registry.add(context.channel, limit: configuration.maxConnections) else {
            fail(context, HomeError(.resourceExhausted,
                                    "too many connections: the daemon accepts at most \(configuration.maxConnections)"))
            return
        }
        connectionID = id
        logger[metadataKey: "connection"] = "\(id)"
        let timeout = configuration.helloTimeoutMs
        helloTimeout = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(timeout)) { [weak self] in
            guard let self, !self.saidHello, let context = self.context else { return }
            self.fail(context, HomeError(.deadlineExceeded, "no hello within \(timeout) ms of connecting"))
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloTimeout?.cancel()
        for sink in streams.values { sink.cancel() }
        streams.removeAll()
        if connectionID != 0 { registry.remove(connectionID) }
        logger.debug("connection closed", metadata: ["client": "\(clientName)"])
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as FrameTooLargeError:
            fail(context, HomeError(.resourceExhausted, error.description))
        case let error as TruncatedFrameError:
            logger.debug("\(error.description)")
            context.close(promise: nil)
        default:
            logger.debug("connection error: \(error)")
            context.close(promise: nil)
        }
    }

    /// Answers on call 0 and closes: the connection itself is unusable.
    private func fail(_ context: ChannelHandlerContext, _ error: HomeError) {
        logger.info("closing connection: \(error)")
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WireFrame(callID: 0, body: .status(error)).encoded()))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            for sink in streams.values { sink.flush() }
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
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        let frame: WireFrame
        do throws(HomeError) {
            frame = try WireFrame(decoding: body)
        } catch {
            fail(context, HomeError(.invalidArgument, "unreadable frame: \(error.message)"))
            return
        }
        guard saidHello else {
            hello(context, frame)
            return
        }
        switch frame.body {
        case .open(let open):
            self.open(context, callID: frame.callID, open)
        case .cancel:
            if let sink = streams.removeValue(forKey: frame.callID) {
                sink.cancel()
                registry.update(connectionID, openStreams: streams.count)
                write(context, WireFrame(callID: frame.callID, body: .status(HomeError(.cancelled, "call \(frame.callID) cancelled by the client"))))
            }
        case .ping(let nonce):
            write(context, WireFrame(callID: 0, body: .pong(nonce: nonce)))
        case .pong:
            break
        case .hello:
            write(context, WireFrame(callID: 0, body: .status(HomeError(.failedPrecondition, "hello was already received on this connection"))))
        case .helloReply, .message, .status, .goAway:
            write(context, WireFrame(callID: frame.callID, body: .status(HomeError(
                .unimplemented, "clients may not send \(frame.body.kindName) frames (call \(frame.callID))"))))
        }
    }

    private func hello(_ context: ChannelHandlerContext, _ frame: WireFrame) {
        guard case .hello(let hello) = frame.body else {
            fail(context, HomeError(.failedPrecondition, "the first frame must be a hello, not \(frame.body.kindName) (call \(frame.callID))"))
            return
        }
        guard hello.protocolVersion == homeProtocolVersion else {
            fail(context, HomeError(.failedPrecondition,
                                    "protocol version \(hello.protocolVersion) is not supported: this daemon speaks version \(homeProtocolVersion)"))
            return
        }
        helloTimeout?.cancel()
        saidHello = true
        clientName = hello.clientName
        registry.update(connectionID, name: hello.clientName)
        logger[metadataKey: "client"] = "\(hello.clientName)"
        let frameSize = hello.maxFrameSize == 0 ? configuration.maxFrameSize
            : min(Int(hello.maxFrameSize), configuration.maxFrameSize)
        write(context, WireFrame(callID: 0, body: .helloReply(HelloReply(
            serverName: configuration.serverName, serverVersion: configuration.serverVersion,
            connectionID: connectionID, maxFrameSize: UInt32(frameSize), capabilities: ["batch-events"],
            journalID: store.journalID))))
        logger.debug("hello")
    }

    private func open(_ context: ChannelHandlerContext, callID: UInt64, _ open: CallOpen) {
        guard callID != 0 else {
            write(context, WireFrame(callID: 0, body: .status(HomeError(.invalidArgument, "call id 0 is reserved for the connection; open calls with ids from 1"))))
            return
        }
        guard streams[callID] == nil else {
            write(context, WireFrame(callID: callID, body: .status(HomeError(.alreadyExists, "call \(callID) is already open on this connection"))))
            return
        }
        guard let method = HomeMethod(rawValue: open.method) else {
            write(context, WireFrame(callID: callID, body: .status(HomeError(
                .unimplemented, "unknown method '\(open.method)' (call \(callID)); this daemon serves \(HomeMethod.allCases.map(\.rawValue).joined(separator: ", "))"))))
            return
        }
        guard !goingAway else {
            write(context, WireFrame(callID: callID, body: .status(HomeError(.unavailable, "the daemon is shutting down"))))
            return
        }
        do throws(HomeError) {
            switch method {
            case .getHome:
                let request = try GetHomeRequest(wire: open.request)
                if request.pageSize > 0 {
                    try homePage(context, callID: callID, request)
                    return
                }
                let (graph, seq) = store.snapshot()
                if request.homeID != 0 && graph.homes[request.homeID] == nil {
                    throw HomeError(.notFound, "no home with id \(request.homeID)")
                }
                var payload = ByteBuffer()
                GetHomeResponse.encodeHomes(graph: graph, homeIDs: request.homeID == 0 ? graph.homeOrder : [request.homeID],
                                            seq: seq, journalID: store.journalID, into: &payload)
                try reply(context, callID: callID, payload: payload)
            case .listAccessories:
                let request = try ListAccessoriesRequest(wire: open.request)
                let (graph, _) = store.snapshot()
                if request.homeID != 0 && graph.homes[request.homeID] == nil {
                    throw HomeError(.notFound, "no home with id \(request.homeID)")
                }
                var payload = ByteBuffer()
                ListAccessoriesResponse.encode(graph: graph, homeIDs: request.homeID == 0 ? graph.homeOrder : [request.homeID],
                                               into: &payload)
                try reply(context, callID: callID, payload: payload)
            case .readCharacteristics:
                let request = try ReadCharacteristicsRequest(wire: open.request)
                let outcome = store.read(request.characteristicIDs)
                try reply(context, callID: callID, ReadCharacteristicsResponse(reads: outcome.reads, seq: outcome.seq))
            case .writeCharacteristics:
                let request = try WriteCharacteristicsRequest(wire: open.request)
                let origin = Origin(kind: .client, connectionID: connectionID, name: clientName)
                let outcome = store.write(request.writes, atomic: request.atomic, validateOnly: request.validateOnly, origin: origin)
                try reply(context, callID: callID, WriteCharacteristicsResponse(results: outcome.results, seq: outcome.seq))
            case .subscribe:
                try subscribe(context, callID: callID, try SubscribeRequest(wire: open.request))
            case .modifySubscription:
                let request = try ModifySubscriptionRequest(wire: open.request)
                guard let sink = streams[request.callID] else {
                    throw HomeError(.notFound, "no open subscription with call id \(request.callID) on this connection")
                }
                try reply(context, callID: callID, ModifySubscriptionResponse(
                    seq: try store.modify(sink, add: request.add, remove: request.remove)))
            case .executeActionSet:
                let request = try ExecuteActionSetRequest(wire: open.request)
                let origin = Origin(kind: .client, connectionID: connectionID, name: clientName)
                let outcome = try store.executeActionSet(request.actionSetID, origin: origin)
                try reply(context, callID: callID, ExecuteActionSetResponse(results: outcome.results, seq: outcome.seq))
            case .getStats:
                _ = try GetStatsRequest(wire: open.request)
                sendStatistics(context, callID: callID)
            case .getStatus:
                _ = try GetStatusRequest(wire: open.request)
                var status = GetStatusResponse()
                let counts = store.statistics
                status.serverVersion = configuration.serverVersion
                status.protocolVersion = homeProtocolVersion
                status.connectionID = connectionID
                status.journalID = store.journalID
                status.seq = store.lastSeq
                status.uptimeMs = currentTimeMs() - store.startedAtMs
                status.connections = UInt32(registry.count)
                status.subscriptions = UInt32(store.subscriptionCount)
                status.homes = UInt32(counts.homes)
                status.accessories = UInt32(counts.accessories)
                status.characteristics = UInt32(counts.characteristics)
                status.socketPath = configuration.socketPath
                try reply(context, callID: callID, status)
            case .changeLayout:
                let request = try LayoutRequest(wire: open.request)
                let caller = Caller(connectionID: connectionID, name: clientName)
                try reply(context, callID: callID, try LayoutCalls.changeLayout(request, caller: caller, store: store))
            case .listTypes:
                _ = try ListTypesRequest(wire: open.request)
                try reply(context, callID: callID, LayoutCalls.listTypes())
            }
        } catch {
            if method != .subscribe || streams[callID] == nil {
                write(context, WireFrame(callID: callID, body: .status(error)))
            }
        }
    }

    private func reply(_ context: ChannelHandlerContext, callID: UInt64, _ response: some WireMessage) throws(HomeError) {
        var payload = ByteBuffer()
        response.encode(into: &payload)
        try reply(context, callID: callID, payload: payload)
    }

    /// One page of a paged GetHome (see `HomePaging`).
    private func homePage(_ context: ChannelHandlerContext, callID: UInt64, _ request: GetHomeRequest) throws(HomeError) {
        let paging: HomePaging
        if request.pageToken.isEmpty {
            let (graph, seq) = store.snapshot()
            if request.homeID != 0 && graph.homes[request.homeID] == nil {
                throw HomeError(.notFound, "no home with id \(request.homeID)")
            }
            pagings += 1
            paging = HomePaging(number: pagings, graph: graph, seq: seq,
                                homeIDs: request.homeID == 0 ? graph.homeOrder : [request.homeID], offset: 0)
        } else {
            guard let current = homePaging, current.token == request.pageToken else {
                throw HomeError(.failedPrecondition,
                                "page token '\(request.pageToken)' does not continue this connection's GetHome "
                                    + "(a token lasts until the last page or a new first page); start again without a token")
            }
            paging = current
        }
        var payload = ByteBuffer()
        let next = paging.encodePage(pageSize: Int(request.pageSize), journalID: store.journalID, into: &payload)
        // A page too large for a frame is refused and can be asked again, smaller.
        try reply(context, callID: callID, payload: payload)
        homePaging = next
    }

    /// Writes a unary response and its OK status as one buffer.
    private func reply(_ context: ChannelHandlerContext, callID: UInt64, payload: ByteBuffer) throws(HomeError) {
        // The frame adds a few bytes of envelope to the payload.
        guard payload.readableBytes + 32 <= configuration.maxFrameSize else {
            throw HomeError(.resourceExhausted,
                            "response of \(payload.readableBytes) bytes exceeds the maximum frame size of \(configuration.maxFrameSize) bytes; ask for less (GetHome in pages with page_size, one home, fewer ids)")
        }
        var out = context.channel.allocator.buffer(capacity: payload.readableBytes + 48)
        WireFrame.encodeMessage(callID: callID, payload: payload, into: &out)
        WireFrame.encodeOKStatus(callID: callID, into: &out)
        context.write(wrapOutboundOut(out), promise: nil)
    }

    private func write(_ context: ChannelHandlerContext, _ frame: WireFrame) {
        context.write(wrapOutboundOut(frame.encoded()), promise: nil)
    }

    private func subscribe(_ context: ChannelHandlerContext, callID: UInt64, _ request: SubscribeRequest) throws(HomeError) {
        guard streams.count < configuration.maxStreamsPerConnection else {
            throw HomeError(.resourceExhausted,
                            "too many open streams on this connection (limit \(configuration.maxStreamsPerConnection))")
        }
        let limit = request.queueLimit == 0 ? configuration.defaultQueueLimit : Int(request.queueLimit)
        guard limit <= configuration.maxQueueLimit else {
            throw HomeError(.invalidArgument, "queue_limit \(request.queueLimit) exceeds the daemon's maximum of \(configuration.maxQueueLimit)")
        }
        let channel = context.channel
        let connectionID = self.connectionID
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        let start: SubscriptionStart = request.sinceSeq.map { .resume(after: $0, journalID: request.journalID) }
            ?? (request.snapshot ? .snapshot : .live)
        let sink = try store.subscribe(request.filter, start: start) { id, scope in
            SubscriptionSink(subscriptionID: id, callID: callID, connectionID: connectionID, scope: scope,
                             request: request, channel: channel, store: store, queueLimit: limit) { _ in
                loopBoundSelf.value.streams.removeValue(forKey: callID)
                loopBoundSelf.value.registry.update(connectionID, openStreams: loopBoundSelf.value.streams.count)
            }
        }
        streams[callID] = sink
        registry.update(connectionID, openStreams: streams.count)
    }

    /// Gathers every connection's statistics (pending bytes come from each
    /// connection's own event loop) and answers when all are in.
    private func sendStatistics(_ context: ChannelHandlerContext, callID: UInt64) {
        let store = self.store
        let subscriptions = store.subscriptionStatistics()
        let connections = registry.connections()
        let pending = connections.map { connection in
            connection.channel.getOption(ChannelOptions.bufferedWritableBytes).map { UInt64($0) }.recover { _ in 0 }
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        EventLoopFuture.whenAllSucceed(pending, on: context.eventLoop).whenSuccess { pendingBytes in
            let (handler, context) = loopBound.value
            let stats = zip(connections, pendingBytes).map { connection, pending in
                ConnectionStats(
                    connectionID: connection.id, clientName: connection.name, openCalls: UInt32(connection.openStreams),
                    subscriptions: (subscriptions[connection.id] ?? []).sorted { $0.subscriptionID < $1.subscriptionID }.map {
                        SubscriptionStats(subscriptionID: $0.subscriptionID, callID: $0.callID, policy: $0.policy,
                                          queueLimit: UInt32($0.queueLimit), queueDepth: UInt32($0.queueDepth),
                                          sent: $0.sent, merged: $0.merged, dropped: $0.dropped)
                    },
                    pendingBytes: pending)
            }
            try? handler.reply(context, callID: callID, GetStatsResponse(connections: stats, seq: store.lastSeq))
            context.flush()
        }
    }

    // MARK: Shutdown

    private func goAway(_ context: ChannelHandlerContext, reason: String) {
        guard !goingAway else { return }
        goingAway = true
        write(context, WireFrame(callID: 0, body: .goAway(reason: reason, lastCallID: 0)))
        for sink in Array(streams.values) {
            sink.flush()
            sink.end(with: HomeError(.unavailable, "the daemon is shutting down: \(reason)"))
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in
            channel.close(promise: nil)
        }
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
