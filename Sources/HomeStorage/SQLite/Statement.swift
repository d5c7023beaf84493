internal import CSQLite
internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// A prepared statement: bind by position (from 1), step, read columns (from 0).
///
/// Ids and unsigned values are stored as SQLite's signed 64-bit integers with the
/// same bits (`Int64(bitPattern:)`), so every `UInt64` survives the round trip.
final class Statement {
    let handle: OpaquePointer
    private unowned let connection: Connection

    init(handle: OpaquePointer, connection: Connection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: Binding

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(handle, index, Int64(value)) }
    func bind(_ index: Int32, _ value: UInt64) { sqlite3_bind_int64(handle, index, Int64(bitPattern: value)) }
    func bind(_ index: Int32, _ value: Bool) { sqlite3_bind_int64(handle, index, value ? 1 : 0) }
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    func bindNull(_ index: Int32) { sqlite3_bind_null(handle, index) }

    func bind(_ index: Int32, _ value: String) {
        // Native strings are contiguous UTF-8, so this copies once, into SQLite.
        _ = value.withCString { sqlite3_bind_text(handle, index, $0, Int32(value.utf8.count), transient) }
    }

    func bind(_ index: Int32, _ bytes: [UInt8]) {
        // An empty buffer may have no address, and a null blob is SQL NULL: say "zero bytes".
        if bytes.isEmpty {
            sqlite3_bind_zeroblob(handle, index, 0)
        } else {
            _ = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    func bind(_ index: Int32, _ value: UInt64?) {
        if let value { bind(index, value) } else { bindNull(index) }
    }

    func bind(_ index: Int32, _ value: Double?) {
        if let value { bind(index, value) } else { bindNull(index) }
    }

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { bind(index, value) } else { bindNull(index) }
    }

    // MARK: Running

    /// Advances to the next row: true if there is one, false when done (the
    /// statement is then reset, ready to run again).
    ///
    /// The corresponding C function is `sqlite3_step`.
    func step(doing what: @autoclosure () -> String) throws(HomeError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        let error = code == SQLITE_DONE ? nil : connection.error(code, doing: what())
        sqlite3_reset(handle)
        if let error { throw error }
        return false
    }

    /// Runs a statement that returns no rows, then clears its bindings.
    func run(doing what: @autoclosure () -> String) throws(HomeError) {
        while try step(doing: what()) {}
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func id(_ column: Int32) -> ObjectID { ObjectID(bitPattern: sqlite3_column_int64(handle, column)) }
    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(handle, column) != 0 }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func optionalID(_ column: Int32) -> ObjectID? { isNull(column) ? nil : id(column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func bytes(_ column: Int32) -> [UInt8] {
        guard let blob = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }

    /// Whether the column's text equals `literal`, without making a String of it: the
    /// loader compares enumerations (formats, units) this way for every characteristic.
    func text(_ column: Int32, equals literal: StaticString) -> Bool {
        guard let text = sqlite3_column_text(handle, column) else { return literal.utf8CodeUnitCount == 0 }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count == literal.utf8CodeUnitCount else { return false }
        return memcmp(text, literal.utf8Start, count) == 0
    }
}

/// SQLite's `SQLITE_TRANSIENT`: copy the bytes before the call returns.
private var transient: sqlite3_destructor_type {
    unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
