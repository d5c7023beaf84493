#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl --nats URL [--site S] watch | get | set …`: the same commands, through
/// NATS instead of the socket, for a home on another machine.
///
/// homectl itself speaks only homed's socket protocol; NATS is spoken by the NATS
/// bridge's command line, `homed-nats-remote`, which prints what homectl prints
/// and exits with its codes. So homectl turns its own command line into that one
/// and replaces itself with it (exec): the output, the exit status and the signals
/// are the remote command's, with nothing in between.
enum RemoteDelegation {
    /// The commands that go through NATS; every other one needs the socket.
    static let commands: Set<String> = ["watch", "get", "set"]
    /// The program that speaks NATS, looked for beside homectl, then on PATH.
    static let program = "homed-nats-remote"

    /// The remote command line for `arguments` (homectl's, without its name), or nil
    /// when they do not ask for NATS (no `--nats`): homectl then talks to the socket.
    /// Options for the connection may come before the subcommand or after it;
    /// everything else after the subcommand is passed on as it is.
    static func remoteArguments(_ arguments: [String]) throws(UsageError) -> [String]? {
        let end = arguments.firstIndex(of: "--") ?? arguments.count
        guard arguments[..<end].contains(where: { $0 == "--nats" || $0.hasPrefix("--nats=") }) else { return nil }

        var servers: [String] = []
        var connection: [String] = []
        var passed: [String] = []
        var subcommand: String?
        var format: String?
        var home: String?
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
            let argument = arguments[index]
            if let url = try value(of: "--nats") {
                servers.append(url)
            } else if let site = try value(of: "--site") {
                connection += ["--site", site]
            } else if let file = try value(of: "--nats-creds") {
                connection += ["--creds", file]
            } else if let file = try value(of: "--nats-user-file") {
                connection += ["--user-file", file]
            } else if try value(of: "--socket") != nil {
                throw UsageError("--socket and --nats name two ways to reach homed; give one")
            } else if subcommand == nil, let given = try value(of: "--output") {
                format = given
            } else if subcommand == nil, let given = try value(of: "-o") {
                format = given
            } else if subcommand == nil, argument.hasPrefix("-o"), argument.count > 2 {
                format = String(argument.dropFirst(2))
                index += 1
            } else if subcommand == nil, argument == "--json" {
                format = "json"
                index += 1
            } else if subcommand == nil, let given = try value(of: "--home") {
                home = given
            } else if subcommand == nil, argument.hasPrefix("-") {
                throw UsageError("\(argument) is not an option homectl passes through NATS (before the command)")
            } else {
                if subcommand == nil { subcommand = argument }
                passed.append(argument)
                index += 1
            }
        }
        passed += arguments[end...]
        guard let subcommand else {
            throw UsageError("--nats needs a command: watch, get or set")
        }
        guard commands.contains(subcommand) else {
            throw UsageError(
                "\(subcommand) needs homed's socket; through NATS homectl runs watch, get and set")
        }
        guard !servers.isEmpty, servers.allSatisfy({ !$0.isEmpty }) else {
            throw UsageError("--nats needs a server's URL (nats://host:4222)")
        }
        var remote = servers.flatMap { ["--server", $0] } + connection + [subcommand]
        // Without -o the remote command chooses as homectl does (text for people,
        // JSON from `watch` into a pipe).
        if let format { remote += ["-o", format] }
        if let home { remote += ["--home", home] }
        return remote + passed.dropFirst()
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
                "homectl: --nats needs \(program) (the NATS bridge's command line), beside homectl or on PATH; "
                    + "it is not installed")
        } else {
            Output.error("homectl: cannot run \(path): \(String(cString: strerror(reason)))")
        }
        Glibc.exit(14)
    }

    /// `homed-nats-remote` in homectl's own directory, when it is there and executable.
    private static func besideHomectl() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
