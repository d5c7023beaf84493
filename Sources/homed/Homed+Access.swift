internal import Foundation
internal import HomeConfig
internal import HomeModel
internal import HomeServer

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who may connect (the socket's mode and group) and what each caller may do (roles).
struct AccessSettings: Equatable {
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
    /// The access the flags ask for, else the file, every name resolved against the
    /// user database (a role list given by a flag replaces the file's).
    func accessSettings(file: ConfigFile?) throws(HomeError) -> AccessSettings {
        /// A flag's value with its name, else the file's with its line, else nil.
        func chosen(_ flag: String?, _ flagName: String, _ key: String) -> (text: String, source: String)? {
            if let flag { return (flag, flagName) }
            if let file, let text = file.string(key) { return (text, file.source(key)) }
            return nil
        }
        func members(_ flag: [String], _ flagName: String, _ key: String) throws(HomeError) -> Set<
            RolePolicy.Member
        > {
            if !flag.isEmpty { return try UserDatabase.members(flag, source: flagName) }
            guard let file, let list = file.list(key) else { return [] }
            return try UserDatabase.members(list, source: file.source(key))
        }
        let defaults = AccessSettings.defaultSocketAccess()
        let mode = try chosen(socketMode, "--socket-mode", "socket.mode").map { (text, source) throws(HomeError) in
            try AccessSettings.parseMode(text, source: source)
        }
        let group = try chosen(socketGroup, "--socket-group", "socket.group").map { (text, source) throws(HomeError) in
            try AccessSettings.parseGroup(text, source: source)
        }
        let role = chosen(defaultRole, "--default-role", "roles.default") ?? ("user", "")
        return AccessSettings(
            socketMode: mode ?? (group == nil ? defaults.mode : 0o660),
            socketGroup: group ?? defaults.group,
            roles: RolePolicy(
                members: [
                    .admin: try members(admins, "--admins", "roles.admins"),
                    .user: try members(users, "--users", "roles.users"),
                    .viewer: try members(viewers, "--viewers", "roles.viewers"),
                ],
                defaultRole: try AccessSettings.parseRole(role.text, source: role.source),
                daemonUID: getuid()))
    }
}
