public import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// One daemon per socket: an exclusive `flock` on a file beside the socket, held
/// for as long as the daemon runs (the kernel lets go when the process dies, even
/// by `kill -9`, which leaves the file behind, empty of meaning). Taking it is
/// atomic, so of two daemons started at the same moment exactly one gets it; the
/// other is told which process has it. The file holds the holder's pid, for that
/// message, and is removed when the holder stops.
public final class InstanceLock: Sendable {
    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock for `socketPath` (creating the socket's directory, 0700, as
    /// `HomeServer` would).
    ///
    /// - Throws: `.alreadyExists` naming the holder's pid when another daemon holds
    ///   it; `.failedPrecondition` when the file cannot be opened.
    public static func acquire(_ path: String, socketPath: String) throws(HomeError) -> InstanceLock {
        try SocketPath.prepareDirectory(of: socketPath)
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                throw HomeError(
                    .failedPrecondition, "cannot open the instance lock \(path): \(String(cString: strerror(errno)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                let holder = readPID(descriptor)
                close(descriptor)
                guard reason == EWOULDBLOCK else {
                    throw HomeError(.failedPrecondition, "cannot lock \(path): \(String(cString: strerror(reason)))")
                }
                throw HomeError(
                    .alreadyExists,
                    "another homed\(holder.map { " (pid \($0))" } ?? "") is running on \(socketPath); it holds \(path)")
            }
            // The holder removes the file when it stops: if that happened between
            // our open and our lock, the lock is on a file no longer at `path`, and
            // another daemon may lock the new one. Take the one at `path`.
            var locked = stat()
            var current = stat()
            guard fstat(descriptor, &locked) == 0, lstat(path, &current) == 0, locked.st_ino == current.st_ino,
                locked.st_dev == current.st_dev
            else {
                close(descriptor)
                continue
            }
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            return InstanceLock(path: path, descriptor: descriptor)
        }
    }

    /// Lets go, removing the file while still holding it (so a daemon that
    /// opened it meanwhile sees it gone and opens the next one).
    deinit {
        unlink(path)
        close(descriptor)
    }

    /// The holder's pid, which it writes just after taking the lock: waited for
    /// briefly when the file is still empty (both daemons started together).
    private static func readPID(_ descriptor: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        var count = 0
        for _ in 0..<50 {
            count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 1 && bytes[count - 1] == UInt8(ascii: "\n") { break }
            usleep(2_000)
        }
        guard count > 0 else { return nil }
        let digits = bytes[..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int32(String(decoding: digits, as: UTF8.self))
    }
}
