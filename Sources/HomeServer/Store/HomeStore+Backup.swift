public import HomeModel

extension HomeStore {
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
        guard let persistence else { return ("", 0) }
        let seq = publishedSeq.value
        return (try persistence.backupToTemporaryFile(), seq)
    }

    /// Refuses a backup that cannot be made, before any thread is started for it.
    ///
    /// - Throws: FAILED_PRECONDITION for a daemon that keeps its home in memory.
    public func checkBackupPossible() throws(HomeError) {
        if persistence == nil {
            throw HomeError(
                .failedPrecondition,
                "this daemon keeps its home in memory (--in-memory): there is no database to back up")
        }
    }
}
