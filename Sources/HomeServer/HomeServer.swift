public import HomeModel
@_spi(Wire) internal import HomeWire
public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle

#if canImport(Glibc)
    internal import Glibc
#endif

/// The daemon's listening side: a Unix socket serving `HomeStore` to clients.
///
/// As a ServiceLifecycle `Service`, `run()` serves until graceful shutdown, then
/// says go-away to every client, ends their streams with UNAVAILABLE, closes, and
/// removes the socket file. Tests use `start()` / `stop()` directly.
public final class HomeServer: Service, Sendable {
    public let store: HomeStore
    public let configuration: ServerConfiguration
    private let logger: Logger
    private let registry = ConnectionRegistry()
    private let group: any EventLoopGroup
    private let serverChannel = Locked<(any Channel)?>(nil)
    /// Connected providers and the requests waiting for their answers.
    let providers: ProviderHub
    /// Every method, served alike to connections accepted on the socket and to
    /// in-process ones.
    private let router: HomeRouter
    /// Where reads and writes of values go: what the automation engine writes through.
    public var values: ValueRouter { ValueRouter(store: store, providers: providers, eventLoops: group) }

    public init(
        store: HomeStore, configuration: ServerConfiguration, logger: Logger,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.group = group
        let providers = ProviderHub(
            limits: configuration.limits, pingIntervalMs: configuration.providerPingIntervalMs,
            pingTimeoutMs: configuration.providerPingTimeoutMs, inProcessProviders: configuration.inProcessProviders)
        self.providers = providers
        self.router = HomeService(
            store: store, registry: registry, configuration: configuration, providers: providers,
            flushers: LoopFlushers(), eventLoops: group
        ).router()
        // A provider's accessories are reachable only while it is connected: none is
        // yet, and each gets its unreachable event. Before any connection, in-process
        // ones included, can register again.
        let known = store.providerAccessories(excluding: providers.inProcessProviders)
        store.markUnreachable(known.values.flatMap { $0 }, origin: Origin(kind: .daemon, name: "homed"))
        providers.awaitReturn(
            of: Set(known.keys), graceMs: configuration.providerStartupGraceMs, on: group.next())
    }

    /// Checks that `socketPath` can be served: it fits a socket address, its
    /// directory exists (created 0700 if missing), and no other daemon listens there.
    ///
    /// - Throws: `.alreadyExists` ("another homed is listening on …"), or
    ///   `.failedPrecondition` / `.invalidArgument` naming what is wrong with the path.
    public static func checkSocketAvailable(_ socketPath: String) throws(HomeError) {
        try SocketPath.checkAvailable(socketPath)
    }

    /// Binds the socket and starts accepting connections, once
    /// `ServerConfiguration.beforeListening` (if any) has returned: in-process
    /// connections are served from the start.
    public func start() async throws {
        if configuration.listeningSocket == nil { try SocketPath.prepare(configuration.socketPath) }
        if let beforeListening = configuration.beforeListening { await beforeListening() }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.writeBufferWaterMark, value: Self.writeBufferWaterMark)
            .childChannelInitializer { [self] channel in serve(channel) }
        let channel: any Channel
        if let socket = configuration.listeningSocket {
            channel = try await bootstrap.withBoundSocket(socket).get()
        } else {
            channel = try await bind(bootstrap)
        }
        serverChannel.withLock { $0 = channel }
        logger.info("listening", metadata: ["socket": "\(configuration.socketPath)", "journal": "\(store.journalID)"])
        configuration.onListening?()
    }

    /// Binds the socket and puts it in place with its mode and group (`SocketBinding`).
    private func bind(_ bootstrap: ServerBootstrap) async throws -> any Channel {
        let binding = try SocketBinding(socketPath: configuration.socketPath)
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(unixDomainSocketPath: binding.stagingPath).get()
        } catch {
            binding.abandon()
            throw error
        }
        do throws(HomeError) {
            try binding.publish(
                at: configuration.socketPath, mode: configuration.socketMode, group: configuration.socketGroup)
        } catch {
            try? await channel.close()
            throw error
        }
        return channel
    }

    /// How much a connection may have written that its socket has not taken before
    /// its streams wait (and how little before they carry on).
    private static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(
        low: 256 * 1024, high: 1024 * 1024)

    /// Serves one connection: who is at the other end, before the first byte is
    /// read (every call's role comes from it), then the connection's handler.
    private func serve(_ channel: any Channel) -> EventLoopFuture<Void> {
        let (router, registry, configuration, logger, journalID, store) = (
            router, registry, configuration, logger, store.journalID, store
        )
        let noteDenial: @Sendable (Origin, String) -> Void = { origin, detail in
            store.audit("permission-denied", detail: detail, origin: origin)
        }
        return PeerLookup.peer(of: channel).flatMapThrowing { peer in
            try channel.pipeline.syncOperations.addHandler(
                ConnectionHandler(
                    router: router, registry: registry, configuration: configuration,
                    journalID: journalID, peer: peer, logger: logger, noteDenial: noteDenial))
        }
    }

    /// A connection to this server with no socket file: one end of a socket pair is
    /// served exactly as an accepted connection is (the same pipeline, limits and
    /// roles; the peer is this process), and the other end is returned for
    /// `HomeClient.connect(connectedSocket:name:)`, which owns it from then on.
    /// It works before `start()` and whatever the listening socket's state: the
    /// daemon's own providers (the demo's simulator) use it.
    ///
    /// The corresponding C function is `socketpair`.
    public func connectInProcess() async throws -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw HomeError(.unavailable, "cannot make an in-process connection: socketpair failed (errno \(errno))")
        }
        do {
            _ = try await ClientBootstrap(group: group)
                .channelOption(.writeBufferWaterMark, value: Self.writeBufferWaterMark)
                .channelInitializer { [self] channel in serve(channel) }
                .withConnectedSocket(ends[0])
                .get()
        } catch {
            close(ends[1])
            throw error
        }
        return ends[1]
    }

    /// The handler `start()` gives each accepted connection, over the same service,
    /// router, registry and providers, for a harness that drives one connection
    /// through an `EmbeddedChannel` with no socket (the fuzzer, Fuzz/). Nothing is
    /// bound and `start()`'s other steps are not taken.
    @_spi(Fuzzing) public func makeConnectionHandler() -> any ChannelHandler {
        ConnectionHandler(
            router: router, registry: registry, configuration: configuration, journalID: store.journalID,
            peer: PeerLookup.thisProcess(), logger: logger)
    }

    /// Stops accepting, says go-away to every client, ends streams, closes and
    /// removes the socket file.
    public func stop(reason: String = "shutting down") async {
        guard
            let channel = serverChannel.withLock({ channel in
                defer { channel = nil }
                return channel
            })
        else { return }
        try? await channel.close()
        let connections = registry.beginClosing()
        for connection in connections {
            connection.pipeline.fireUserInboundEventTriggered(ConnectionCommand.goAway(reason: reason))
        }
        for connection in connections {
            try? await connection.closeFuture.get()
        }
        if configuration.listeningSocket == nil { unlink(configuration.socketPath) }
        logger.info("stopped", metadata: ["socket": "\(configuration.socketPath)"])
    }

    public func run() async throws {
        try await start()
        try? await gracefulShutdown()
        configuration.onStopping?()
        await stop()
    }
}
