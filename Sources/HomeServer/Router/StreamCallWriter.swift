internal import HomeModel
internal import NIOCore

/// Where a server-streaming call's messages go: what the streams and their
/// encoders write to, so that they run against a recording writer in unit tests
/// as against a connection (`CallWriter`).
///
/// Event loop only (`eventLoop`), like the stream that holds it.
protocol StreamCallWriter: Sendable {
    var callID: UInt64 { get }
    var eventLoop: any EventLoop { get }
    /// The frame size the connection's hello negotiated: no frame of the call is larger.
    var frameSize: Int { get }
    var allocator: ByteBufferAllocator { get }
    /// The connection is open: what is written may still arrive.
    var isOpen: Bool { get }
    /// The connection is open and its socket takes writes now. A stream that finds
    /// it false stops, and carries on at `ServerStreamCall.resumeWriting()`: a slow
    /// reader fills only the stream's own queue, never the daemon's memory.
    var isWritable: Bool { get }
    /// Whether a message with a payload of this size fits in one frame of the call.
    func fits(payloadBytes: Int) -> Bool
    /// Queues one message of the call.
    ///
    /// - Throws: RESOURCE_EXHAUSTED when it would not fit in a frame.
    func write(_ payload: ByteBuffer) throws(HomeError)
    /// Sends what was written.
    func flush()
    /// Ends the call with its status (nil = OK), after what was written, and flushes.
    func finish(with error: HomeError?)
}
