internal import HomeModel
internal import NIOCore

/// The writing half of one server-streaming call, which its handler gets instead
/// of the connection's channel: it writes payloads and ends the call with a status,
/// and the connection does the rest — framing, the frame size its hello negotiated,
/// flushing, and telling the stream when the socket takes writes again
/// (`ServerStreamCall.resumeWriting`). The connection is the only writer of its socket.
///
/// Event loop only (the connection's), like the handler that holds it; it is
/// `Sendable` so that a stream registered elsewhere (a subscription, offered
/// events under the store's lock) can hold it and hop to `eventLoop`.
struct CallWriter: StreamCallWriter {
    let callID: UInt64
    let eventLoop: any EventLoop
    /// The frame size the connection's hello negotiated: no frame of the call is larger.
    let frameSize: Int
    private let connection: NIOLoopBound<ConnectionHandler>

    init(callID: UInt64, frameSize: Int, connection: ConnectionHandler, eventLoop: any EventLoop) {
        self.callID = callID
        self.eventLoop = eventLoop
        self.frameSize = frameSize
        self.connection = NIOLoopBound(connection, eventLoop: eventLoop)
    }

    /// Buffers are plain allocations: the connection frames (and so copies) each payload.
    var allocator: ByteBufferAllocator { ByteBufferAllocator() }

    var isOpen: Bool { connection.value.isOpen }

    var isWritable: Bool { connection.value.isWritable }

    func fits(payloadBytes: Int) -> Bool {
        ConnectionHandler.messageFrameFits(callID: callID, payloadBytes: payloadBytes, frameSize: frameSize)
    }

    func write(_ payload: ByteBuffer) throws(HomeError) {
        guard fits(payloadBytes: payload.readableBytes) else {
            throw HomeError(
                .resourceExhausted,
                "a message of \(payload.readableBytes) bytes on call \(callID) exceeds the frame size of "
                    + "\(frameSize) bytes this connection negotiated")
        }
        connection.value.writeMessage(callID: callID, payload: payload)
    }

    func flush() {
        connection.value.flushOutbound()
    }

    func finish(with error: HomeError?) {
        connection.value.writeStatus(callID: callID, error: error)
        connection.value.flushOutbound()
    }
}
