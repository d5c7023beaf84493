internal import Foundation
internal import HomeModel
internal import HomeServer

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who may connect (the socket's mode and group) and what each caller may do (roles).
struct AccessSettings {
    var socketMode: UInt32
    var socketGroup: UInt32?
    var roles: RolePolicy

    /// The socket's mode and group when nothing says: 0660 with the `homed` group when
    /// that group exists and homed may give it, else 0600 (the daemon's user alone).
    static func defaultSocketAccess() -> (mode: UInt32, group: UInt32?) {
        if let gid = UserDatabase.groupID("homed"), UserDatabase.mayGiveGroup(gid) { return (0o660, gid) }
        return (0o600, nil)
    }

    /// An octal mode as people write it ("0660", "660"); only permission bits.
    static func parseMode(_ text: String, source: String) throws(HomeError) -> UInt32 {
        guard let mode = UInt32(text, radix: 8), mode <= 0o777 else {
            throw HomeError(
                .invalidArgument, "\(source): '\(text)' is not a socket mode; write it in octal, like 0660")
        }
        return mode
    }

    /// A group by name or number, which homed must be allowed to give the socket.
    static func parseGroup(_ text: String, source: String) throws(HomeError) -> UInt32 {
        let name = text.hasPrefix("@") ? String(text.dropFirst()) : text
        guard let gid = UInt32(name) ?? UserDatabase.groupID(name) else {
            throw HomeError(.invalidArgument, "\(source): no group named '\(name)' on this system")
        }
        guard UserDatabase.mayGiveGroup(gid) else {
            throw HomeError(
                .permissionDenied,
                "\(source): homed (uid \(getuid())) may not give the socket group \(name): it is not a member")
        }
        return gid
    }

    static func parseRole(_ text: String, source: String) throws(HomeError) -> Role? {
        if text == "none" { return nil }
        guard let role = Role(name: text) else {
            throw HomeError(.invalidArgument, "\(source): unknown role '\(text)'; use admin, user, viewer or none")
        }
        return role
    }
}

extension Homed {
    /// The access the flags ask for, every name resolved against the user database.
    func accessSettings() throws(HomeError) -> AccessSettings {
        let defaults = AccessSettings.defaultSocketAccess()
        let mode = try socketMode.map { (text) throws(HomeError) in
            try AccessSettings.parseMode(text, source: "--socket-mode")
        }
        let group = try socketGroup.map { (text) throws(HomeError) in
            try AccessSettings.parseGroup(text, source: "--socket-group")
        }
        var members: [Role: Set<RolePolicy.Member>] = [:]
        members[.admin] = try UserDatabase.members(admins, source: "--admins")
        members[.user] = try UserDatabase.members(users, source: "--users")
        members[.viewer] = try UserDatabase.members(viewers, source: "--viewers")
        return AccessSettings(
            socketMode: mode ?? (group == nil ? defaults.mode : 0o660),
            socketGroup: group ?? defaults.group,
            roles: RolePolicy(
                members: members, defaultRole: try AccessSettings.parseRole(defaultRole, source: "--default-role"),
                daemonUID: getuid()))
    }
}
