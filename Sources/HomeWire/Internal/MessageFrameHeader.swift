public import NIOCore

// The frames written on every reply and every stream write, framed by hand on
// purpose (see each function); tests check their bytes against protobuf-c's.

extension WireFrame {
    /// Appends a `message` frame carrying `payload` (an encoded response or stream
    /// message): the hot path of every reply and every stream write.
    public static func encodeMessage(callID: UInt64, payload: ByteBuffer, into buffer: inout ByteBuffer) {
        encodeMessageHeader(callID: callID, payloadLength: payload.readableBytes, into: &buffer)
        buffer.writeImmutableBuffer(payload)
    }

    /// Appends everything of a `message` frame up to its payload, which the caller
    /// then appends (`payloadLength` bytes, possibly in several pieces): a stream
    /// write puts the events packed for every subscriber straight after it, with
    /// no intermediate buffer.
    ///
    /// Written by hand rather than by protobuf-c, which can only pack a payload it
    /// is handed whole: `Frame { call_id = 1; message = 5 { payload = 1 } }` has a
    /// fixed shape, and a test checks these bytes against protobuf-c's for every
    /// size class of call id and payload. Zero call ids and empty payloads are
    /// left out, as protobuf-c leaves out proto3 defaults.
    public static func encodeMessageHeader(callID: UInt64, payloadLength: Int, into buffer: inout ByteBuffer) {
        let payloadField = payloadLength == 0 ? 0 : 1 + varintSize(UInt64(payloadLength)) + payloadLength
        let frameLength = messageFrameLength(callID: callID, payloadLength: payloadLength)
        buffer.reserveCapacity(minimumWritableBytes: frameHeaderLength + frameLength)
        buffer.writeInteger(UInt32(truncatingIfNeeded: frameLength))
        if callID != 0 {
            buffer.writeInteger(callIDKey)
            buffer.writeVarint(callID)
        }
        buffer.writeInteger(messageKey)
        buffer.writeVarint(UInt64(payloadField))
        if payloadLength != 0 {
            buffer.writeInteger(payloadKey)
            buffer.writeVarint(UInt64(payloadLength))
        }
    }

    /// The length a `message` frame with this payload announces in its header (the
    /// frame's size as a frame-size limit counts it: without the 4-byte header).
    package static func messageFrameLength(callID: UInt64, payloadLength: Int) -> Int {
        let payloadField = payloadLength == 0 ? 0 : 1 + varintSize(UInt64(payloadLength)) + payloadLength
        let callIDField = callID == 0 ? 0 : 1 + varintSize(callID)
        return callIDField + 1 + varintSize(UInt64(payloadField)) + payloadField
    }

    /// Appends the OK `status` frame that closes a call: written by hand for the
    /// same reason, after every unary reply (checked against protobuf-c by a test).
    public static func encodeOKStatus(callID: UInt64, into buffer: inout ByteBuffer) {
        let callIDField = callID == 0 ? 0 : 1 + varintSize(callID)
        // An OK CallStatus has only defaults: an empty message.
        buffer.writeInteger(UInt32(callIDField + 2))
        if callID != 0 {
            buffer.writeInteger(callIDKey)
            buffer.writeVarint(callID)
        }
        buffer.writeInteger(statusKey)
        buffer.writeInteger(UInt8(0))
    }

    /// The call id and payload of a `message` frame, sliced from its body (the
    /// bytes after the header) without copying: the hot path of every response a
    /// client reads, which then decodes the payload once, C to value.
    ///
    /// nil for any other frame, and for one not of the plain shape
    /// `encodeMessageHeader` writes (a field repeated, another field, a wire type
    /// not expected): `WireFrame(decoding:)` takes those apart as protobuf-c does.
    package static func messagePayload(of body: ByteBuffer) -> (callID: UInt64, payload: ByteBuffer)? {
        var reader = body
        var callID: UInt64 = 0
        var message: ByteBuffer?
        while reader.readableBytes > 0 {
            switch reader.readInteger(as: UInt8.self) {
            case callIDKey?:
                guard let value = reader.readVarint() else { return nil }
                callID = value
            case messageKey? where message == nil:
                guard let length = reader.readVarint(), length <= reader.readableBytes else { return nil }
                message = reader.readSlice(length: Int(length))
            default:
                return nil
            }
        }
        // CallMessage: empty (an empty payload), or exactly `payload`.
        guard var message else { return nil }
        guard message.readableBytes > 0 else { return (callID, message) }
        guard message.readInteger(as: UInt8.self) == payloadKey, let length = message.readVarint(),
            length == message.readableBytes
        else { return nil }
        return (callID, message)
    }

    /// A call-open frame taken apart by hand, its request sliced from the frame
    /// without copying: the hot path of every call the daemon receives, which
    /// then decodes the request once, C to value.
    ///
    /// nil for any other frame, and for one not of the plain shape a client writes
    /// (a field repeated, another field, a method that is not clean UTF-8, a
    /// timeout past 32 bits): `WireFrame(decoding:)` takes those apart, and
    /// refuses them, as protobuf-c does.
    package static func callOpen(of body: ByteBuffer) -> (callID: UInt64, call: IncomingCall)? {
        var reader = body
        var callID: UInt64?
        var open: ByteBuffer?
        while reader.readableBytes > 0 {
            switch reader.readInteger(as: UInt8.self) {
            case callIDKey? where callID == nil:
                guard let value = reader.readVarint() else { return nil }
                callID = value
            case openKey? where open == nil:
                guard let length = reader.readVarint(), length <= reader.readableBytes else { return nil }
                open = reader.readSlice(length: Int(length))
            default:
                return nil
            }
        }
        guard var open else { return nil }
        var method: String?
        var request: ByteBuffer?
        var timeoutMs: UInt32?
        while open.readableBytes > 0 {
            switch open.readInteger(as: UInt8.self) {
            case methodKey? where method == nil:
                guard let length = open.readVarint(), length <= open.readableBytes,
                    let bytes = open.readSlice(length: Int(length)), !bytes.readableBytesView.contains(0),
                    let text = bytes.getString(at: bytes.readerIndex, length: bytes.readableBytes),
                    text.utf8.elementsEqual(bytes.readableBytesView)
                else { return nil }
                method = text
            case requestKey? where request == nil:
                guard let length = open.readVarint(), length <= open.readableBytes else { return nil }
                request = open.readSlice(length: Int(length))
            case timeoutKey? where timeoutMs == nil:
                guard let value = open.readVarint(), let timeout = UInt32(exactly: value) else { return nil }
                timeoutMs = timeout
            default:
                return nil
            }
        }
        return (callID ?? 0, IncomingCall(method: method ?? "", request: request ?? ByteBuffer(), timeoutMs: timeoutMs))
    }

    /// `Frame.open`: field 4, length-delimited; `CallOpen.method`, `.request`
    /// (fields 1 and 2, length-delimited) and `.timeout_ms` (field 3, varint).
    private static let openKey: UInt8 = 4 << 3 | 2
    private static let methodKey: UInt8 = 1 << 3 | 2
    private static let requestKey: UInt8 = 2 << 3 | 2
    private static let timeoutKey: UInt8 = 3 << 3 | 0

    /// `Frame.call_id`: field 1, varint.
    private static let callIDKey: UInt8 = 1 << 3 | 0
    /// `Frame.message`: field 5, length-delimited.
    private static let messageKey: UInt8 = 5 << 3 | 2
    /// `Frame.status`: field 6, length-delimited.
    private static let statusKey: UInt8 = 6 << 3 | 2
    /// `CallMessage.payload`: field 1, length-delimited.
    private static let payloadKey: UInt8 = 1 << 3 | 2

    private static func varintSize(_ value: UInt64) -> Int {
        // 7 bits a byte; 0 still takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }
}

/// A call as the daemon runs it: the method, the request still encoded (a slice
/// of the frame it came in), and the timeout.
package struct IncomingCall: Sendable {
    package var method: String
    package var request: ByteBuffer
    package var timeoutMs: UInt32?

    package init(method: String, request: ByteBuffer, timeoutMs: UInt32?) {
        self.method = method
        self.request = request
        self.timeoutMs = timeoutMs
    }

    /// A call whose frame protobuf-c took apart.
    package init(_ open: CallOpen) {
        self.init(method: open.method, request: ByteBuffer(bytes: open.request), timeoutMs: open.timeoutMs)
    }
}
