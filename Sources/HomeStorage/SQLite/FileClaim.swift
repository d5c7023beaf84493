internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// A database file claimed for one process: an exclusive `flock` on a descriptor of
/// its own, held until released. A second homed (or a second open in this process)
/// is refused at once instead of sharing the file.
///
/// `flock` locks are independent of the record locks SQLite takes on the same
/// file, so the claim and SQLite's own locking do not disturb each other. The
/// descriptor must outlive SQLite's connections to the file: closing any
/// descriptor of a file drops this process's record locks on it.
final class FileClaim: Sendable {
    /// Internal for the test that holds a copy of it, as a child process does
    /// between `fork` and `exec`.
    let descriptor: Int32

    /// - Throws: `.failedPrecondition` when another process (or another open) holds
    ///   the file, or it cannot be opened.
    init(_ path: String) throws(HomeError) {
        let descriptor = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw HomeError(.failedPrecondition, "cannot open database \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            Glibc.close(descriptor)
            if reason == EWOULDBLOCK {
                throw HomeError(
                    .failedPrecondition,
                    "\(path) is in use by another process (is another homed running with it?); refusing to open it")
            }
            throw HomeError(.failedPrecondition, "cannot lock database \(path): \(String(cString: strerror(reason)))")
        }
        self.descriptor = descriptor
    }

    /// Unlocked before it is closed: the lock belongs to the open file, which a
    /// process forked at that moment (homed runs commands; tests run daemons) still
    /// holds until its `exec` closes it. Only an explicit unlock ends the claim for
    /// every copy, so the file can be opened again at once.
    deinit {
        flock(descriptor, LOCK_UN)
        Glibc.close(descriptor)
    }
}
