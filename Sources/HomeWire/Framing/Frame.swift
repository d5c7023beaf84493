public import HomeModel

/// The protocol version this build speaks.
public let homeProtocolVersion: UInt32 = 1

/// One frame of the connection protocol (`home.v1.Frame`).
@_spi(Wire) public struct WireFrame: Hashable, Sendable {
    /// Chosen by the client for each call; 0 addresses the connection itself.
    public var callID: UInt64
    public var body: Body

    public enum Body: Hashable, Sendable {
        case hello(Hello)
        case helloReply(HelloReply)
        case open(CallOpen)
        /// One response message of a call, already encoded.
        case message([UInt8])
        /// Ends a call; nil error means OK.
        case status(HomeError?)
        case cancel
        case ping(nonce: UInt64)
        case pong(nonce: UInt64)
        case goAway(reason: String, lastCallID: UInt64)
    }

    public init(callID: UInt64, body: Body) {
        self.callID = callID
        self.body = body
    }
}

@_spi(Wire) public struct Hello: Hashable, Sendable {
    public var protocolVersion: UInt32
    public var clientName: String
    public var capabilities: [String]
    /// 0 = the default.
    public var maxFrameSize: UInt32

    public init(
        protocolVersion: UInt32 = homeProtocolVersion, clientName: String, capabilities: [String] = [],
        maxFrameSize: UInt32 = 0
    ) {
        self.protocolVersion = protocolVersion
        self.clientName = clientName
        self.capabilities = capabilities
        self.maxFrameSize = maxFrameSize
    }
}

public struct HelloReply: Hashable, Sendable {
    public var protocolVersion: UInt32
    public var serverName: String
    public var serverVersion: String
    public var connectionID: UInt64
    public var maxFrameSize: UInt32
    public var capabilities: [String]
    public var journalID: String

    public init(
        protocolVersion: UInt32 = homeProtocolVersion, serverName: String, serverVersion: String,
        connectionID: UInt64, maxFrameSize: UInt32, capabilities: [String] = [], journalID: String
    ) {
        self.protocolVersion = protocolVersion
        self.serverName = serverName
        self.serverVersion = serverVersion
        self.connectionID = connectionID
        self.maxFrameSize = maxFrameSize
        self.capabilities = capabilities
        self.journalID = journalID
    }
}

@_spi(Wire) public struct CallOpen: Hashable, Sendable {
    /// "home.v1.HomeService/ReadCharacteristics".
    public var method: String
    public var request: [UInt8]
    /// Relative deadline, in milliseconds from receipt.
    public var timeoutMs: UInt32?

    public init(method: String, request: [UInt8], timeoutMs: UInt32? = nil) {
        self.method = method
        self.request = request
        self.timeoutMs = timeoutMs
    }
}
