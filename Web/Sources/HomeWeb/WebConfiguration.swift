public import HomeModel

/// What homed-web serves and how, from its command line.
public struct WebConfiguration: Sendable {
    public enum Listen: Sendable, Hashable {
        case tcp(host: String, port: Int)
        case unix(path: String)

        /// Only this machine can connect: 127.0.0.0/8, ::1, localhost, or a Unix socket
        /// (whose mode and directory say who may).
        public var isLocal: Bool {
            switch self {
            case .unix: true
            case .tcp(let host, _): host == "localhost" || host == "::1" || host.hasPrefix("127.")
            }
        }
    }

    public var listen: Listen = .tcp(host: "127.0.0.1", port: 8080)
    public var socketPath: String
    /// The role of requests that need no login (nil: every request logs in).
    public var localRole: Role?
    public var users: [String: WebUser] = [:]
    /// Unix users that connections for a role are made as.
    public var identities: [Role: ConnectIdentity] = [:]
    public var certificatePath: String?
    public var keyPath: String?
    /// Event streams open at once; one more is answered 503.
    public var maxStreams = 256
    /// Requests in progress at once (streams included); one more is answered 503.
    public var maxRequests = 512
    /// The largest request body read.
    public var maxBodyBytes = 16 * 1024

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    public var tls: Bool { certificatePath != nil }
}
