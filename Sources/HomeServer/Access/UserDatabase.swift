package import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// Names of users and groups as the system knows them (`getpwnam_r`, `getgrnam_r`):
/// what a role list or the socket's group names is resolved to at start and reload.
package enum UserDatabase {
    /// A role list as people write it: user names or uids, groups as `@name` or
    /// `@gid`, separated by commas. `source` says where the list came from, for errors
    /// ("--admins", "roles.admins in /etc/homed/homed.yaml").
    package static func members(_ list: [String], source: String) throws(HomeError) -> Set<RolePolicy.Member> {
        var members = Set<RolePolicy.Member>()
        for item in list.flatMap({ $0.split(separator: ",") }).map({ $0.trimmingSpaces }) where !item.isEmpty {
            if item.hasPrefix("@") {
                let name = String(item.dropFirst())
                guard let gid = UInt32(name) ?? groupID(name) else {
                    throw HomeError(.invalidArgument, "\(source): no group named '\(name)' on this system")
                }
                members.insert(.group(gid))
            } else {
                guard let uid = UInt32(item) ?? userID(item) else {
                    throw HomeError(
                        .invalidArgument, "\(source): no user named '\(item)' on this system (groups are written @name)"
                    )
                }
                members.insert(.user(uid))
            }
        }
        return members
    }

    package static func userID(_ name: String) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    package static func groupID(_ name: String) -> UInt32? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }

    /// Whether this process may give a file the group `gid`: root may, and so may a
    /// member of the group.
    package static func mayGiveGroup(_ gid: UInt32) -> Bool {
        if geteuid() == 0 || getegid() == gid { return true }
        let count = getgroups(0, nil)
        guard count > 0 else { return false }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let found = getgroups(count, &groups)
        return groups.prefix(Int(max(found, 0))).contains(gid)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
