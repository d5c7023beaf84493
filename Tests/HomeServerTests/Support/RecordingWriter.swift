import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import NIOEmbedded

@testable import HomeServer

/// A call's writer that keeps what it is given, for the streams' unit tests: it
/// checks the frame size as a connection does, and a test decides when its socket
/// takes writes.
final class RecordingWriter: StreamCallWriter, @unchecked Sendable {
    let callID: UInt64
    let frameSize: Int
    let embeddedLoop: EmbeddedEventLoop
    var eventLoop: any EventLoop { embeddedLoop }
    var allocator: ByteBufferAllocator { ByteBufferAllocator() }
    var isOpen = true
    /// What the socket would say; `isWritable` is false once the connection closed.
    var socketWritable = true
    var isWritable: Bool { isOpen && socketWritable }
    /// Written, not yet flushed.
    private(set) var unflushed: [ByteBuffer] = []
    /// Flushed, in order.
    private(set) var payloads: [ByteBuffer] = []
    /// The status the call ended with, once it did (`.some(nil)`: OK).
    private(set) var status: HomeError??

    init(callID: UInt64 = 5, frameSize: Int = 64 * 1024, loop: EmbeddedEventLoop = EmbeddedEventLoop()) {
        self.callID = callID
        self.frameSize = frameSize
        self.embeddedLoop = loop
    }

    func fits(payloadBytes: Int) -> Bool {
        WireFrame.messageFrameLength(callID: callID, payloadLength: payloadBytes) <= frameSize
    }

    func write(_ payload: ByteBuffer) throws(HomeError) {
        guard fits(payloadBytes: payload.readableBytes) else {
            throw HomeError(.resourceExhausted, "a message of \(payload.readableBytes) bytes does not fit")
        }
        unflushed.append(payload)
    }

    func flush() {
        payloads += unflushed
        unflushed = []
    }

    func finish(with error: HomeError?) {
        flush()
        status = .some(error)
    }
}
