internal import Foundation
internal import HomeModel

#if canImport(Glibc)
    internal import Glibc
#endif

/// What homectl says when homed turns the user away, in the user's terms: which
/// group or role they lack and the command that gives it, rather than a method name
/// or an errno.
enum AccessExplanation {
    /// The socket could not be opened: its mode, owner and group, and how to join
    /// the group (or that the session predates joining it).
    static func socketDenied(_ error: HomeError, path: String) -> HomeError {
        var info = stat()
        guard stat(path, &info) == 0 else { return error }
        let mode = String(info.st_mode & 0o7777, radix: 8)
        let owner = userName(info.st_uid) ?? "uid \(info.st_uid)"
        let group = groupName(info.st_gid)
        let uid = getuid()
        let me = userName(uid) ?? "uid \(uid)"
        var message =
            "permission denied on \(path) (mode 0\(mode), owner \(owner), group \(group ?? "gid \(info.st_gid)")); "
        if info.st_mode & 0o060 != 0o060 {
            message +=
                "it admits only its owner, \(owner); to share it, give it a group and mode 0660 "
                + "(socket.group and socket.mode in homed's configuration, or SocketGroup= and SocketMode= in homed.socket)"
        } else if let group {
            if processGroups().contains(info.st_gid) {
                message +=
                    "you (\(me), uid \(uid)) are in group \(group), but the socket's mode does not let the group in"
            } else if listedMember(me, ofGroup: info.st_gid) {
                message +=
                    "you (\(me), uid \(uid)) were added to group \(group), but this session started before: "
                    + "log out and in again (or run `newgrp \(group)`)"
            } else {
                message +=
                    "you (\(me), uid \(uid)) are not in group \(group): `sudo usermod -aG \(group) \(me)`, then log in again"
            }
        } else {
            message += "you (\(me), uid \(uid)) may not open it"
        }
        return HomeError(.permissionDenied, message)
    }

    /// A call the daemon refused for the caller's role ("WriteCharacteristics needs
    /// the user role; the caller (uid 1000, pid 9) has the viewer role"), said as
    /// what the command wanted to do and how an admin grants it; nil for any other
    /// error.
    static func roleDenied(_ error: HomeError, socketPath: String) -> HomeError? {
        guard error.code == .permissionDenied,
            let needs = error.message.range(of: " needs the "),
            let roleEnd = error.message.range(
                of: " role; the caller (uid ", range: needs.upperBound..<error.message.endIndex)
        else { return nil }
        let method = String(error.message[..<needs.lowerBound]).split(separator: "/").last.map(String.init) ?? ""
        let required = String(error.message[needs.upperBound..<roleEnd.lowerBound])
        let held: String
        if let has = error.message.range(of: ") has the "),
            let end = error.message.range(of: " role", range: has.upperBound..<error.message.endIndex)
        {
            held =
                "are \(article(error.message[has.upperBound..<end.lowerBound])) \(error.message[has.upperBound..<end.lowerBound])"
        } else {
            held = "have no role"
        }
        let uid = getuid()
        let me = userName(uid) ?? "uid \(uid)"
        let key = required == "admin" ? "admins" : required == "user" ? "users" : "viewers"
        let config = socketPath.hasPrefix("/run/") ? "/etc/homed/homed.yaml" : "homed's configuration file"
        let reload =
            socketPath.hasPrefix("/run/") ? "`systemctl reload homed`" : "`systemctl --user reload homed` (or SIGHUP)"
        return HomeError(
            .permissionDenied,
            "\(action(of: method)) needs the \(required) role; you (\(me), uid \(uid)) \(held); an admin adds you "
                + "under `roles.\(key)` in \(config), then \(reload)")
    }

    /// What a method does, as a person asked for it.
    static func action(of method: String) -> String {
        switch method {
        case "WriteCharacteristics": return "setting values"
        case "ExecuteActionSet": return "running a scene"
        case "ChangeLayout": return "changing the home (homes, rooms, zones, names, groups, scenes, triggers)"
        case "GetStats": return "the daemon's statistics"
        case "OpenProvider", "RegisterAccessories", "ReportValues", "AnswerCommand": return "serving accessories"
        case "GetStatus", "Hello": return "talking to homed"
        default: return "reading the home"
        }
    }

    /// "a viewer", "a user", "an admin" (by sound, not by letter).
    private static func article<S: StringProtocol>(_ role: S) -> String {
        role == "admin" ? "an" : "a"
    }

    private static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    private static func groupName(_ gid: gid_t) -> String? {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return nil }
        return String(cString: name)
    }

    /// The groups this process holds now (a group joined after login is not among them).
    private static func processGroups() -> Set<gid_t> {
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        let got = getgroups(count, &groups)
        return Set(groups.prefix(Int(max(got, 0)))).union([getgid(), getegid()])
    }

    /// Whether the group database lists the user in the group (what `usermod -aG` changes).
    private static func listedMember(_ user: String, ofGroup gid: gid_t) -> Bool {
        guard let entry = getgrgid(gid) else { return false }
        if let primary = getpwnam(user), primary.pointee.pw_gid == gid { return true }
        var member = entry.pointee.gr_mem
        while let pointer = member?.pointee {
            if String(cString: pointer) == user { return true }
            member = member?.advanced(by: 1)
        }
        return false
    }
}
