/// What a connection may do. Each role may do everything the roles before it may:
/// a viewer reads and subscribes; a user also writes values and runs scenes; an
/// admin also changes the layout and serves accessories as a provider.
public enum Role: Int, Comparable, CaseIterable, Hashable, Sendable {
    case viewer = 1
    case user = 2
    case admin = 3

    /// The role's name as people and the configuration write it.
    public var name: String {
        switch self {
        case .viewer: "viewer"
        case .user: "user"
        case .admin: "admin"
        }
    }

    public init?(name: String) {
        guard let role = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = role
    }

    public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Who is at the other end of a connection, as the kernel says (SO_PEERCRED), with
/// the groups its user belongs to.
package struct Peer: Hashable, Sendable {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32
    /// The primary group and every supplementary group of the user.
    package var groups: Set<UInt32>

    package init(pid: Int32, uid: UInt32, gid: UInt32, groups: Set<UInt32> = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups.union([gid])
    }
}

/// Which role each peer has: roles are given to users and groups; root and the
/// daemon's own user are always admins (they can open the database file anyway);
/// anyone else who can open the socket gets `defaultRole` (nil: no role, every
/// call refused).
package struct RolePolicy: Hashable, Sendable {
    /// A user or a group that a role is given to.
    package enum Member: Hashable, Sendable {
        case user(UInt32)
        case group(UInt32)
    }

    package var members: [Role: Set<Member>]
    package var defaultRole: Role?
    package var daemonUID: UInt32

    package init(members: [Role: Set<Member>] = [:], defaultRole: Role? = .user, daemonUID: UInt32) {
        self.members = members
        self.defaultRole = defaultRole
        self.daemonUID = daemonUID
    }

    /// The peer's role: admin for root and the daemon's user; else the highest role
    /// given to its user or one of its groups; else the default.
    package func role(of peer: Peer) -> Role? {
        if peer.uid == 0 || peer.uid == daemonUID { return .admin }
        let given = Role.allCases.reversed().first { role in
            guard let members = members[role] else { return false }
            return members.contains(.user(peer.uid)) || peer.groups.contains { members.contains(.group($0)) }
        }
        return given ?? defaultRole
    }

    /// What a denied call's error says: the role it needs and who the caller is.
    package static func denial(method: String, needs required: Role, peer: Peer, has role: Role?) -> HomeError {
        let holds = role.map { "has the \($0.name) role" } ?? "has no role"
        return HomeError(
            .permissionDenied,
            "\(method) needs the \(required.name) role; the caller (uid \(peer.uid), pid \(peer.pid)) \(holds)")
    }
}
