internal import Foundation
package import HomeModel
@_spi(Wire) package import HomeWire
package import NIOCore

#if canImport(Glibc)
    internal import Glibc
#endif

/// Length-prefixed frames over a blocking Unix socket: the one blocking framing
/// reader and the one `sockaddr_un` setup, shared by `BlockingHomeClient` and the
/// tests' raw connection. Not thread-safe.
package struct BlockingFrameIO {
    package let fd: Int32
    private var buffer = ByteBuffer()
    private var decoder = FrameDecoder()

    /// Connects to the socket at `path`.
    ///
    /// - Parameter receiveTimeoutSeconds: how long a read may wait; nil waits forever.
    /// - Throws: `.unavailable` naming the socket when nothing listens there.
    package init(connectingTo path: String, receiveTimeoutSeconds: Int? = nil) throws(HomeError) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else {
            throw HomeError(.unavailable, "cannot create a socket: \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Bool in
            let bytes = Array(path.utf8)
            guard bytes.count < raw.count else { return false }
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
            return true
        }
        let connected =
            fits
            && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            } == 0
        guard connected else {
            let code = fits ? errno : nil
            let reason = code.map { String(cString: strerror($0)) } ?? "the path is too long for a Unix socket"
            Glibc.close(fd)
            throw HomeClient.connectFailure(path: path, errno: code, reason: reason)
        }
        if let receiveTimeoutSeconds {
            var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        self.fd = fd
    }

    package func close() {
        Glibc.close(fd)
    }

    package func send(_ frame: WireFrame) throws(HomeError) {
        try send(bytes: frame.encoded())
    }

    /// Sends bytes as they are: what a test sends that no client would.
    package func send(bytes: ByteBuffer) throws(HomeError) {
        var sent = 0
        while sent < bytes.readableBytes {
            let result = bytes.withUnsafeReadableBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw HomeError(.unavailable, "the connection to homed failed: \(String(cString: strerror(errno)))")
            }
            sent += result
        }
    }

    /// The next frame.
    ///
    /// - Throws: `.unavailable` when homed closed the connection or reading failed
    ///   (a read timeout included); `.internal` for a frame this client cannot read.
    package mutating func receive() throws(HomeError) -> WireFrame {
        guard let frame = try receiveUnlessClosed() else {
            throw HomeError(.unavailable, "homed closed the connection")
        }
        return frame
    }

    /// The next frame, or nil when homed closed the connection between two frames.
    package mutating func receiveUnlessClosed() throws(HomeError) -> WireFrame? {
        while true {
            let body: ByteBuffer?
            do {
                body = try decoder.decode(buffer: &buffer)
            } catch {
                throw HomeError(.internal, "homed sent a frame this client cannot read: \(error)")
            }
            if let body { return try WireFrame(decoding: body) }
            buffer.discardReadBytes()
            var failure: Int32 = 0
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64 * 1024) { raw -> Int in
                let result = recv(fd, raw.baseAddress!, raw.count, 0)
                if result < 0 { failure = errno }
                return max(result, 0)
            }
            if failure == EINTR { continue }
            if failure != 0 {
                throw HomeError(.unavailable, "the connection to homed failed: \(String(cString: strerror(failure)))")
            }
            if count == 0 {
                guard buffer.readableBytes == 0 else {
                    throw HomeError(.unavailable, "homed closed the connection in the middle of a frame")
                }
                return nil
            }
        }
    }
}
