internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl`: look at and control the home through homed.
///
/// Exit codes follow the daemon's status codes (gRPC's numbers): 0 OK, 3 invalid
/// argument, 5 not found, 14 unavailable (no daemon), …; `watch` adds 4 for its
/// timeout (-W) and 15 for a resync it was told not to accept.
@main
struct HomeCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homectl",
        abstract: "Look at and control the home served by homed.",
        discussion: """
            PATH names an object by id (42) or by names: Room/Accessory/Characteristic \
            ("Living Room/Lamp/Brightness"), optionally with the service \
            ("Living Room/Lamp/Lightbulb/Brightness") or the home first.

            A home on another machine: homectl --nats URL [--site S] [--nats-creds FILE] \
            COMMAND … runs the same command on the NATS bridge's remote socket \
            (homed-nats-remote, started if need be), with the same output and exit codes.
            """,
        version: HomedVersion.current,
        subcommands: [
            Status.self, Stats.self, Homes.self, Rooms.self, Zones.self, Accessories.self, Show.self, Get.self,
            SetValue.self,
            Rename.self, Assign.self, Groups.self, Scenes.self, Triggers.self, Types.self, Watch.self, History.self,
            Last.self, Providers.self, HomeKit.self, Remove.self, Sim.self,
            Backup.self, Export.self, Import.self,
        ])

    /// The options every subcommand takes, declared here as well: `homectl --help`
    /// lists them once, and the shells' completion scripts know that
    /// `homectl --socket X show <Tab>` completes `show`'s arguments. Given before
    /// the subcommand, they are moved after it before parsing
    /// (`GlobalOptions.movedAfterSubcommand`), so the subcommand always has them.
    @OptionGroup(title: "Options every command takes") var options: ConnectionOptions
}

extension HomeCtl {
    static func main() async {
        // A closed pipe is an ordinary end for a command line tool: the write fails
        // with EPIPE and we exit 0 instead of dying of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        do throws(UsageError) {
            if let remote = try RemoteDelegation.remoteArguments(
                Array(CommandLine.arguments.dropFirst()), homectl: RemoteDelegation.executable())
            {
                RemoteDelegation.exec(remote)
            }
        } catch {
            Output.error("homectl: \(error.message)")
            Glibc.exit(64)
        }
        do {
            // The async parse: completions of names ask the daemon (LiveCompletion).
            let arguments = GlobalOptions.movedAfterSubcommand(Array(CommandLine.arguments.dropFirst()))
            if !GlobalOptions.isListCommand(arguments), let format = GlobalOptions.tableFormat(in: arguments) {
                Output.error(
                    "homectl: -o \(format) is for the commands that list: homes, rooms, zones, accessories, groups, "
                        + "scenes, triggers, providers and history; \(arguments.first ?? "this one") prints text, "
                        + "json or yaml")
                Glibc.exit(64)
            }
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as Failure {
            if !failure.shown { Output.error("homectl: \(failure.error.message)") }
            Glibc.exit(Int32(failure.error.code.rawValue))
        } catch {
            exit(withError: error)
        }
        // Output that could not be written (a full disk, /dev/full) is a failure, not
        // a success with nothing said; a reader that went away (EPIPE) is not.
        if let failed = Output.stdoutError {
            Output.error("homectl: cannot write the output: \(String(cString: strerror(failed)))")
            Glibc.exit(1)
        }
    }
}

/// Connection options given before the subcommand (`homectl --socket X get …`, as
/// kubectl and busctl take them) are moved after it, where every subcommand's
/// `ConnectionOptions` reads them: the argument parser reads a command's options
/// only after its name.
enum GlobalOptions {
    static let withValue: Set<String> = ["--socket", "--timeout", "--output", "-o"]
    static let flags: Set<String> = ["--json", "--no-headers"]

    /// The commands that list, and so print `-o table` and `-o wide`: `accessories`,
    /// and the listing (default) subcommand of homes, rooms, zones, groups, scenes,
    /// triggers and providers. `arguments` start with the subcommand (global
    /// options moved after it).
    static func isListCommand(_ arguments: [String]) -> Bool {
        guard let command = arguments.first else { return true }  // homectl alone: its help
        if ["accessories", "history", "help"].contains(command) || command.hasPrefix("-") { return true }
        let listing: Set<String> = ["homes", "rooms", "zones", "groups", "scenes", "triggers", "providers"]
        guard listing.contains(command) else { return false }
        guard let next = arguments.dropFirst().first else { return true }
        return next == "list" || next.hasPrefix("-")
    }

    /// "table", "wide" or "csv" when the command line asks for one (-o table, --output=wide).
    static func tableFormat(in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            let value: String?
            if argument == "-o" || argument == "--output" {
                value = index + 1 < arguments.count ? arguments[index + 1] : nil
            } else if argument.hasPrefix("--output=") {
                value = String(argument.dropFirst("--output=".count))
            } else if argument.hasPrefix("-o"), argument.count > 2 {
                value = String(argument.dropFirst(2))
            } else {
                value = nil
            }
            if let value, value == "table" || value == "wide" || value == "csv" { return value }
            if argument == "--" { return nil }
        }
        return nil
    }

    static func movedAfterSubcommand(_ arguments: [String]) -> [String] {
        var moved: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = String(argument.prefix { $0 != "=" })
            if flags.contains(argument) || (withValue.contains(name) && argument.contains("=")) {
                moved.append(argument)
                index += 1
            } else if withValue.contains(argument) && index + 1 < arguments.count {
                moved += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !moved.isEmpty, index < arguments.count else { return arguments }
        var rest = Array(arguments[index...])
        // Before a "--", after which everything is a value.
        let end = rest.firstIndex(of: "--") ?? rest.count
        rest.insert(contentsOf: moved, at: end)
        return rest
    }
}
