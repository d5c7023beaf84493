internal import ArgumentParser
internal import Foundation

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl homekit pair|unpair|list|discover …`: the HomeKit provider's own pairing
/// commands (Clients/providers/homekit), run in homectl's place. The daemon is not
/// involved: the provider keeps its pairings in its state directory, and a running
/// provider notices one added or removed by itself.
struct HomeKit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homekit",
        abstract: "Pair HomeKit (HAP-IP) accessories with homed's HomeKit provider: pair, unpair, list, discover.",
        discussion: """
            Runs the HomeKit provider's own command in homectl's place, with the arguments as given: \
            its output (JSON lines), its question (the setup code, asked on the terminal, never an \
            argument you must give) and its exit status are its own (0, 1 on failure, 64 for a malformed \
            address). The program is $HOMED_HOMEKIT_PROVIDER, else homed-homekit-provider on PATH; \
            without either, exit 69. The pairings go to the provider's state directory (the one its \
            service uses when run by the same user; --state-dir DIR to choose), and a running provider \
            registers a new pairing within 2 s.

            Examples:
              homectl homekit discover
              homectl homekit pair 192.168.1.40:51826      # asks for the setup code
              homectl homekit list
              homectl homekit unpair aa:bb:cc:dd:ee:01
            """)

    /// The provider's commands this one runs (its `run` is the service's, not this).
    static let actions = ["pair", "unpair", "list", "discover"]
    static let environmentVariable = "HOMED_HOMEKIT_PROVIDER"
    static let programName = "homed-homekit-provider"
    /// sysexits' EX_UNAVAILABLE: a program it needs is not there.
    static let notInstalledExitCode: Int32 = 69

    @Argument(
        parsing: .captureForPassthrough,
        help: ArgumentHelp(
            "pair HOST:PORT, unpair DEVICE_ID, list or discover, then that command's own options "
                + "(--state-dir DIR; pair's --code-file FILE and --timeout SECONDS; discover's --seconds N).",
            valueName: "command"))
    var arguments: [String] = []

    /// The arguments without homectl's own options for the daemon, which reach them
    /// when given before `homekit` (`homectl --socket X homekit list`): the pairing
    /// commands do not talk to the daemon, so those are not passed on.
    var passedOn: [String] {
        var rest = arguments[...]
        while let first = rest.first {
            let name = String(first.prefix { $0 != "=" })
            if GlobalOptions.flags.contains(first) || (GlobalOptions.withValue.contains(name) && first.contains("=")) {
                rest = rest.dropFirst()
            } else if GlobalOptions.withValue.contains(first) {
                rest = rest.dropFirst(2)
            } else {
                break
            }
        }
        return Array(rest)
    }

    func validate() throws {
        let arguments = passedOn
        guard let action = arguments.first, Self.actions.contains(action) else {
            let given = arguments.first.map { "'\($0)' is not one of them" } ?? "none was given"
            throw ValidationError("homekit takes \(Self.actions.joined(separator: ", ")); \(given)")
        }
    }

    func run() throws {
        let program: String
        do throws(NotInstalled) {
            program = try Self.locate(environment: ProcessInfo.processInfo.environment)
        } catch {
            Output.error("homectl: \(error.message)")
            throw ExitCode(Self.notInstalledExitCode)
        }
        let argv = [program] + passedOn
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        execv(program, &cArguments)
        // execv returns only when it failed.
        let reason = String(cString: strerror(errno))
        Output.error("homectl: cannot run the HomeKit provider \(program): \(reason)")
        throw ExitCode(Self.notInstalledExitCode)
    }

    struct NotInstalled: Error {
        let message: String
    }

    /// The provider's program: $HOMED_HOMEKIT_PROVIDER when set (it must then be an
    /// executable), else `homed-homekit-provider` in a directory of PATH.
    static func locate(environment: [String: String]) throws(NotInstalled) -> String {
        if let given = environment[environmentVariable], !given.isEmpty {
            guard access(given, X_OK) == 0 else {
                let reason = String(cString: strerror(errno))
                throw NotInstalled(
                    message: "\(environmentVariable) names \(given), which cannot be run (\(reason))")
            }
            return given
        }
        let path = environment["PATH"] ?? ""
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/\(programName)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw NotInstalled(
            message: "the HomeKit provider is not installed: no \(programName) on PATH, and \(environmentVariable) "
                + "is not set (install it as Clients/providers/homekit/README.md says, or set "
                + "\(environmentVariable) to its program)")
    }
}
