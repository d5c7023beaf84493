internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

// Everything the connection writes goes through here, the only writer of its
// socket: unary answers, stream messages and statuses (through `CallWriter`), and
// the connection's own frames. Writes are queued in order and sent at the next
// flush: after a read batch (`channelReadComplete`), or when a stream has written
// its batch.
extension ConnectionHandler {
    /// Whether a `message` frame with this payload fits in the frame size.
    static func messageFrameFits(callID: UInt64, payloadBytes: Int, frameSize: Int) -> Bool {
        WireFrame.messageFrameLength(callID: callID, payloadLength: payloadBytes) <= frameSize
    }

    var isOpen: Bool { context?.channel.isActive ?? false }

    var isWritable: Bool {
        guard let channel = context?.channel else { return false }
        return channel.isActive && channel.isWritable
    }

    /// Queues one `message` frame of a call (its size was checked by the caller).
    func writeMessage(callID: UInt64, payload: ByteBuffer) {
        guard let context, context.channel.isActive else { return }
        var out = context.channel.allocator.buffer(capacity: payload.readableBytes + 24)
        WireFrame.encodeMessage(callID: callID, payload: payload, into: &out)
        context.write(wrapOutboundOut(out), promise: nil)
    }

    /// Queues the status frame that ends a call (nil = OK).
    func writeStatus(callID: UInt64, error: HomeError?) {
        guard let context, context.channel.isActive else { return }
        write(context, WireFrame(callID: callID, body: .status(error)))
    }

    func flushOutbound() {
        context?.flush()
    }

    /// Queues a frame on this connection.
    func write(_ context: ChannelHandlerContext, _ frame: WireFrame) {
        context.write(wrapOutboundOut(frame.encoded()), promise: nil)
    }
}
