internal import CSQLite
internal import Dispatch
internal import HomeModel
internal import Synchronization

/// Copies the write-ahead log into the database file on a connection and a thread
/// of its own, so that a writer does not wait for it.
///
/// Left to SQLite, the commit that takes the log past 1 000 pages copies the whole
/// log into the file and syncs it before it returns: that writer (and, behind the
/// database's lock, every writer after it) waits tens of milliseconds. Here the
/// writers' connection reports each commit's log size (a WAL hook); past
/// `backgroundPages` this checkpointer copies what is there on its own connection,
/// in SQLite's passive mode, which never blocks a writer. A log that writers keep
/// appending to is never wholly copied at the moment a write begins, and SQLite
/// starts the log over only then; so past `writerPages` the committing writer
/// copies what is left itself (little, since the bulk is copied already) and the
/// next write starts the log over. The log so stays within about twice that bound:
/// the writer's own copy waits for a background copy under way.
///
/// A background copy starts once the log holds `backgroundPages` more than the
/// last copy left copied: steady writers that keep the log past the threshold get
/// one copy (and one sync of the file) per `backgroundPages` pages they write, not
/// one after every commit.
final class WALCheckpointer: Sendable {
    /// The log's size (pages) at which the background copy starts: SQLite's own default.
    static let backgroundPages: Int32 = 1_000
    /// The log's size (pages) at which the writer copies the rest itself.
    static let writerPages: Int32 = 4_000

    private let connection: Mutex<Connection?>
    private let queue = DispatchQueue(label: "homed.database.checkpoint")
    /// When the next background copy starts.
    private let cadence = Mutex(WALCopyCadence())

    /// - Parameter connection: a second connection to the writers' file, used for nothing else.
    /// - Throws: what reading the file's header on it throws.
    init(connection: consuming sending Connection) throws(HomeError) {
        connection.setCheckpointOnClose(false)
        // A connection learns that the file is in WAL mode when it first reads it;
        // until then a checkpoint on it does nothing.
        _ = try connection.integer("SELECT count(*) FROM sqlite_schema", doing: "opening the log for checkpoints")
        self.connection = Mutex(connection)
    }

    /// Has `writer`'s commits report to this checkpointer. Until `detach(from:)`,
    /// the checkpointer must outlive the writer's connection's use.
    func attach(to writer: Connection) {
        sqlite3_wal_hook(writer.handle, walHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `writer` back SQLite's own checkpoints (the commit past 1 000 pages).
    func detach(from writer: Connection) {
        sqlite3_wal_autocheckpoint(writer.handle, Self.backgroundPages)
    }

    /// Waits for a copy under way, then closes the connection.
    func close() {
        queue.sync {}
        connection.withLock { $0 = nil }
    }

    /// A writer's commit left `pages` in the log (called on the writer's thread,
    /// under the database's lock, with `writer` its connection).
    fileprivate func committed(pages: Int32, writer: OpaquePointer) {
        if pages >= Self.writerPages {
            // Passive: when the background copy is under way this returns at once
            // (busy), and the next commit tries again.
            sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return
        }
        if cadence.withLock({ $0.startsCopy(afterCommitLeaving: pages, threshold: Self.backgroundPages) }) {
            queue.async { self.copyInBackground() }
        }
    }

    private func copyInBackground() {
        var copied: Int32?
        defer { cadence.withLock { $0.copyEnded(copied: copied) } }
        connection.withLock { connection in
            guard let connection else { return }
            // A failure (busy: the writer copying at that moment; an I/O error) leaves
            // the log as it is; the next commit past the threshold asks again.
            var logPages: Int32 = 0
            var copiedPages: Int32 = 0
            let status = sqlite3_wal_checkpoint_v2(
                connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logPages, &copiedPages)
            if status == SQLITE_OK { copied = copiedPages }
        }
    }
}

/// When a background copy starts: once the log holds `threshold` pages more than
/// the last copy left copied, and no copy is under way. A value: the checkpointer
/// keeps it under a lock.
struct WALCopyCadence {
    /// A copy is queued or under way: commits meanwhile ask for no other.
    private(set) var copying = false
    /// The log's pages the last copy found copied (0 once the log started over).
    private(set) var copiedPages: Int32 = 0

    /// After a commit that left `pages` in the log: whether a copy starts now.
    mutating func startsCopy(afterCommitLeaving pages: Int32, threshold: Int32) -> Bool {
        // Fewer pages than were copied: the log started over since.
        if pages < copiedPages { copiedPages = 0 }
        guard !copying, pages - copiedPages >= threshold else { return false }
        copying = true
        return true
    }

    /// A copy ended, having copied the log up to `copied` pages (nil: it could
    /// not, the file busy or an I/O error: the next commit past the threshold asks
    /// again).
    mutating func copyEnded(copied: Int32?) {
        copying = false
        if let copied { copiedPages = copied }
    }
}

/// SQLite's WAL hook: after each commit of the writers' connection, with the pages
/// now in the log. Returns SQLITE_OK (the commit itself has succeeded).
private let walHook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 =
    { context, writer, _, pages in
        guard let context, let writer else { return SQLITE_OK }
        Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(pages: pages, writer: writer)
        return SQLITE_OK
    }
