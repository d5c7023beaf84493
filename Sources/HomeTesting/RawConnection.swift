internal import Foundation
internal import HomeClient
@_spi(Wire) public import HomeWire
internal import NIOCore

#if canImport(Glibc)
    internal import Glibc
#endif

/// A bare blocking socket to the daemon, for sending what no well-behaved client
/// would: garbage, truncated frames, huge lengths. Reads time out after 5 s so a
/// test never hangs. It frames as `BlockingHomeClient` does (the same code).
public final class RawConnection {
    private var io: BlockingFrameIO

    public init(path: String) throws {
        io = try BlockingFrameIO(connectingTo: path, receiveTimeoutSeconds: 5)
    }

    deinit { io.close() }

    public func send(_ bytes: [UInt8]) throws {
        try io.send(bytes: ByteBuffer(bytes: bytes))
    }

    @_spi(Wire) public func send(_ frame: WireFrame) throws {
        try io.send(frame)
    }

    public func hello(name: String = "raw", maxFrameSize: UInt32 = 0) throws -> HelloReply {
        try send(WireFrame(callID: 0, body: .hello(Hello(clientName: name, maxFrameSize: maxFrameSize))))
        guard case .helloReply(let reply) = try receive()?.body else { throw RawError("no hello reply") }
        return reply
    }

    /// Closes the sending side only (the daemon sees end of stream).
    public func shutdownWrite() { shutdown(io.fd, Int32(SHUT_WR)) }

    /// The next frame, or nil when the daemon closed the connection.
    @_spi(Wire) public func receive() throws -> WireFrame? {
        try io.receiveUnlessClosed()
    }

    /// Reads frames until the daemon closes; returns them.
    @_spi(Wire) public func receiveUntilClosed() throws -> [WireFrame] {
        var frames: [WireFrame] = []
        while let frame = try receive() { frames.append(frame) }
        return frames
    }
}

public struct RawError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
