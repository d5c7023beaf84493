/// HAP's TLV8 framing: a sequence of items, each a type byte, a length byte and that
/// many value bytes (longer values are split into consecutive items of one type).
enum TLV8 {
    /// Why the bytes are not a sequence of whole items, or nil if they are.
    static func malformation(_ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            guard offset + 1 < bytes.count else {
                return "the item at byte \(offset) has a type but no length"
            }
            let length = Int(bytes[offset + 1])
            let remaining = bytes.count - offset - 2
            guard length <= remaining else {
                return "the item at byte \(offset) declares \(length) bytes but \(remaining) remain"
            }
            offset += 2 + length
        }
        return nil
    }
}
