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
    /// Where reads and writes of values go: what the automation engine writes through.
    public var values: ValueRouter { ValueRouter(store: store, providers: providers) }

    public init(
        store: HomeStore, configuration: ServerConfiguration, logger: Logger,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.group = group
        self.providers = ProviderHub(
            limits: configuration.limits, pingIntervalMs: configuration.providerPingIntervalMs,
            pingTimeoutMs: configuration.providerPingTimeoutMs, inProcessProviders: configuration.inProcessProviders)
    }

    /// Checks that `socketPath` can be served: it fits a socket address, its
    /// directory exists (created 0700 if missing), and no other daemon listens there.
    ///
    /// - Throws: `.alreadyExists` ("another homed is listening on …"), or
    ///   `.failedPrecondition` / `.invalidArgument` naming what is wrong with the path.
    public static func checkSocketAvailable(_ socketPath: String) throws(HomeError) {
        try SocketPath.checkAvailable(socketPath)
    }

    /// Binds the socket and starts accepting connections.
    public func start() async throws {
        if configuration.listeningSocket == nil { try SocketPath.prepare(configuration.socketPath) }
        let registry = self.registry
        let configuration = self.configuration
        let logger = self.logger
        let journalID = store.journalID
        // A provider's accessories are reachable only while it is connected: none is yet.
        for provider in store.providerAccessories(excluding: providers.inProcessProviders).keys {
            store.setProviderReachable(false, provider: provider, origin: Origin(kind: .daemon, name: "homed"))
        }
        let router = makeRouter()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
            .childChannelInitializer { channel in
                // Who connected, before the first byte is read: every call's role comes from it.
                PeerLookup.peer(of: channel).flatMapThrowing { peer in
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionHandler(
                            router: router, registry: registry, configuration: configuration,
                            journalID: journalID, peer: peer, logger: logger))
                }
            }
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

    /// Every method of `HomeService` over this server's store, registry and providers.
    private func makeRouter() -> HomeRouter {
        HomeService(
            store: store, registry: registry, configuration: configuration, providers: providers,
            flushers: LoopFlushers()
        ).router()
    }

    /// The handler `start()` gives each accepted connection, over the same service,
    /// router, registry and providers, for a harness that drives one connection
    /// through an `EmbeddedChannel` with no socket (the fuzzer, Fuzz/). Nothing is
    /// bound and `start()`'s other steps are not taken.
    @_spi(Fuzzing) public func makeConnectionHandler() -> any ChannelHandler {
        ConnectionHandler(
            router: makeRouter(), registry: registry, configuration: configuration, journalID: store.journalID,
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
