internal import HomeModel
internal import NIOCore

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who is at the other end of an accepted connection: the kernel's word for it
/// (SO_PEERCRED: pid, uid and gid when it connected) and its user's groups from the
/// user database (`getgrouplist`, as PAM and polkit see them).
enum PeerLookup {
    static func peer(of channel: any Channel) -> EventLoopFuture<Peer> {
        // A channel with no socket (the fuzzer's EmbeddedChannel) is this process.
        guard let socket = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(thisProcess())
        }
        let credentials: EventLoopFuture<PeerCredentials> = socket.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.map { credentials in
            Peer(
                pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
                groups: groups(ofUser: credentials.uid, gid: credentials.gid))
        }
    }

    static func thisProcess() -> Peer {
        Peer(pid: getpid(), uid: getuid(), gid: getgid(), groups: groups(ofUser: getuid(), gid: getgid()))
    }

    /// The groups of the user `uid` in the user database, `gid` among them; just
    /// `gid` for a uid with no entry (a container's, a deleted user's).
    static func groups(ofUser uid: UInt32, gid: UInt32) -> Set<UInt32> {
        guard let name = userName(uid) else { return [gid] }
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(name, gid, &groups, &found) >= 0 {
                return Set(groups.prefix(Int(found)))
            }
            // Too small: `found` says how many there are.
            guard found > count else { return [gid] }
            count = found
        }
    }

    static func userName(_ uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else { return nil }
        return String(cString: name)
    }
}

/// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc module does not
/// import: what SO_PEERCRED fills in.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
