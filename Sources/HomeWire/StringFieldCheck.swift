internal import CHomeProto
import HomeModel

/// protobuf-c accepts invalid UTF-8 in `string` fields (Google's runtimes reject it)
/// and silently cuts a string at an embedded NUL. This walks the raw wire bytes of a
/// message that already unpacked, guided by its descriptor, and rejects either.
enum StringFieldCheck {
    static func check(
        _ bytes: UnsafeRawBufferPointer,
        descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
        path: String
    ) throws(HomeError) {
        var reader = WireReader(bytes: bytes)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return }
            let fieldNumber = UInt32(truncatingIfNeeded: key >> 3)
            switch key & 7 {
            case 0: _ = reader.varint()
            case 1: reader.skip(8)
            case 5: reader.skip(4)
            case 2:
                guard let length = reader.varint(), let payload = reader.take(Int(length)) else { return }
                guard let field = protobuf_c_message_descriptor_get_field(descriptor, fieldNumber) else { continue }
                let name = swiftString(field.pointee.name)
                switch field.pointee.type {
                case PROTOBUF_C_TYPE_STRING:
                    if payload.contains(0) {
                        throw HomeError(.invalidArgument, "field \(path).\(name) contains a NUL byte")
                    }
                    if String(validating: payload, as: UTF8.self) == nil {
                        throw HomeError(.invalidArgument, "field \(path).\(name) is not valid UTF-8")
                    }
                case PROTOBUF_C_TYPE_MESSAGE:
                    let nested = field.pointee.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                    try check(payload, descriptor: nested, path: "\(path).\(name)")
                default:
                    break
                }
            default:
                return // groups: protobuf-c already refused or skipped them
            }
        }
    }
}

/// Minimal protobuf wire reader: only what the string check needs.
private struct WireReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func varint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        return nil
    }

    mutating func skip(_ count: Int) { offset += count }

    mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, offset + count <= bytes.count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }
}
