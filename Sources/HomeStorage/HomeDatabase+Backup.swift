internal import CSQLite
public import HomeModel
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

extension HomeDatabase {
    /// How many pages (4 KiB each by default) one step of a backup copies: the
    /// longest a writer waits for a backup is one step of this many.
    public static let backupPagesPerStep: Int32 = 64

    /// Copies the open database into a new file at `path` while the daemon goes on
    /// using it (SQLite's online backup), in steps of `pagesPerStep` pages.
    ///
    /// Each step holds the connection's lock, which every save also takes, so a
    /// writer waits for at most one step; between steps the lock is let go. The
    /// copy is of the same connection the daemon writes through, so SQLite brings
    /// it up to date with every change made meanwhile: when it returns, the file
    /// holds the database as it was at the last step, every change saved before it
    /// included. (This connection holds the file's lock exclusively, so no other
    /// process could read it: `sqlite3 … .backup` gets "database is locked".)
    ///
    /// - Parameters:
    ///   - path: a file that must not exist yet; it is created mode 0600.
    ///   - betweenSteps: called after each step, without the lock (a benchmark
    ///     counts steps; the daemon yields).
    /// - Returns: the copy's size in bytes.
    /// - Throws: `.failedPrecondition` naming `path` when it cannot be created;
    ///   the storage's error when a step fails. The file is removed then.
    ///
    /// The corresponding C functions are `sqlite3_backup_init`, `sqlite3_backup_step`
    /// and `sqlite3_backup_finish`.
    public func backup(to path: String, pagesPerStep: Int32, betweenSteps: () -> Void) throws(HomeError) -> Int {
        try Self.createPrivateFile(path)
        do throws(HomeError) {
            let destination = try Connection(path: path, filename: Self.uri(path), flags: SQLITE_OPEN_READWRITE)
            // The copy's own commit is made in the last step, under the lock writers
            // wait for: no journal and no sync there (a copy that is cut short is
            // removed anyway; whoever keeps it syncs it: homectl does).
            try destination.execute(
                "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", doing: "setting up the backup \(path)")
            try copy(into: destination, pagesPerStep: max(pagesPerStep, 1), betweenSteps: betweenSteps)
            var status = stat()
            guard stat(path, &status) == 0 else {
                throw HomeError(
                    .internal, "the backup at \(path) cannot be measured: \(String(cString: strerror(errno)))")
            }
            return Int(status.st_size)
        } catch {
            unlink(path)
            unlink(path + "-wal")
            unlink(path + "-journal")
            throw error
        }
    }

    /// `HomePersistence`'s backup: a copy beside the database (on the same file
    /// system, in a directory the daemon may write), named after it and this
    /// process, in steps of `backupPagesPerStep`, yielding the processor between them.
    public func backupToTemporaryFile() throws(HomeError) -> String {
        let number = Self.backupCounter.add(1, ordering: .relaxed)
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let copy = "\(directory.isEmpty ? "" : directory)/.\(name).backup-\(getpid())-\(number)"
        _ = try backup(to: copy, pagesPerStep: Self.backupPagesPerStep) { sched_yield() }
        return copy
    }

    private static let backupCounter = Atomic<Int>(0)

    private func copy(into destination: Connection, pagesPerStep: Int32, betweenSteps: () -> Void)
        throws(HomeError)
    {
        let backup = try withConnection { source throws(HomeError) -> BackupHandle in
            guard let handle = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
                throw destination.error(sqlite3_errcode(destination.handle), doing: "starting a backup of \(path)")
            }
            return BackupHandle(handle)
        }
        var finished = false
        defer {
            // Finished under the lock too: it touches the source connection.
            if !finished { _ = try? withConnection { _ in sqlite3_backup_finish(backup.handle) } }
        }
        while true {
            let code = try withConnection { _ in sqlite3_backup_step(backup.handle, pagesPerStep) }
            switch code {
            case SQLITE_OK, SQLITE_BUSY, SQLITE_LOCKED:
                betweenSteps()
            case SQLITE_DONE:
                finished = true
                let end = try withConnection { _ in sqlite3_backup_finish(backup.handle) }
                guard end == SQLITE_OK else { throw destination.error(end, doing: "finishing the backup") }
                return
            default:
                throw destination.error(code, doing: "copying \(path) into a backup")
            }
        }
    }
}

/// The backup object, carried out of the connection's lock between steps (it is
/// only ever used under that lock).
private struct BackupHandle: @unchecked Sendable {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
}
