internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// Getting the place the daemon listens ready.
enum SocketPath {
    /// Creates the socket's directory (0700) and removes a stale socket file left by
    /// a dead daemon. A live daemon's socket is never touched.
    ///
    /// - Throws: `.alreadyExists` when another daemon answers on `path`;
    ///   `.failedPrecondition` when the path is not usable.
    static func prepare(_ path: String) throws(HomeError) {
        try checkAvailable(path)
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // nothing there
        guard unlink(path) == 0 || errno == ENOENT else {
            throw HomeError(
                .failedPrecondition, "cannot remove stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Everything `prepare` checks, without removing anything: the path fits a
    /// socket address, its directory exists (created 0700), and no live daemon
    /// listens there. homed calls it before opening its database, so a second
    /// daemon is told about the first one, not about a locked database.
    static func checkAvailable(_ path: String) throws(HomeError) {
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw HomeError(
                .invalidArgument,
                "socket path \(path) is longer than the \(MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1) bytes a Unix socket address holds"
            )
        }
        try prepareDirectory(of: path)
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // nothing there
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw HomeError(.failedPrecondition, "\(path) exists and is not a socket; refusing to replace it")
        }
        if isListening(path) {
            throw HomeError(.alreadyExists, "another homed is listening on \(path)")
        }
    }

    /// Creates the socket's directory (0700) if missing, and refuses one that
    /// another user could use to put an impostor in the socket's place: writable
    /// by everyone without the sticky bit, or owned by another uid (root aside,
    /// who can do anything anyway).
    static func prepareDirectory(of socketPath: String) throws(HomeError) {
        guard let directory = DaemonPaths.directory(of: socketPath) else { return }
        try makeDirectory(directory)
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw HomeError(
                .failedPrecondition, "cannot inspect socket directory \(directory): \(String(cString: strerror(errno)))"
            )
        }
        if info.st_mode & S_IWOTH != 0 && info.st_mode & S_ISVTX == 0 {
            throw HomeError(
                .failedPrecondition,
                "socket directory \(directory) is writable by everyone (mode \(String(info.st_mode & 0o7777, radix: 8))) "
                    + "without the sticky bit: another user could replace the socket; refusing to use it")
        }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            throw HomeError(
                .failedPrecondition,
                "socket directory \(directory) belongs to uid \(info.st_uid), not to this daemon's uid \(geteuid()): "
                    + "its owner could replace the socket; refusing to use it")
        }
    }

    static func makeDirectory(_ directory: String) throws(HomeError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw HomeError(.failedPrecondition, "\(directory) exists and is not a directory")
            }
            return
        }
        let parent = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
        if !parent.isEmpty { try makeDirectory(parent) }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw HomeError(
                .failedPrecondition, "cannot create socket directory \(directory): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether something accepts connections on the socket at `path`.
    static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}
