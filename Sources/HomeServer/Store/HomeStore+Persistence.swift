public import HomeModel

extension HomeStore {
    /// Folds the value log into the tables: saves the current value of every
    /// characteristic changed since the last fold and empties the log. Under the
    /// lock, so no change lands between the values read and the log emptied.
    ///
    /// - Returns: how many values were saved.
    /// - Throws: persistence's error; the log and the marks are kept for next time.
    @discardableResult
    public func foldValueLog() throws(HomeError) -> Int {
        guard let log else { return 0 }
        return try withState { state throws(HomeError) -> Int in try log.foldValueLog(in: &state.core) }
    }

    /// Copies the database while the daemon runs (`HomePersistence.backupToTemporaryFile`),
    /// outside the store's lock: readers and subscribers never wait for it, and a
    /// writer waits for one small step of it at most.
    ///
    /// - Returns: the copy's path (the caller removes it) and a seq every change up
    ///   to which is in the copy (read before the copy began: each was saved before
    ///   it was published).
    /// - Throws: FAILED_PRECONDITION for a daemon that keeps its home in memory;
    ///   the storage's error when the copy fails (nothing is left behind then).
    public func backupToTemporaryFile() throws(HomeError) -> (path: String, seq: UInt64) {
        try checkBackupPossible()
        guard let log else { return ("", 0) }
        let seq = publishedSeq.value
        return (try log.persistence.backupToTemporaryFile(), seq)
    }

    /// Refuses a backup that cannot be made, before any thread is started for it.
    ///
    /// - Throws: FAILED_PRECONDITION for a daemon that keeps its home in memory.
    public func checkBackupPossible() throws(HomeError) {
        if log == nil {
            throw HomeError(
                .failedPrecondition,
                "this daemon keeps its home in memory (--in-memory): there is no database to back up")
        }
    }
}
