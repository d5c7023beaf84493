internal import Foundation
public import HomeModel
@_spi(Wire) public import HomeWire
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
        var io = try BlockingFrameIO(connectingTo: path)
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
            io.close()
            throw error
        }
        self.io = io
        hello = reply!
    }

    deinit { io.close() }

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
