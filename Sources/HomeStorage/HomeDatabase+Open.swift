internal import CSQLite
internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

extension HomeDatabase {
    /// Opens or creates the file, refusing one it must not touch, then migrates it.
    ///
    /// The order matters for "refuse and touch nothing": the file's header is read
    /// with plain `read(2)`, then SQLite checks it through an `immutable` read-only
    /// connection (no locks, no side files). Only a file that passes is opened for
    /// writing. A file with a write-ahead log left by a crash is the exception: its
    /// latest state is in the log, which only a writing connection recovers, so it is
    /// checked on that connection with checkpoint-on-close off, which writes nothing.
    static func open(path: String, migrations: [Schema.Migration]) throws(HomeError) -> HomeDatabase {
        let latest = migrations.count
        let connection: Connection
        let claim: FileClaim
        switch try FileHeader.read(path) {
        case .absent:
            try createPrivateFile(path)
            do throws(HomeError) {
                claim = try FileClaim(path)
                connection = try Connection(path: path, filename: uri(path), flags: SQLITE_OPEN_READWRITE)
            } catch {
                unlink(path)
                throw error
            }
        case .empty:
            claim = try FileClaim(path)
            connection = try Connection(path: path, filename: uri(path), flags: SQLITE_OPEN_READWRITE)
        case .notSQLite(let size):
            let what =
                size < FileHeader.size ? "it is only \(size) bytes long" : "it does not start with SQLite's header"
            throw refusal(path, "is not a SQLite database (\(what))")
        case .sqlite(let header):
            // Before anything else: a file another homed has open is refused, not read.
            claim = try FileClaim(path)
            let hotLog = FileHeader.hasLog(path)
            if !hotLog {
                if let truncation = header.truncation {
                    throw refusal(path, "is truncated: \(truncation)")
                }
                let checker = try Connection(
                    path: path, filename: uri(path, immutable: true),
                    flags: SQLITE_OPEN_READONLY)
                _ = try inspect(checker, latest: latest, quickCheck: true)
            }
            // A refused file is left as it was: the shared-memory index the writing
            // connection makes beside it goes with it.
            let hadIndex = access(path + "-shm", F_OK) == 0
            let writer = try Connection(path: path, filename: uri(path), flags: SQLITE_OPEN_READWRITE)
            writer.setCheckpointOnClose(false)
            do throws(HomeError) {
                // Cheap, and the log (if any) may hold a later state than the file alone.
                _ = try inspect(writer, latest: latest, quickCheck: hotLog)
            } catch {
                _ = consume writer
                if !hadIndex { unlink(path + "-shm") }
                throw error
            }
            connection = writer
        }
        try migrate(connection, to: migrations)
        try connection.execute(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
            doing: "setting up the connection")
        connection.setCheckpointOnClose(true)
        let checkpointer = try WALCheckpointer(
            connection: try Connection(path: path, filename: uri(path), flags: SQLITE_OPEN_READWRITE))
        checkpointer.attach(to: connection)
        return HomeDatabase(path: path, connection: connection, checkpointer: checkpointer, claim: claim)
    }

    /// Creates an empty file that only its owner may read or write, for SQLite to
    /// make a database of. Left to SQLite, a new file follows the process's umask
    /// (0644 by default: the home readable by every user), and SQLite gives the
    /// `-wal` and `-shm` files it makes beside a database the database file's mode,
    /// so they are 0600 too.
    ///
    /// - Throws: `.failedPrecondition` naming the path and the system's reason.
    static func createPrivateFile(_ path: String) throws(HomeError) {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw HomeError(.failedPrecondition, "cannot open database \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        // A umask may have narrowed 0600 further (to 0400, say), and the owner needs both.
        guard fchmod(descriptor, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw HomeError(.failedPrecondition, "cannot make database \(path) private (mode 0600): \(reason)")
        }
    }

    /// The file's schema version, or the reason it must not be opened.
    private static func inspect(_ connection: Connection, latest: Int, quickCheck: Bool) throws(HomeError) -> Int {
        let path = connection.path
        do throws(HomeError) {
            if quickCheck {
                let problems = try connection.strings("PRAGMA quick_check", doing: "checking the file")
                if problems != ["ok"] {
                    let more = problems.count > 1 ? " (and \(problems.count - 1) more problems)" : ""
                    throw refusal(
                        path,
                        "is corrupt: SQLite's integrity check reports \(quoted(problems.first ?? ""))"
                            + more)
                }
            }
            let applicationID = try connection.integer("PRAGMA application_id", doing: "reading the application id")
            let version = try connection.integer("PRAGMA user_version", doing: "reading the schema version")
            let tables = try connection.integer(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
                doing: "listing the tables")
            if applicationID != Schema.applicationID && (applicationID != 0 || version != 0 || tables != 0) {
                let owner =
                    if applicationID != 0 {
                        "its application id is 0x\(String(applicationID, radix: 16))"
                    } else if tables > 0 {
                        "it has \(tables) \(tables == 1 ? "table" : "tables") of its own"
                    } else {
                        "it has schema version \(version) but no homed application id"
                    }
                throw refusal(path, "is a SQLite database of another program, not homed's (\(owner))")
            }
            if version > latest {
                throw refusal(
                    path,
                    "was written by a newer homed (schema \(version); this build knows up to "
                        + "\(latest))")
            }
            return Int(version)
        } catch  where error.code == .dataLoss {
            // SQLITE_NOTADB or SQLITE_CORRUPT while reading: what quick_check would say, sooner.
            let reason = connection.lastErrorMessage
            if connection.lastErrorWasNotADatabase {
                throw refusal(path, "is not a SQLite database (\(reason))")
            }
            throw refusal(path, "is corrupt: \(reason)")
        }
    }

    /// Applies the migrations the file has not had, each in its own transaction
    /// together with the new version number.
    private static func migrate(_ connection: Connection, to migrations: [Schema.Migration]) throws(HomeError) {
        // Before any migration, outside a transaction: a new file is switched to WAL
        // (which rewrites its header); for a file of ours this is a no-op.
        let mode = try connection.strings("PRAGMA journal_mode = WAL", doing: "switching to WAL")
        guard mode == ["wal"] else {
            throw HomeError(
                .failedPrecondition,
                "database \(connection.path): cannot use write-ahead logging (journal mode \(mode))")
        }
        let current = Int(try connection.integer("PRAGMA user_version", doing: "reading the schema version"))
        guard current < migrations.count else { return }
        for migration in migrations[current...] {
            try connection.transaction(doing: "migrating to schema \(migration.version)") { () throws(HomeError) in
                try connection.execute(migration.sql, doing: "migrating to schema \(migration.version)")
                try connection.execute(
                    "PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = \(migration.version)",
                    doing: "recording schema \(migration.version)")
            }
        }
    }

    /// "<path> <problem>; refusing to open it"
    private static func refusal(_ path: String, _ problem: String) -> HomeError {
        HomeError(.failedPrecondition, "\(path) \(problem); refusing to open it")
    }

    /// A `file:` URI for a path (so `immutable` can be asked for), with the
    /// characters URIs give a meaning escaped.
    static func uri(_ path: String, immutable: Bool = false) -> String {
        var escaped = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file:" + escaped + (immutable ? "?immutable=1" : "")
    }

    private static func quoted(_ text: String) -> String { "\"\(text)\"" }
}

/// What the first 100 bytes of a file say about it, read without SQLite.
enum FileHeader {
    /// SQLite's header is the file's first 100 bytes.
    static let size = 100

    case absent
    /// Zero bytes: SQLite treats it as an empty database.
    case empty
    case notSQLite(size: Int)
    case sqlite(Info)

    struct Info {
        var fileSize: Int
        var pageSize: Int
        /// The header's page count, when it is valid (SQLite ≥ 3.7.0 keeps it so).
        var pageCount: Int?

        /// Why the file is shorter than its header says, or nil.
        var truncation: String? {
            guard let pageCount, pageCount * pageSize > fileSize else { return nil }
            let pages = pageCount == 1 ? "1 page" : "\(pageCount) pages"
            return "its header says \(pages) of \(pageSize) bytes (\(pageCount * pageSize) bytes) "
                + "but the file has \(fileSize) bytes"
        }
    }

    static func read(_ path: String) throws(HomeError) -> FileHeader {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return .absent }
            throw HomeError(.failedPrecondition, "cannot read database \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw HomeError(.failedPrecondition, "\(path) is not a regular file; refusing to open it as a database")
        }
        let fileSize = Int(info.st_size)
        if fileSize == 0 { return .empty }
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw HomeError(.failedPrecondition, "cannot read database \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: size)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard count == size else { return .notSQLite(size: max(0, count)) }
        guard bytes.starts(with: Array("SQLite format 3\0".utf8)) else { return .notSQLite(size: fileSize) }

        func integer(_ offset: Int, _ length: Int) -> Int {
            bytes[offset..<(offset + length)].reduce(0) { $0 << 8 | Int($1) }
        }
        let rawPageSize = integer(16, 2)
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let pageCount = integer(28, 4)
        let valid = pageCount > 0 && integer(24, 4) == integer(92, 4)
        return .sqlite(Info(fileSize: fileSize, pageSize: pageSize, pageCount: valid ? pageCount : nil))
    }

    /// Whether a write-ahead log with content lies beside the file (left by a crash,
    /// or by a process that has it open).
    static func hasLog(_ path: String) -> Bool {
        var info = stat()
        return stat(path + "-wal", &info) == 0 && info.st_size > 0
    }
}
