internal import HomeModel
@_spi(Wire) internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// Limits and names the server runs with. Every limit has a clear error when hit.
public struct ServerConfiguration: Sendable {
    public var socketPath: String
    /// The socket's permissions: who may connect at all (what they may do is their
    /// role's). 0600, the daemon's user alone, unless set.
    public var socketMode: UInt32 = 0o600
    /// The socket's group (nil: the daemon's own).
    public var socketGroup: UInt32?
    /// A socket already listening (passed by systemd) to serve on instead of binding
    /// `socketPath`: its file belongs to whoever made it, and is neither checked,
    /// moved nor removed.
    public var listeningSocket: Int32?
    /// Awaited by `HomeServer.start()` before it accepts connections on the socket
    /// (in-process ones are served already): `homed --demo` waits here for its
    /// simulator to register, so that no client ever finds the demo unreachable.
    public var beforeListening: (@Sendable () async -> Void)?
    /// Called once the server accepts connections, and when it begins to stop.
    public var onListening: (@Sendable () -> Void)?
    public var onStopping: (@Sendable () -> Void)?
    /// Which role each caller has, by its uid and groups (see `RolePolicy`).
    package var roles = RoleTable(RolePolicy(daemonUID: getuid()))
    public var serverName = "homed"
    public var serverVersion = HomedVersion.current
    /// The database's path as GetStatus reports it; "" for a daemon in memory.
    public var databasePath = ""
    /// Largest frame accepted or sent; a hello may negotiate less, never more.
    public var maxFrameSize = defaultMaxFrameSize
    public var maxConnections = 1024
    /// Open server-streaming calls per connection.
    public var maxStreamsPerConnection = 64
    /// A connection that has not said hello by then is closed.
    public var helloTimeoutMs: Int64 = 5_000
    /// A frame begun must be complete by then, or the connection is closed.
    public var frameTimeoutMs: Int64 = 10_000
    /// A connection with open calls that sent nothing for this long is pinged, and
    /// closed if it then sends nothing (not even the pong) for as long again.
    public var keepaliveIntervalMs: Int64 = 20_000
    /// The limits a reload may change (`LiveLimits`): shared by every copy of this
    /// configuration, so the daemon keeps it to apply a reload.
    public var limits = LiveLimits()
    /// Events a subscriber may have pending when it does not say (live: `limits`).
    public var defaultQueueLimit: Int {
        get { limits.defaultQueueLimit }
        nonmutating set { limits.defaultQueueLimit = newValue }
    }
    /// The largest queue_limit a subscription may ask for.
    public var maxQueueLimit = defaultMaxQueueLimit
    public static let defaultMaxQueueLimit = 16_384
    /// A subscription's queue may hold this many bytes per event of its limit
    /// (large string or data values count for their size): full at whichever
    /// comes first.
    public var queueBytesPerEvent = 256
    /// What the queues of one connection's subscriptions may hold together, in
    /// bytes: a subscription that would take more is refused.
    public var maxQueueBytesPerConnection = 16 * 1024 * 1024
    /// How long a read or write waits for a provider's answer when the call sets
    /// no `timeout_ms` (live: `limits`).
    public var providerTimeoutMs: UInt32 {
        get { limits.providerTimeoutMs }
        nonmutating set { limits.providerTimeoutMs = newValue }
    }
    /// How often a provider is pinged, and how long a ping may wait for its answer:
    /// an unanswered ping ends the session, so a hung provider's accessories are
    /// unreachable within the sum (a closed connection makes them so at once).
    public var providerPingIntervalMs: UInt32 = 300
    public var providerPingTimeoutMs: UInt32 = 600
    /// For this long after the server is made, a request to a provider known from
    /// before (its accessories are in the graph) that has not come back yet waits for
    /// it, up to the request's deadline, rather than failing UNAVAILABLE at once:
    /// providers are services of their own that start after homed. 0: no waiting.
    public var providerStartupGraceMs: UInt32 = 10_000
    /// Providers whose accessories the daemon serves itself, with no provider
    /// process: writes apply at once and no connection may take their ids. By
    /// default the demo home's "simulator", for a demo with no simulator running;
    /// `homed --demo` empties it when it runs the simulator as a provider.
    public var inProcessProviders: Set<String> = ["simulator"]

    public init(socketPath: String) {
        self.socketPath = socketPath
    }
}
