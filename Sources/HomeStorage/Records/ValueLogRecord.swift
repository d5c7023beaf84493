internal import HomeModel

/// The bytes of one value-log row: the values one commit changed, each as its
/// characteristic id and its value, in the order they are to be applied.
///
/// One blob per commit rather than SQLite rows because it is on the path of every
/// acknowledged write (measured: ~0.1 ms for a thousand values against ~0.6 ms as
/// rows).
///
/// Layout: a version byte (1), then per value: the id as a varint and the value
/// (see `RecordWriter.value`).
enum ValueLogRecord {
    static let version: UInt8 = 1

    static func encode(_ changes: [SavedValue]) -> [UInt8] {
        var writer = RecordWriter(version: version, capacity: 1 + changes.count * 12)
        for change in changes {
            writer.varint(change.characteristicID)
            writer.value(change.value)
        }
        return writer.bytes
    }

    /// - Throws: `.dataLoss` naming `row` and the byte at fault when the bytes are
    ///   not a record this build wrote.
    static func decode(_ bytes: [UInt8], row: Int64) throws(HomeError) -> [SavedValue] {
        var reader = RecordReader(bytes: bytes, what: "value log row \(row)")
        try reader.expectVersion(version)
        var changes: [SavedValue] = []
        while !reader.atEnd {
            let id = try reader.varint()
            changes.append(SavedValue(characteristicID: id, value: try reader.value()))
        }
        return changes
    }
}
