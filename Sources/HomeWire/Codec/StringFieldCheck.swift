internal import CHomeProto
internal import HomeModel

/// protobuf-c accepts invalid UTF-8 in `string` fields (Google's runtimes reject it)
/// and silently cuts a string at an embedded NUL. This walks the raw wire bytes of a
/// message that already unpacked, guided by its descriptor, and rejects either.
enum StringFieldCheck {
    static func check(
        _ bytes: UnsafeRawBufferPointer,
        descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
        path: String
    ) throws(HomeError) {
        // The walk allocates nothing; the field's path is spelled out only for an error.
        guard let failure = firstBadString(bytes, descriptor: descriptor) else { return }
        let fieldPath = ([path] + failure.fields.reversed()).joined(separator: ".")
        throw HomeError(.invalidArgument, "field \(fieldPath) \(failure.problem)")
    }

    struct Failure {
        /// Field names from the innermost out.
        var fields: [String]
        var problem: String
    }

    private static func firstBadString(
        _ bytes: UnsafeRawBufferPointer,
        descriptor: UnsafePointer<ProtobufCMessageDescriptor>
    ) -> Failure? {
        var reader = WireReader(bytes: bytes)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            let fieldNumber = UInt32(truncatingIfNeeded: key >> 3)
            switch key & 7 {
            case 0: _ = reader.varint()
            case 1: reader.skip(8)
            case 5: reader.skip(4)
            case 2:
                guard let length = reader.varint(), let payload = reader.take(Int(length)) else { return nil }
                guard let field = protobuf_c_message_descriptor_get_field(descriptor, fieldNumber) else { continue }
                switch field.pointee.type {
                case PROTOBUF_C_TYPE_STRING:
                    if payload.contains(0) {
                        return Failure(fields: [swiftString(field.pointee.name)], problem: "contains a NUL byte")
                    }
                    if !isValidUTF8(payload) {
                        return Failure(fields: [swiftString(field.pointee.name)], problem: "is not valid UTF-8")
                    }
                case PROTOBUF_C_TYPE_MESSAGE:
                    let nested = field.pointee.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                    if var failure = firstBadString(payload, descriptor: nested) {
                        failure.fields.append(swiftString(field.pointee.name))
                        return failure
                    }
                default:
                    break
                }
            default:
                return nil  // groups: protobuf-c already refused or skipped them
            }
        }
        return nil
    }

    /// ASCII, the common case, is checked without decoding.
    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        return String(validating: bytes, as: UTF8.self) != nil
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
