internal import HomeWire

/// Where the daemon keeps its socket, database and instance lock, and why there:
/// what `homed --print-paths` shows. A pure function of the flags and the
/// environment, so that it is the same in tests as in the daemon.
public struct DaemonPaths: Sendable, Equatable {
    /// A path and the reason it was chosen ("--db", "$STATE_DIRECTORY (systemd)", …).
    public struct Choice: Sendable, Equatable {
        public var path: String
        public var reason: String

        public init(_ path: String, because reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    public var socket: Choice
    /// Nil with `--in-memory`.
    public var database: Choice?
    /// Held for as long as the daemon runs: one daemon per socket.
    public var lock: String
    /// Where the database was by default before state directories (beside the
    /// socket, in a runtime directory that is gone at reboot): moved from there
    /// once. Nil when the database was named explicitly.
    public var formerDefaultDatabase: String?

    /// - Parameters:
    ///   - socket: `--socket`, if given.
    ///   - database: `--db`, if given.
    ///   - environment: the process environment (`HOMED_SOCKET`, `XDG_RUNTIME_DIR`,
    ///     `STATE_DIRECTORY`, `XDG_STATE_HOME`, `HOME`).
    ///   - uid: the process's user id (root's defaults are system directories).
    public static func resolve(
        socket: String?, database: String?, inMemory: Bool, environment: [String: String], uid: UInt32
    ) -> DaemonPaths {
        let socketChoice: Choice
        if let socket {
            socketChoice = Choice(socket, because: "--socket")
        } else if let explicit = environment["HOMED_SOCKET"], !explicit.isEmpty {
            socketChoice = Choice(explicit, because: "$HOMED_SOCKET")
        } else {
            let path = defaultSocketPath(environment: environment, uid: uid)
            let reason =
                environment["XDG_RUNTIME_DIR"].map { !$0.isEmpty } == true
                ? "$XDG_RUNTIME_DIR/homed"
                : uid == 0 ? "root's runtime directory" : "no $XDG_RUNTIME_DIR: a directory of this uid in /tmp"
            socketChoice = Choice(path, because: reason)
        }
        var paths = DaemonPaths(
            socket: socketChoice, database: nil, lock: socketChoice.path + ".lock", formerDefaultDatabase: nil)
        if inMemory { return paths }
        if let database {
            paths.database = Choice(database, because: "--db")
            return paths
        }
        paths.database = defaultDatabase(environment: environment, uid: uid)
        paths.formerDefaultDatabase = directory(of: socketChoice.path).map { $0 + "/homed.sqlite" } ?? "homed.sqlite"
        if paths.formerDefaultDatabase == paths.database?.path { paths.formerDefaultDatabase = nil }
        return paths
    }

    /// `$STATE_DIRECTORY` (systemd's `StateDirectory=`; the first, if it lists
    /// several), else `/var/lib/homed` for root, else `$XDG_STATE_HOME/homed`, else
    /// `~/.local/state/homed`: directories that survive a reboot.
    static func defaultDatabase(environment: [String: String], uid: UInt32) -> Choice {
        if let state = environment["STATE_DIRECTORY"], let first = state.split(separator: ":").first, !first.isEmpty {
            return Choice(first + "/homed.sqlite", because: "$STATE_DIRECTORY (from systemd)")
        }
        if uid == 0 { return Choice("/var/lib/homed/homed.sqlite", because: "root's state directory") }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return Choice(state + "/homed/homed.sqlite", because: "$XDG_STATE_HOME/homed")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp/homed-\(uid)"
        return Choice(home + "/.local/state/homed/homed.sqlite", because: "~/.local/state/homed (no $XDG_STATE_HOME)")
    }

    static func directory(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// What `homed --print-paths` prints: one line per path, with its reason.
    public var description: String {
        var lines = ["socket    \(socket.path)  (\(socket.reason))"]
        if let database {
            lines.append("database  \(database.path)  (\(database.reason))")
        } else {
            lines.append("database  none  (--in-memory)")
        }
        lines.append("lock      \(lock)  (beside the socket: one daemon per socket)")
        if let formerDefaultDatabase {
            lines.append("former    \(formerDefaultDatabase)  (the old default; a database there is moved once)")
        }
        return lines.joined(separator: "\n")
    }
}
