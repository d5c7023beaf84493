internal import HomeModel
public import NIOCore

/// The default and largest frame the daemon accepts unless a hello negotiates less.
public let defaultMaxFrameSize = 4 * 1024 * 1024

/// Length of the big-endian frame header.
@_spi(Wire) public let frameHeaderLength = 4

/// Splits a byte stream into frames: a 4-byte big-endian length, then that many
/// bytes. Yields each frame's body (without the header).
///
/// A length above `maxFrameSize` is an error *before* anything is allocated for it:
/// the decoder never trusts a length it has not bounded. Errors are `HomeError`s,
/// ready to be sent as a status: RESOURCE_EXHAUSTED for a frame over the limit,
/// UNAVAILABLE for a stream that ends in the middle of a frame.
@_spi(Wire) public struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public var maxFrameSize: Int

    public init(maxFrameSize: Int = defaultMaxFrameSize) {
        self.maxFrameSize = maxFrameSize
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard Int(length) <= maxFrameSize else {
            throw HomeError(
                .resourceExhausted, "frame of \(length) bytes exceeds the maximum frame size of \(maxFrameSize) bytes")
        }
        guard buffer.readableBytes >= frameHeaderLength + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: frameHeaderLength)
        return buffer.readSlice(length: Int(length))
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        if let frame = try decode(buffer: &buffer) { return frame }
        if seenEOF && buffer.readableBytes > 0 {
            throw HomeError(
                .unavailable,
                "connection closed in the middle of a frame "
                    + "(\(buffer.readableBytes) bytes of an incomplete frame)")
        }
        return nil
    }
}
