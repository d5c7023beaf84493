internal import CSystemd
public import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// The listening socket systemd passed (socket activation: homed.socket's ListenStream=).
public struct ActivatedSocket: Equatable, Sendable {
    /// The descriptor, open in this process (close-on-exec), ready to accept on.
    public var fd: Int32
    /// Its name in LISTEN_FDNAMES (FileDescriptorName=, or the unit's name); nil when unnamed.
    public var name: String?
    /// The path it is bound to ("@name" for an abstract socket); nil when it has none.
    public var path: String?

    public init(fd: Int32, name: String?, path: String?) {
        self.fd = fd
        self.name = name
        self.path = path
    }
}

/// Sockets the service manager opened for the daemon.
public enum SystemdSockets {
    /// The socket systemd passed, checked to be a listening Unix stream socket; nil
    /// when the daemon was not socket-activated (LISTEN_FDS unset, or meant for
    /// another process). Takes LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES out of the
    /// environment so that no child inherits them. Throws, naming the descriptor and
    /// what it is, for anything homed could not serve on, and for more than one socket.
    public static func listenFDs() throws(HomeError) -> ActivatedSocket? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        var fdNames: [String] = []
        if let names {
            var index = 0
            while let name = names[index] {
                fdNames.append(String(cString: name))
                free(name)
                index += 1
            }
            free(names)
        }
        return try adopt(count: count, names: fdNames)
    }

    /// What `sd_listen_fds` said, turned into the one socket homed serves on.
    static func adopt(count: Int32, names: [String]) throws(HomeError) -> ActivatedSocket? {
        if count < 0 {
            throw HomeError(
                .failedPrecondition,
                "the sockets systemd passed (LISTEN_FDS) cannot be taken: \(String(cString: strerror(-count)))")
        }
        if count == 0 { return nil }
        if count > 1 {
            let named = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
            throw HomeError(
                .failedPrecondition,
                "systemd passed \(count) sockets\(named), fds 3 to \(2 + count); homed listens on exactly one: "
                    + "give homed.socket a single ListenStream=")
        }
        let fd = SD_LISTEN_FDS_START
        let path = try checkListeningUnixStream(fd: fd)
        let name = names.first.flatMap { $0.isEmpty || $0 == "unknown" ? nil : $0 }
        return ActivatedSocket(fd: fd, name: name, path: path)
    }

    /// Checks that `fd` is a listening Unix stream socket and returns the path it is
    /// bound to (nil if none); throws a sentence naming the fd and what it is instead.
    public static func checkListeningUnixStream(fd: Int32) throws(HomeError) -> String? {
        let result = sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0)
        if result > 0 { return boundPath(fd: fd) }
        let what = result == -EBADF ? "it is not open" : "it is \(describe(fd: fd))"
        throw HomeError(
            .failedPrecondition, "fd \(fd) from systemd is not a listening Unix stream socket (\(what))")
    }

    /// What kind of file `fd` is, for people: "a UDP socket", "a regular file".
    static func describe(fd: Int32) -> String {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return "not open (\(String(cString: strerror(errno))))" }
        switch status.st_mode & S_IFMT {
        case S_IFSOCK: return describeSocket(fd: fd)
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a pipe"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "not a socket"
        }
    }

    private static func describeSocket(fd: Int32) -> String {
        guard let domain = socketOption(fd, SO_DOMAIN), let type = socketOption(fd, SO_TYPE) else {
            return "a socket of unknown kind"
        }
        let stream = type == Int32(SOCK_STREAM.rawValue)
        let datagram = type == Int32(SOCK_DGRAM.rawValue)
        switch domain {
        case AF_UNIX:
            if stream {
                return socketOption(fd, SO_ACCEPTCONN) == 1
                    ? "a listening Unix stream socket" : "a Unix stream socket that is not listening"
            }
            if datagram { return "a Unix datagram socket" }
            if type == Int32(SOCK_SEQPACKET.rawValue) { return "a Unix seqpacket socket" }
            return "a Unix socket of type \(type)"
        case AF_INET, AF_INET6:
            let family = domain == AF_INET ? "IPv4" : "IPv6"
            if stream { return "a TCP socket (\(family))" }
            if datagram { return "a UDP socket (\(family))" }
            return "an \(family) socket of type \(type)"
        case AF_NETLINK: return "a netlink socket"
        default: return "a socket of address family \(domain)"
        }
    }

    private static func socketOption(_ fd: Int32, _ option: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, option, &value, &length) == 0 else { return nil }
        return value
    }

    /// The path a Unix socket is bound to: nil when unnamed, "@name" when abstract.
    static func boundPath(fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        guard got == 0, Int(length) > pathOffset else { return nil }
        let bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(Int(length) - pathOffset)) }
        guard let first = bytes.first else { return nil }
        if first == 0 {
            return "@" + String(decoding: bytes.dropFirst(), as: UTF8.self)
        }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}
