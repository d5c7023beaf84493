internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// Puts a bound socket at its path with its final mode and group already set, so
/// that it never exists there with a wider mode than configured, not even for an
/// instant: the socket is bound inside a private directory (0700, made by
/// `mkdtemp`) where nobody else can reach it, given its mode and group there, then
/// renamed into place (atomic), and the private directory removed.
struct SocketBinding {
    /// The private directory's socket path, to bind to.
    let stagingPath: String
    private let stagingDirectory: String

    /// Makes the private directory beside `socketPath`.
    init(socketPath: String) throws(HomeError) {
        let directory = DaemonPaths.directory(of: socketPath) ?? "."
        var template = Array("\(directory)/.homed-bind-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HomeError(
                .failedPrecondition,
                "cannot make a private directory in \(directory) to bind the socket in: "
                    + String(cString: strerror(errno)))
        }
        stagingDirectory = String(cString: made)
        stagingPath = stagingDirectory + "/s"
    }

    /// Gives the bound socket its mode and group, then moves it to `socketPath`.
    ///
    /// - Throws: `.failedPrecondition` naming the step that failed; the staged
    ///   socket is removed then, and nothing is at `socketPath`.
    func publish(at socketPath: String, mode: UInt32, group: UInt32?) throws(HomeError) {
        defer { rmdir(stagingDirectory) }
        func fail(_ what: String) -> HomeError {
            let reason = String(cString: strerror(errno))
            unlink(stagingPath)
            return HomeError(.failedPrecondition, "cannot \(what) for \(socketPath): \(reason)")
        }
        if let group, chown(stagingPath, UInt32.max, group) != 0 {
            throw fail("give the socket group \(group)")
        }
        guard chmod(stagingPath, mode_t(mode)) == 0 else { throw fail("set the socket's mode") }
        guard rename(stagingPath, socketPath) == 0 else { throw fail("move the socket into place") }
    }

    /// Removes whatever is staged (binding failed).
    func abandon() {
        unlink(stagingPath)
        rmdir(stagingDirectory)
    }
}
