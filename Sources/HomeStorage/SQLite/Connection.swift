internal import CSQLite
internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// One SQLite connection and its prepared statements. Not thread-safe: `HomeDatabase`
/// serializes every use behind its lock, so SQLite is opened without its own mutexes.
final class Connection {
    /// The file, as messages name it.
    let path: String
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]

    /// Opens `filename` (a path, or a `file:` URI) with SQLite's open flags.
    ///
    /// The corresponding C function is `sqlite3_open_v2`.
    init(path: String, filename: String, flags: Int32) throws(HomeError) {
        self.path = path
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(filename, &handle, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nil)
        guard code == SQLITE_OK, let handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw HomeError(Self.code(for: code), "cannot open database \(path): \(reason)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs SQL that returns no rows (several statements may be separated by semicolons).
    ///
    /// The corresponding C function is `sqlite3_exec`.
    func execute(_ sql: String, doing what: @autoclosure () -> String) throws(HomeError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, doing: what()) }
    }

    /// A prepared statement for `sql`, kept for reuse: the layout and value writers
    /// run the same few statements many times.
    func statement(_ sql: String) throws(HomeError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// A statement used once (its own, not cached).
    ///
    /// The corresponding C function is `sqlite3_prepare_v2`.
    func prepare(_ sql: String) throws(HomeError) -> Statement {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            throw error(code, doing: "preparing \(sql.split(separator: "\n").first ?? "")")
        }
        return Statement(handle: prepared, connection: self)
    }

    /// The one integer a query such as `PRAGMA user_version` returns.
    func integer(_ sql: String, doing what: @autoclosure () -> String) throws(HomeError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step(doing: what()) else { return 0 }
        return statement.int64(0)
    }

    /// The text rows of a one-column query, such as `PRAGMA quick_check`.
    func strings(_ sql: String, doing what: @autoclosure () -> String) throws(HomeError) -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step(doing: what()) { rows.append(statement.string(0)) }
        return rows
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(doing what: @autoclosure () -> String, _ body: () throws(HomeError) -> T)
        throws(HomeError) -> T
    {
        try execute("BEGIN IMMEDIATE", doing: what())
        do {
            let result = try body()
            try execute("COMMIT", doing: what())
            return result
        } catch {
            // A failed COMMIT (a deferred foreign key, a full disk) leaves the transaction open.
            if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Whether closing checkpoints the write-ahead log into the database file. Off
    /// while a file is being checked, so that refusing it leaves it byte for byte as it was.
    ///
    /// The corresponding C function is `sqlite3_db_config(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE)`.
    func setCheckpointOnClose(_ enabled: Bool) {
        #if os(Linux)
            // sqlite3_db_config is variadic, which Swift cannot call. On Linux (x86-64 and
            // AArch64) a variadic call passes these integer arguments exactly as a fixed
            // one does, so the symbol is called through a fixed prototype.
            typealias DBConfigInt = @convention(c) (OpaquePointer, Int32, Int32, UnsafeMutablePointer<Int32>?) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sqlite3_db_config") else { return }
            let configure = unsafeBitCast(symbol, to: DBConfigInt.self)
            var result: Int32 = 0
            _ = configure(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1, &result)
        #endif
    }

    /// SQLite's words for the last failure, e.g. "file is not a database".
    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Whether the last failure was SQLITE_NOTADB: the bytes are not a database at all.
    var lastErrorWasNotADatabase: Bool { sqlite3_errcode(handle) & 0xFF == SQLITE_NOTADB }

    /// An error for a failed call, naming the file, what was being done and SQLite's reason.
    func error(_ code: Int32, doing what: String) -> HomeError {
        let message = String(cString: sqlite3_errmsg(handle))
        return HomeError(Self.code(for: code), "database \(path): \(what) failed: \(message)")
    }

    /// The status code for an SQLite result code.
    static func code(for sqliteCode: Int32) -> HomeError.Code {
        switch sqliteCode & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: return .unavailable
        case SQLITE_FULL, SQLITE_NOMEM, SQLITE_TOOBIG: return .resourceExhausted
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .dataLoss
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN, SQLITE_AUTH: return .failedPrecondition
        default: return .internal
        }
    }
}
