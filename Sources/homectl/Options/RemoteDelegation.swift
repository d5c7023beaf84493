#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl --nats URL [--site S] COMMAND …`: any command, for a home on another
/// machine, through NATS instead of the local socket.
///
/// homectl itself speaks only homed's socket protocol. The NATS bridge's
/// `homed-nats-remote` serves that protocol on a local socket and carries each
/// call over NATS; given `-- PROGRAM ARGS…` it finds the socket of those servers
/// and that site already running, or starts it, and then runs PROGRAM with
/// `HOMED_SOCKET` naming it. So homectl replaces itself (exec) with
/// `homed-nats-remote <the NATS options> -- <this homectl> <the rest>`: the same
/// homectl then runs the command on that socket, with the same output and exit codes.
enum RemoteDelegation {
    /// The program that serves the remote socket, looked for beside homectl, then on PATH.
    static let program = "homed-nats-remote"

    /// The remote command line for `arguments` (homectl's, without its name), or nil
    /// when they do not ask for NATS (no `--nats`): homectl then talks to the socket.
    /// The NATS options may come anywhere before a `--`; everything else is passed
    /// on to homectl as it is, in its order.
    static func remoteArguments(_ arguments: [String], homectl: String) throws(UsageError) -> [String]? {
        let end = arguments.firstIndex(of: "--") ?? arguments.count
        guard arguments[..<end].contains(where: { $0 == "--nats" || $0.hasPrefix("--nats=") }) else { return nil }

        var servers: [String] = []
        var connection: [String] = []
        var passed: [String] = []
        var index = 0
        /// The value of the option at `index` (`--name value` or `--name=value`).
        func value(of name: String) throws(UsageError) -> String? {
            let argument = arguments[index]
            if argument.hasPrefix(name + "=") {
                index += 1
                return String(argument.dropFirst(name.count + 1))
            }
            guard argument == name else { return nil }
            guard index + 1 < end else { throw UsageError("\(name) needs a value") }
            index += 2
            return arguments[index - 1]
        }
        while index < end {
            if let url = try value(of: "--nats") {
                servers.append(url)
            } else if let site = try value(of: "--site") {
                connection += ["--site", site]
            } else if let file = try value(of: "--nats-creds") {
                connection += ["--creds", file]
            } else if let file = try value(of: "--nats-user-file") {
                connection += ["--user-file", file]
            } else if let prefix = try value(of: "--nats-js-prefix") {
                connection += ["--js-prefix", prefix]
            } else if try value(of: "--socket") != nil {
                throw UsageError("--socket and --nats name two ways to reach homed; give one")
            } else {
                passed.append(arguments[index])
                index += 1
            }
        }
        passed += arguments[end...]
        guard !servers.isEmpty, servers.allSatisfy({ !$0.isEmpty }) else {
            throw UsageError("--nats needs a server's URL (nats://host:4222)")
        }
        return servers.flatMap { ["--server", $0] } + connection + ["--", homectl] + passed
    }

    /// Replaces homectl with the remote command; returns only when it cannot be run.
    static func exec(_ arguments: [String]) -> Never {
        let beside = besideHomectl()
        let path = beside ?? program
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) }
        argv.append(nil)
        if beside != nil {
            execv(path, &argv)
        } else {
            execvp(path, &argv)
        }
        let reason = errno
        if reason == ENOENT {
            Output.error(
                "homectl: --nats needs \(program) (the NATS bridge's remote socket), beside homectl or on PATH; "
                    + "it is not installed")
        } else {
            Output.error("homectl: cannot run \(path): \(String(cString: strerror(reason)))")
        }
        Glibc.exit(14)
    }

    /// This homectl's own path (what the remote socket's program runs again), or
    /// the name it was run by when the system does not say.
    static func executable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return CommandLine.arguments.first ?? "homectl" }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `homed-nats-remote` in homectl's own directory, when it is there and executable.
    private static func besideHomectl() -> String? {
        let executable = executable()
        guard let slash = executable.lastIndex(of: "/") else { return nil }
        let candidate = executable[..<slash] + "/" + program
        return access(candidate, X_OK) == 0 ? candidate : nil
    }
}

/// A command line homectl cannot run: said on stderr, exit 64 (usage).
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
