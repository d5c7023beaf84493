import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A Unix socket of `type` (SOCK_STREAM, SOCK_DGRAM) bound at `path`; nil if it
/// cannot be made or bound (errno says why).
func boundUnixSocket(at path: String, type: Int32) -> Int32? {
    let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0 else {
        close(fd)
        return nil
    }
    return fd
}
