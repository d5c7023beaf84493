import NIOCore

/// The default and largest frame the daemon accepts unless a hello negotiates less.
public let defaultMaxFrameSize = 4 * 1024 * 1024

/// Length of the big-endian frame header.
public let frameHeaderLength = 4

/// Splits a byte stream into frames: a 4-byte big-endian length, then that many
/// bytes. Yields each frame's body (without the header).
///
/// A length above `maxFrameSize` is an error *before* anything is allocated for it:
/// the decoder never trusts a length it has not bounded.
public struct FrameDecoder: ByteToMessageDecoder, NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public var maxFrameSize: Int

    public init(maxFrameSize: Int = defaultMaxFrameSize) {
        self.maxFrameSize = maxFrameSize
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard Int(length) <= maxFrameSize else {
            throw FrameTooLargeError(length: Int(length), limit: maxFrameSize)
        }
        guard buffer.readableBytes >= frameHeaderLength + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: frameHeaderLength)
        return buffer.readSlice(length: Int(length))
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        if let frame = try decode(buffer: &buffer) { return frame }
        if seenEOF && buffer.readableBytes > 0 {
            throw TruncatedFrameError(bytesPending: buffer.readableBytes)
        }
        return nil
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try decode(buffer: &buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        guard let frame = try decode(buffer: &buffer) else {
            if buffer.readableBytes > 0 {
                throw TruncatedFrameError(bytesPending: buffer.readableBytes)
            }
            return .needMoreData
        }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }
}

/// A frame header announced more bytes than the limit allows.
public struct FrameTooLargeError: Error, Hashable, CustomStringConvertible {
    public var length: Int
    public var limit: Int
    public init(length: Int, limit: Int) {
        self.length = length
        self.limit = limit
    }
    public var description: String {
        "frame of \(length) bytes exceeds the maximum frame size of \(limit) bytes"
    }
}

/// The peer closed the connection in the middle of a frame.
public struct TruncatedFrameError: Error, Hashable, CustomStringConvertible {
    public var bytesPending: Int
    public init(bytesPending: Int) { self.bytesPending = bytesPending }
    public var description: String {
        "connection closed in the middle of a frame (\(bytesPending) bytes of an incomplete frame)"
    }
}
