internal import Foundation
public import HomeWire
internal import NIOCore

/// A bare blocking socket to the daemon, for sending what no well-behaved client
/// would: garbage, truncated frames, huge lengths. Reads time out after 5 s so a
/// test never hangs.
public final class RawConnection {
    private let fd: Int32

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw RawError("connect \(path): \(errno)")
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw RawError("send: \(errno)") }
            offset += written
        }
    }

    public func send(_ frame: WireFrame) throws {
        try send(Array(frame.encoded().readableBytesView))
    }

    public func hello(name: String = "raw", maxFrameSize: UInt32 = 0) throws -> HelloReply {
        try send(WireFrame(callID: 0, body: .hello(Hello(clientName: name, maxFrameSize: maxFrameSize))))
        guard case .helloReply(let reply) = try receive()?.body else { throw RawError("no hello reply") }
        return reply
    }

    /// Closes the sending side only (the daemon sees end of stream).
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    private func readExactly(_ count: Int) throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let read = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
            if read == 0 { return nil }
            guard read > 0 else { throw RawError("recv: errno \(errno) (timeout?)") }
            offset += read
        }
        return bytes
    }

    /// The next frame, or nil when the daemon closed the connection.
    public func receive() throws -> WireFrame? {
        guard let header = try readExactly(4) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard let body = try readExactly(length) else { throw RawError("connection closed mid-frame") }
        return try WireFrame(decoding: ByteBuffer(bytes: body))
    }

    /// Reads frames until the daemon closes; returns them.
    public func receiveUntilClosed() throws -> [WireFrame] {
        var frames: [WireFrame] = []
        while let frame = try receive() { frames.append(frame) }
        return frames
    }
}

public struct RawError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
