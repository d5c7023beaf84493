internal import HomeModel

/// The bytes of one value-log row: the values one commit changed, each as its
/// characteristic id and its value, in the order they are to be applied.
///
/// Written by hand rather than as SQLite rows because it is on the path of every
/// acknowledged write: one row with one blob per commit costs a fraction of a row
/// per value (measured: ~0.1 ms for a thousand values against ~0.6 ms as rows).
///
/// Layout: a version byte (1), then per value: the id as a LEB128 varint, a kind
/// byte, and the value's bytes — nothing for no value and the booleans (kinds 0–2),
/// a zigzag varint for int (3), a varint for uint (4), eight little-endian bytes of
/// the IEEE 754 bits for float (5), a varint length and the bytes for string (6)
/// and data (7).
enum ValueLogRecord {
    static let version: UInt8 = 1

    private enum Kind: UInt8 {
        case none = 0
        case boolFalse = 1
        case boolTrue = 2
        case int = 3
        case uint = 4
        case float = 5
        case string = 6
        case data = 7
    }

    static func encode(_ changes: [SavedValue]) -> [UInt8] {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(1 + changes.count * 12)
        for change in changes {
            appendVarint(change.characteristicID, to: &bytes)
            switch change.value {
            case nil: bytes.append(Kind.none.rawValue)
            case .bool(let value): bytes.append(value ? Kind.boolTrue.rawValue : Kind.boolFalse.rawValue)
            case .int(let value):
                bytes.append(Kind.int.rawValue)
                appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &bytes)
            case .uint(let value):
                bytes.append(Kind.uint.rawValue)
                appendVarint(value, to: &bytes)
            case .float(let value):
                bytes.append(Kind.float.rawValue)
                withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case .string(let value):
                bytes.append(Kind.string.rawValue)
                appendVarint(UInt64(value.utf8.count), to: &bytes)
                bytes.append(contentsOf: value.utf8)
            case .data(let value):
                bytes.append(Kind.data.rawValue)
                appendVarint(UInt64(value.count), to: &bytes)
                bytes.append(contentsOf: value)
            }
        }
        return bytes
    }

    /// - Throws: `.dataLoss` naming `row` and the byte at fault when the bytes are
    ///   not a record this build wrote.
    static func decode(_ bytes: [UInt8], row: Int64) throws(HomeError) -> [SavedValue] {
        var reader = Reader(bytes: bytes, row: row)
        guard try reader.byte() == version else {
            throw HomeError(.dataLoss, "value log row \(row) has unknown version \(bytes[0])")
        }
        var changes: [SavedValue] = []
        while !reader.atEnd {
            let id = try reader.varint()
            let kindByte = try reader.byte()
            guard let kind = Kind(rawValue: kindByte) else {
                throw HomeError(
                    .dataLoss, "value log row \(row): unknown value kind \(kindByte) at byte \(reader.offset - 1)")
            }
            let value: CharacteristicValue?
            switch kind {
            case .none: value = nil
            case .boolFalse: value = .bool(false)
            case .boolTrue: value = .bool(true)
            case .int:
                let zigzag = try reader.varint()
                value = .int(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
            case .uint: value = .uint(try reader.varint())
            case .float:
                var bits: UInt64 = 0
                for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try reader.byte()) << UInt64(shift) }
                value = .float(Double(bitPattern: bits))
            case .string: value = .string(String(decoding: try reader.lengthPrefixed(), as: UTF8.self))
            case .data: value = .data(Array(try reader.lengthPrefixed()))
            }
            changes.append(SavedValue(characteristicID: id, value: value))
        }
        return changes
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private struct Reader {
        let bytes: [UInt8]
        let row: Int64
        var offset = 0

        var atEnd: Bool { offset == bytes.count }

        mutating func byte() throws(HomeError) -> UInt8 {
            guard offset < bytes.count else {
                throw HomeError(.dataLoss, "value log row \(row) ends early, at byte \(offset)")
            }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(HomeError) -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                let next = try byte()
                value |= UInt64(next & 0x7F) << UInt64(shift)
                if next < 0x80 { return value }
            }
            throw HomeError(.dataLoss, "value log row \(row): a number longer than 64 bits at byte \(offset)")
        }

        mutating func lengthPrefixed() throws(HomeError) -> ArraySlice<UInt8> {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else {
                throw HomeError(
                    .dataLoss, "value log row \(row): \(length) bytes announced at byte \(offset), fewer remain")
            }
            defer { offset += Int(length) }
            return bytes[offset..<offset + Int(length)]
        }
    }
}
