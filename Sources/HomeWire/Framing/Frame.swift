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

// Hello, HelloReply and CallOpen are generated from the schema
// (Generated/home_v1.wire.swift).
