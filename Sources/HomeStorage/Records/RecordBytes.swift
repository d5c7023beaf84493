internal import HomeModel

// The bytes of the records homed writes as blobs (the value log's and the
// journal's): LEB128 varints, zigzag for signed numbers, length-prefixed strings
// and data, and one value encoding. Written by hand because they are on the path
// of every acknowledged change, where one blob per commit costs a fraction of a
// SQLite row per item.

/// Appends a record's parts.
struct RecordWriter {
    private(set) var bytes: [UInt8]

    init(version: UInt8, capacity: Int) {
        bytes = [version]
        bytes.reserveCapacity(capacity)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func string(_ value: String) {
        varint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// A kind byte (`ValueKind`) and the value's bytes: nothing for no value and the
    /// booleans, a zigzag varint for int, a varint for uint, eight little-endian
    /// bytes of the IEEE 754 bits for float, a length and the bytes for string and data.
    mutating func value(_ value: CharacteristicValue?) {
        switch value {
        case nil: byte(ValueKind.none.rawValue)
        case .bool(let value): byte(value ? ValueKind.boolTrue.rawValue : ValueKind.boolFalse.rawValue)
        case .int(let value):
            byte(ValueKind.int.rawValue)
            signed(value)
        case .uint(let value):
            byte(ValueKind.uint.rawValue)
            varint(value)
        case .float(let value):
            byte(ValueKind.float.rawValue)
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        case .string(let value):
            byte(ValueKind.string.rawValue)
            string(value)
        case .data(let value):
            byte(ValueKind.data.rawValue)
            varint(UInt64(value.count))
            bytes.append(contentsOf: value)
        }
    }
}

enum ValueKind: UInt8 {
    case none = 0
    case boolFalse = 1
    case boolTrue = 2
    case int = 3
    case uint = 4
    case float = 5
    case string = 6
    case data = 7
}

/// Reads a record's parts back; every failure is `.dataLoss` naming the record
/// (`what`, e.g. "value log row 12") and the byte at fault.
struct RecordReader {
    let bytes: [UInt8]
    let what: String
    private(set) var offset = 0

    init(bytes: [UInt8], what: String) {
        self.bytes = bytes
        self.what = what
    }

    var atEnd: Bool { offset == bytes.count }

    /// Reads the version byte and checks it.
    mutating func expectVersion(_ version: UInt8) throws(HomeError) {
        let found = try byte()
        guard found == version else { throw HomeError(.dataLoss, "\(what) has unknown version \(found)") }
    }

    mutating func byte() throws(HomeError) -> UInt8 {
        guard offset < bytes.count else { throw HomeError(.dataLoss, "\(what) ends early, at byte \(offset)") }
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
        throw HomeError(.dataLoss, "\(what): a number longer than 64 bits at byte \(offset)")
    }

    mutating func signed() throws(HomeError) -> Int64 {
        let zigzag = try varint()
        return Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
    }

    mutating func lengthPrefixed() throws(HomeError) -> ArraySlice<UInt8> {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else {
            throw HomeError(.dataLoss, "\(what): \(length) bytes announced at byte \(offset), fewer remain")
        }
        defer { offset += Int(length) }
        return bytes[offset..<offset + Int(length)]
    }

    mutating func string() throws(HomeError) -> String {
        String(decoding: try lengthPrefixed(), as: UTF8.self)
    }

    mutating func value() throws(HomeError) -> CharacteristicValue? {
        let kindByte = try byte()
        guard let kind = ValueKind(rawValue: kindByte) else {
            throw HomeError(.dataLoss, "\(what): unknown value kind \(kindByte) at byte \(offset - 1)")
        }
        switch kind {
        case .none: return nil
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .int: return .int(try signed())
        case .uint: return .uint(try varint())
        case .float:
            var bits: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try byte()) << UInt64(shift) }
            return .float(Double(bitPattern: bits))
        case .string: return .string(try string())
        case .data: return .data(Array(try lengthPrefixed()))
        }
    }
}
