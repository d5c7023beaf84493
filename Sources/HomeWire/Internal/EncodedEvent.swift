internal import CHomeProto
public import HomeModel
public import NIOCore

/// One event packed once as an entry of `SubscribeResponse.events`: the field's key
/// and length, then the `home.v1.Event` protobuf-c packed.
///
/// A change fanned out to a thousand subscribers is packed once, not a thousand
/// times: each subscriber's stream message is `SubscribeResponse { journal_id }`
/// packed by protobuf-c followed by these entries copied in. Protobuf defines a
/// message's encoding as the concatenation of its fields' encodings (a repeated
/// field may be spread anywhere), so the result decodes exactly as if protobuf-c
/// had packed the whole batch; a test checks that byte for byte against
/// `SubscribeResponse.encode`. Only the two or three bytes of field key and length
/// are written here by hand, because protobuf-c cannot splice a packed sub-message.
@_spi(Wire) public struct EncodedEvent: Sendable, Hashable {
    /// Field 2 (`events`), wire type 2 (length-delimited).
    static let fieldKey: UInt8 = 2 << 3 | 2

    public let bytes: ByteBuffer

    public init(_ event: HomeEvent) {
        var arena = CArena()
        let message = arena.event(event)
        let base = UnsafeMutableRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(base)
        var buffer = ByteBufferAllocator().buffer(capacity: size + 6)
        buffer.writeInteger(Self.fieldKey)
        buffer.writeVarint(UInt64(size))
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { out in
            protobuf_c_message_pack(base, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        bytes = buffer
    }
}

extension SubscribeResponse {
    /// A stream message of events packed earlier: `journal_id`, then each entry.
    @_spi(Wire) public static func encode(
        journalID: String, encodedEvents: some Sequence<EncodedEvent>, into buffer: inout ByteBuffer
    ) {
        buffer.writeImmutableBuffer(journalField(journalID))
        for event in encodedEvents {
            buffer.writeImmutableBuffer(event.bytes)
        }
    }

    /// `SubscribeResponse { resume_after }` packed by protobuf-c, to follow the
    /// packed events of a stream message (fields may come in any order).
    package static func resumeField(_ resumeAfter: UInt64) -> ByteBuffer {
        var buffer = ByteBuffer()
        encode(journalID: "", events: [], marker: nil, resumeAfter: resumeAfter, into: &buffer)
        return buffer
    }

    /// `SubscribeResponse { journal_id }` packed by protobuf-c: the start of every
    /// stream message made of packed events, which a sender can keep and reuse.
    @_spi(Wire) public static func journalField(_ journalID: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        encode(journalID: journalID, events: [], marker: nil, into: &buffer)
        return buffer
    }
}

extension ByteBuffer {
    /// A protobuf base-128 varint.
    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            writeInteger(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        writeInteger(UInt8(value))
    }

    /// A protobuf base-128 varint; nil when the bytes end first or it runs past 64 bits.
    mutating func readVarint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while shift < 64, let byte = readInteger(as: UInt8.self) {
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        return nil
    }
}
