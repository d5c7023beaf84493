internal import Foundation
public import HomeModel
public import HomeWire
internal import NIOCore

#if canImport(Glibc)
    internal import Glibc
#endif

/// A synchronous connection to homed for tools and latency-critical loops: one call
/// at a time, on the calling thread, with plain blocking reads and writes — a round
/// trip costs what a C client's does (no event loop, no thread hop, no poll).
///
/// Use `HomeClient` for concurrency and subscriptions; use this where a thread does
/// one request after another. Not thread-safe: one thread uses it at a time.
///
/// ```swift
/// let client = try BlockingHomeClient(path: "/run/homed/homed.sock", name: "probe")
/// let reads = try client.read([17])
/// ```
public final class BlockingHomeClient {
    public let hello: HelloReply
    private var io: BlockingFrameIO
    private var nextCallID: UInt64 = 1

    /// Connects and says hello.
    ///
    /// - Throws: `.unavailable` naming the socket when nothing listens there; the
    ///   daemon's error when it refuses the hello.
    public init(path: String? = nil, name: String) throws(HomeError) {
        let path = path ?? HomeClient.defaultSocketPath()
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
            let reason = fits ? String(cString: strerror(errno)) : "the path is too long for a Unix socket"
            close(fd)
            throw HomeError(
                .unavailable, "cannot reach homed: no daemon is listening on \(path) (\(reason)); is homed running?")
        }
        var io = BlockingFrameIO(fd: fd)
        var reply: HelloReply?
        do throws(HomeError) {
            try io.send(WireFrame(callID: 0, body: .hello(Hello(clientName: name))))
            while reply == nil {
                let frame = try io.receive()
                switch frame.body {
                case .helloReply(let hello): reply = hello
                case .status(let error): throw error ?? HomeError(.unavailable, "homed closed the connection")
                default: continue
                }
            }
        } catch {
            close(fd)
            throw error
        }
        self.io = io
        hello = reply!
    }

    deinit { close(io.fd) }

    /// A unary call: sends the request, blocks until its response or error status.
    public func call<Request, Response>(_ method: UnaryMethod<Request, Response>, _ request: Request)
        throws(HomeError) -> Response
    {
        let callID = nextCallID
        nextCallID += 1
        try io.send(WireFrame(callID: callID, body: .open(CallOpen(method: method.name, request: request.encoded()))))
        var payload: [UInt8]?
        while true {
            let frame = try io.receive()
            if frame.callID == 0 {
                switch frame.body {
                case .ping(let nonce): try io.send(WireFrame(callID: 0, body: .pong(nonce: nonce)))
                case .status(let error): throw error ?? HomeError(.unavailable, "homed closed the connection")
                case .goAway(let reason, _): throw HomeError(.unavailable, "homed is going away: \(reason)")
                default: break
                }
                continue
            }
            guard frame.callID == callID else { continue }
            switch frame.body {
            case .message(let bytes): payload = bytes
            case .status(let error?): throw error
            case .status(nil):
                guard let payload else {
                    throw HomeError(.internal, "call \(callID) ended OK without a response message")
                }
                return try Response(wire: payload)
            default: break
            }
        }
    }

    public func read(_ characteristicIDs: [ObjectID]) throws(HomeError) -> ReadCharacteristicsResponse {
        try call(HomeMethods.readCharacteristics, ReadCharacteristicsRequest(characteristicIDs: characteristicIDs))
    }

    public func write(_ request: WriteCharacteristicsRequest) throws(HomeError) -> WriteCharacteristicsResponse {
        try call(HomeMethods.writeCharacteristics, request)
    }
}

/// Length-prefixed frames over a blocking socket.
struct BlockingFrameIO {
    let fd: Int32
    private var buffer = ByteBuffer()
    private var decoder = FrameDecoder()

    init(fd: Int32) {
        self.fd = fd
    }

    func send(_ frame: WireFrame) throws(HomeError) {
        let bytes = frame.encoded()
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

    mutating func receive() throws(HomeError) -> WireFrame {
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
            if count == 0 { throw HomeError(.unavailable, "homed closed the connection") }
        }
    }
}
