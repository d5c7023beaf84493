internal import Foundation
public import HomeModel
@_spi(Wire) public import HomeWire
public import NIOCore
public import NIOPosix
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// A connection to homed: async calls, and subscriptions as `AsyncSequence`s.
///
/// ```swift
/// let client = try await HomeClient.connect(name: "dashboard")
/// let home = try await client.getHome()
/// for try await batch in client.subscribe(SubscribeRequest(filter: .init(accessoryIDs: [lamp]))) {
///     for event in batch.events { print(event) }
/// }
/// ```
/// Many calls may be in flight on one client at once; answers arrive in any order.
public final class HomeClient: Sendable {
    /// What the daemon said in reply to our hello.
    public let hello: HelloReply
    public let socketPath: String
    private let channel: any Channel
    let handler: NIOLoopBound<ClientHandler>
    private let nextCallID = Atomic<UInt64>(1)
    /// This connection's event loop as a task executor: see `EventLoopTaskExecutor`.
    public let taskExecutor: EventLoopTaskExecutor

    private init(hello: HelloReply, socketPath: String, channel: any Channel, handler: NIOLoopBound<ClientHandler>) {
        self.hello = hello
        self.socketPath = socketPath
        self.channel = channel
        self.handler = handler
        self.taskExecutor = EventLoopTaskExecutor(eventLoop: channel.eventLoop)
    }

    /// The socket path clients use when not told otherwise: `HOMED_SOCKET`, else the
    /// default location (see `defaultSocketPath(environment:uid:)`).
    public static func defaultSocketPath() -> String {
        HomeWire.defaultSocketPath(environment: ProcessInfo.processInfo.environment, uid: getuid())
    }

    /// Connects and says hello.
    ///
    /// - Parameters:
    ///   - protocolVersion: The version the hello announces; another than this
    ///     library's is for testing the daemon's refusal.
    ///   - maxFrameSize: The largest frame this client accepts, 0 for the daemon's
    ///     limit; the hello reply's `maxFrameSize` is what binds both sides.
    /// - Throws: `.unavailable` with a sentence naming the socket when nothing
    ///   listens there; the daemon's error when it refuses the hello.
    public static func connect(
        to socketPath: String? = nil,
        name: String,
        protocolVersion: UInt32 = homeProtocolVersion,
        maxFrameSize: UInt32 = 0,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(HomeError) -> HomeClient {
        let path = socketPath ?? defaultSocketPath()
        return try await connect(
            name: name, protocolVersion: protocolVersion, maxFrameSize: maxFrameSize, group: group,
            describedAs: path
        ) { bootstrap in
            bootstrap.connect(unixDomainSocketPath: path)
        }
    }

    /// Connects over a socket already connected to homed — the descriptor
    /// `HomeServer.connectInProcess()` returns, or one a parent process passed —
    /// and says hello. The client owns the descriptor from then on (`close()` closes it).
    ///
    /// - Throws: the daemon's error when it refuses the hello; UNAVAILABLE when the
    ///   descriptor is not a connected socket.
    public static func connect(
        connectedSocket descriptor: Int32,
        name: String,
        maxFrameSize: UInt32 = 0,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(HomeError) -> HomeClient {
        try await connect(
            name: name, protocolVersion: homeProtocolVersion, maxFrameSize: maxFrameSize, group: group,
            describedAs: "an in-process connection"
        ) { bootstrap in
            bootstrap.withConnectedSocket(descriptor)
        }
    }

    private static func connect(
        name: String, protocolVersion: UInt32, maxFrameSize: UInt32, group: any EventLoopGroup,
        describedAs path: String, _ open: (ClientBootstrap) -> EventLoopFuture<any Channel>
    ) async throws(HomeError) -> HomeClient {
        let eventLoop = group.next()
        let helloPromise = eventLoop.makePromise(of: HelloReply.self)
        let handlerPromise = eventLoop.makePromise(of: NIOLoopBound<ClientHandler>.self)
        let channel: any Channel
        do {
            let bootstrap = ClientBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = ClientHandler(
                            hello: helloPromise,
                            helloFrame: WireFrame(
                                callID: 0,
                                body: .hello(
                                    Hello(
                                        protocolVersion: protocolVersion, clientName: name,
                                        maxFrameSize: maxFrameSize))
                            ).encoded())
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(handler)
                        handlerPromise.succeed(NIOLoopBound(handler, eventLoop: channel.eventLoop))
                    }
                }
            channel = try await open(bootstrap).get()
        } catch {
            helloPromise.fail(error)
            handlerPromise.fail(error)
            throw Self.connectFailure(path: path, errno: (error as? IOError)?.errnoCode, reason: Self.reason(error))
        }
        do {
            let handler = try await handlerPromise.futureResult.get()
            let reply = try await helloPromise.futureResult.get()
            return HomeClient(hello: reply, socketPath: path, channel: channel, handler: handler)
        } catch let error as HomeError where error.message.hasPrefix(ClientHandler.notHomedMessage) {
            try? await channel.close()
            throw HomeError(error.code, "\(path) is not homed's socket: \(error.message)")
        } catch {
            try? await channel.close()
            throw (error as? HomeError) ?? HomeError(.unavailable, "hello to homed on \(path) failed: \(error)")
        }
    }

    /// Why connecting failed: PERMISSION_DENIED when the socket is there but this
    /// process may not open it (a user outside the socket's group), which no
    /// restart of homed would mend; else UNAVAILABLE (nothing listens).
    package static func connectFailure(path: String, errno code: Int32?, reason: String) -> HomeError {
        if code == EACCES || code == EPERM {
            return HomeError(
                .permissionDenied, "permission denied on \(path): this process may not open homed's socket (\(reason))")
        }
        return HomeError(
            .unavailable, "cannot reach homed: no daemon is listening on \(path) (\(reason)); is homed running?")
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }

    /// Closes the connection; calls in flight fail with UNAVAILABLE.
    public func close() async {
        try? await channel.close()
    }

    /// Closes the connection without waiting for it to close.
    func closeSoon() {
        channel.close(promise: nil)
    }

    /// The daemon-assigned id of this connection (the origin of our own changes).
    public var connectionID: UInt64 { hello.connectionID }

    func makeCallID() -> UInt64 {
        nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: Calls

    /// A unary call: sends `request`, waits for the response or the error status.
    ///
    /// ```swift
    /// let status = try await client.call(HomeMethods.getStatus, GetStatusRequest())
    /// ```
    public func call<Request, Response>(
        _ method: UnaryMethod<Request, Response>, _ request: Request, timeoutMs: UInt32? = nil
    ) async throws(HomeError) -> Response {
        let open = CallOpen(method: method.name, request: request.encoded(), timeoutMs: timeoutMs)
        let promise = channel.eventLoop.makePromise(of: ByteBuffer.self)
        let callID = makeCallID()
        let handler = self.handler
        if channel.eventLoop.inEventLoop {
            handler.value.startUnary(callID: callID, open: open, promise: promise)
        } else {
            channel.eventLoop.execute { handler.value.startUnary(callID: callID, open: open, promise: promise) }
        }
        let payload: ByteBuffer
        do {
            payload = try await promise.futureResult.get()
        } catch {
            throw (error as? HomeError) ?? HomeError(.unavailable, "\(method.name) failed", cause: error)
        }
        return try Response(wire: payload)
    }

    /// Accessories per GetHome page: a few hundred kilobytes for typical ones.
    public static let homePageSize: UInt32 = 256

    /// The whole home (or every home), in pages cut from one snapshot, so a home of
    /// any size arrives (a single response is limited to the frame size). A page
    /// too large for a frame is asked for again with half as many accessories.
    public func getHome(_ homeID: ObjectID = 0) async throws(HomeError) -> GetHomeResponse {
        var assembler = GetHomeAssembler()
        var pageSize = Self.homePageSize
        var token = ""
        while true {
            let page: GetHomePage
            do throws(HomeError) {
                page = try await call(
                    HomeMethods.getHome, GetHomeRequest(homeID: homeID, pageSize: pageSize, pageToken: token))
            } catch  where error.code == .resourceExhausted && pageSize > 1 {
                pageSize /= 2
                continue
            }
            token = try assembler.add(page)
            if token.isEmpty { return try assembler.response() }
        }
    }

    public func listAccessories(homeID: ObjectID = 0) async throws(HomeError) -> ListAccessoriesResponse {
        try await call(HomeMethods.listAccessories, ListAccessoriesRequest(homeID: homeID))
    }

    public func read(_ characteristicIDs: [ObjectID], fresh: Bool = false) async throws(HomeError)
        -> ReadCharacteristicsResponse
    {
        try await call(
            HomeMethods.readCharacteristics,
            ReadCharacteristicsRequest(characteristicIDs: characteristicIDs, fresh: fresh))
    }

    public func write(_ request: WriteCharacteristicsRequest) async throws(HomeError) -> WriteCharacteristicsResponse {
        try await call(HomeMethods.writeCharacteristics, request)
    }

    /// Writes one value; throws the item's error if it failed.
    ///
    /// - Parameter condition: write only if it holds (else FAILED_PRECONDITION, nothing written).
    @discardableResult
    public func write(
        _ value: CharacteristicValue, to characteristicID: ObjectID, if condition: WriteCondition? = nil
    ) async throws(HomeError) -> WriteResult {
        let response = try await write(
            WriteCharacteristicsRequest(writes: [
                CharacteristicWrite(characteristicID: characteristicID, value: value, condition: condition)
            ])
        )
        guard let result = response.results.first else {
            throw HomeError(.internal, "write to \(characteristicID) returned no result")
        }
        if let error = result.error { throw error }
        return result
    }

    public func status() async throws(HomeError) -> GetStatusResponse {
        try await call(HomeMethods.getStatus, GetStatusRequest())
    }

    /// Opens a subscription. The stream lives as long as it is iterated; ending the
    /// iteration (or its task) cancels the call on the wire. With `timeoutMs`, the
    /// daemon ends it with DEADLINE_EXCEEDED once that long has passed.
    public func subscribe(_ request: SubscribeRequest, timeoutMs: UInt32? = nil) -> HomeSubscription {
        let callID = makeCallID()
        let handler = self.handler
        let producer = NIOThrowingAsyncSequenceProducer.makeSequence(
            elementType: SubscribeResponse.self,
            failureType: (any Error).self,
            backPressureStrategy: NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(
                lowWatermark: 8, highWatermark: 32),
            finishOnDeinit: true,
            delegate: SubscriptionDelegate(callID: callID, handler: handler))
        let open = CallOpen(method: HomeMethods.subscribe.name, request: request.encoded(), timeoutMs: timeoutMs)
        let source = producer.source
        channel.eventLoop.execute { handler.value.startStream(callID: callID, open: open, source: source) }
        return HomeSubscription(callID: callID, base: producer.sequence)
    }
}

/// The messages of one subscription, in order: markers, snapshot pages, batches of
/// events. Ends when the daemon ends the call (an error for anything but OK).
public struct HomeSubscription: AsyncSequence, Sendable {
    public typealias Element = SubscribeResponse
    /// The call this subscription runs on: what `HomeClient.modify(_:add:remove:)` names.
    public let callID: UInt64
    typealias Base = NIOThrowingAsyncSequenceProducer<
        SubscribeResponse, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark,
        SubscriptionDelegate
    >
    let base: Base

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator

        public mutating func next() async throws -> SubscribeResponse? {
            do {
                return try await base.next()
            } catch let error as HomeError {
                throw error
            } catch is CancellationError {
                throw HomeError(.cancelled, "subscription cancelled")
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}
