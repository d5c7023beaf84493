public import HomeModel
internal import Synchronization

/// The daemon's SQLite file: the home layout, ids included, and last known values.
///
/// ```swift
/// let database = try HomeDatabase.open(path: "/run/homed/homed.sqlite")
/// var graph = try database.load()
/// let before = graph
/// _ = try graph.renameRoom(roomID, to: "Study")
/// try database.saveLayout(from: before, to: graph)   // durable when this returns
/// ```
///
/// The file is in WAL mode: a saved layout change survives power loss
/// (`synchronous=FULL` for its commit), an appended value `kill -9` (see
/// HomeDatabase+Values.swift). The file is claimed (`FileClaim`) for as long as it is
/// open: a second daemon on the same file is refused, not interleaved. Calls are
/// serialized; any thread may make them. The log is copied into the file on a
/// second connection (`WALCheckpointer`), so that writers do not wait for it.
public final class HomeDatabase: Sendable {
    /// The file, as given to `open(path:)`.
    public let path: String
    private let connection: Mutex<Connection?>
    private let checkpointer: WALCheckpointer
    /// Released last, once both connections are closed.
    private let claim: Mutex<FileClaim?>

    /// The newest schema version this build reads and writes.
    public static var schemaVersion: Int { Schema.version }

    init(
        path: String, connection: consuming sending Connection, checkpointer: WALCheckpointer,
        claim: consuming sending FileClaim
    ) {
        self.path = path
        self.connection = Mutex(connection)
        self.checkpointer = checkpointer
        self.claim = Mutex(claim)
    }

    /// Opens the database at `path`, creating it if there is no file, and brings
    /// its schema up to date.
    ///
    /// A file that is not a SQLite database, is damaged, belongs to another program,
    /// was written by a newer homed, or is held by another process is refused, and
    /// left exactly as it was: it is inspected read-only before anything is written.
    ///
    /// - Throws: `.failedPrecondition` with a sentence naming the file and what is
    ///   wrong with it, e.g. "/run/homed/homed.sqlite was written by a newer homed
    ///   (schema 7; this build knows up to 1); refusing to open it".
    public static func open(path: String) throws(HomeError) -> HomeDatabase {
        try open(path: path, migrations: Schema.migrations)
    }

    /// Closes the file (checkpointing its log). Later calls throw `.failedPrecondition`.
    public func close() {
        // The writers' connection closes last of the two, so that its close copies the
        // whole log into the file and removes it; dropping the only reference closes
        // it, statements first. The claim goes after both.
        connection.withLock { connection in
            if let connection { checkpointer.detach(from: connection) }
        }
        checkpointer.close()
        connection.withLock { $0 = nil }
        claim.withLock { $0 = nil }
    }

    /// Runs `body` with the open connection.
    func withConnection<T: Sendable>(_ body: (Connection) throws(HomeError) -> T) throws(HomeError) -> T {
        try connection.withLock { connection throws(HomeError) -> T in
            guard let connection else {
                throw HomeError(.failedPrecondition, "database \(path) is closed")
            }
            return try body(connection)
        }
    }
}
