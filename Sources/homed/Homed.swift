internal import ArgumentParser
internal import Foundation
internal import HomeModel
internal import HomeServer
internal import HomeSimulator
internal import HomeStorage
internal import HomeSystemd
internal import HomeWire
internal import Logging
internal import ServiceLifecycle
internal import UnixSignals

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homed`: the home daemon. Parses arguments, opens the database, wires the store,
/// server, value saver and simulator together, and runs them until SIGTERM or SIGINT.
@main
struct Homed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homed",
        abstract: "The home daemon: serves the home model and its changes over a Unix socket.",
        discussion: """
            Clients connect to the socket (default: $HOMED_SOCKET, else $XDG_RUNTIME_DIR/homed/homed.sock, \
            else /run/homed/homed.sock as root, else /tmp/homed-$UID/homed.sock) and speak the protocol in \
            Protos/home_v1.proto. Try `homed --demo` and, in another shell, `homectl watch`.

            The home is kept in a SQLite database, homed.sqlite in a state directory unless --db says \
            otherwise: $STATE_DIRECTORY (systemd), else /var/lib/homed as root, else $XDG_STATE_HOME/homed \
            (~/.local/state/homed). `homed --print-paths` shows where everything is and why. Nothing is acknowledged before it is saved: a layout change survives a power loss, \
            a value the process's death (it is appended to a log, folded into the tables every half \
            second and at shutdown). A database homed cannot use (damaged, from a newer homed, another program's) \
            is refused and left untouched.
            """)

    @Option(help: "The Unix socket to listen on.")
    var socket: String?

    @Option(
        help: ArgumentHelp(
            "The socket's mode, in octal: who may connect at all (default: 0660 with the homed group when it exists, else 0600).",
            valueName: "mode"))
    var socketMode: String?

    @Option(
        help: ArgumentHelp(
            "The socket's group, by name or number (default: homed, when it exists).", valueName: "group"))
    var socketGroup: String?

    @Option(
        help: ArgumentHelp(
            "Users and groups with the admin role besides root and homed's own user: names or ids, groups as @name, comma-separated.",
            valueName: "list"))
    var admins: [String] = []

    @Option(
        help: ArgumentHelp("Users and groups with the user role (read, write values, run scenes).", valueName: "list"))
    var users: [String] = []

    @Option(help: ArgumentHelp("Users and groups with the viewer role (read and subscribe).", valueName: "list"))
    var viewers: [String] = []

    @Option(help: "The role of anyone else who can open the socket: admin, user, viewer or none.")
    var defaultRole = "user"

    @Option(help: ArgumentHelp("The database file (default: homed.sqlite in the state directory).", valueName: "path"))
    var db: String?

    @Flag(help: "Print where the socket, database and lock are, and why there; then exit.")
    var printPaths = false

    @Flag(help: "Keep nothing: no database, the home lasts as long as homed runs.")
    var inMemory = false

    @Option(help: "Milliseconds between folds of the value log into the tables (values are saved before that).")
    var valueFoldIntervalMs = 500

    @Flag(help: "Create the demo home if there is no home yet, and run its simulator (a provider, in-process).")
    var demo = false

    @Flag(help: "With --demo: do not simulate (the home stays still, its accessories served by homed itself).")
    var noSimulator = false

    @Option(help: "With --demo: milliseconds between simulator steps (default: the simulation file's tick_ms).")
    var simulatorIntervalMs: Int?

    @Option(help: "With --demo: the simulation file to run instead of the built-in demo home (see homed-sim).")
    var simulation: String?

    @Option(help: "How many recent events are held for clients that resume.")
    var journalCapacity = 100_000

    @Option(help: "Events a subscriber may have pending unless it asks otherwise.")
    var queueLimit = 1024

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(help: "Log format: auto (journal when stderr goes to journald), human, journal.")
    var logFormat: String = "auto"

    func validate() throws {
        guard LogFormat(rawValue: logFormat) != nil else {
            throw ValidationError("unknown log format '\(logFormat)'; use auto, human or journal")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "unknown log level '\(logLevel)'; use trace, debug, info, notice, warning, error or critical")
        }
        guard db == nil || !inMemory else { throw ValidationError("--db and --in-memory exclude each other") }
        guard db?.isEmpty != true else { throw ValidationError("--db needs a file name") }
        guard valueFoldIntervalMs > 0 else { throw ValidationError("--value-fold-interval-ms must be positive") }
        guard (simulatorIntervalMs ?? 1) > 0 else { throw ValidationError("--simulator-interval-ms must be positive") }
        guard simulation == nil || demo else { throw ValidationError("--simulation goes with --demo") }
        guard journalCapacity > 0 else { throw ValidationError("--journal-capacity must be positive") }
        guard queueLimit > 0 else { throw ValidationError("--queue-limit must be positive") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let environment = ProcessInfo.processInfo.environment
        LoggingSystem.bootstrap(
            (LogFormat(rawValue: logFormat) ?? .auto).handlerFactory(level: level, environment: environment))
        let logger = Logger(label: "homed")

        let activated: ActivatedSocket?
        do throws(HomeError) {
            activated = try SystemdSockets.listenFDs()
        } catch {
            FileHandleStderr.write("homed: \(error.message)\n")
            throw ExitCode(Int32(error.code.rawValue))
        }
        let paths = DaemonPaths.resolve(
            socket: activated?.path ?? socket, database: db, inMemory: inMemory, environment: environment,
            uid: getuid())
        if printPaths {
            print(paths.description)
            return
        }
        let socketPath = paths.socket.path
        let access: AccessSettings
        do throws(HomeError) {
            access = try accessSettings()
        } catch {
            FileHandleStderr.write("homed: \(error.message)\n")
            throw ExitCode(Int32(error.code.rawValue))
        }
        let database: HomeDatabase?
        let graph: HomeGraph
        let instanceLock: InstanceLock
        do throws(HomeError) {
            // First the lock: of two daemons started together, one gets it, and the
            // other is told about it before touching the socket or the database.
            instanceLock = try InstanceLock.acquire(paths.lock, socketPath: socketPath)
            (database, graph) = try openHome(paths: paths, activated: activated != nil, logger: logger)
        } catch {
            // Before the server starts: no socket is made, and a refused database is left as it was.
            FileHandleStderr.write("homed: \(error.message)\n")
            throw ExitCode(Int32(error.code.rawValue))
        }
        defer {
            database?.close()
            withExtendedLifetime(instanceLock) {}
        }
        let store = HomeStore(graph: graph, journalCapacity: journalCapacity, persistence: database)
        var configuration = ServerConfiguration(socketPath: socketPath)
        configuration.defaultQueueLimit = queueLimit
        configuration.socketMode = access.socketMode
        configuration.socketGroup = access.socketGroup
        configuration.roles = RoleTable(access.roles)
        configuration.listeningSocket = activated?.fd
        let notifier = SystemdNotifier(logger: logger)
        configuration.onListening = { _ = notifier.ready(status: "serving \(socketPath)") }
        configuration.onStopping = { _ = notifier.stopping() }
        var simulator: SimulatorProvider?
        if demo && !noSimulator {
            do throws(HomeError) {
                var file: SimulationFile
                if let simulation {
                    file = try SimulationFile.load(path: simulation)
                } else {
                    file = try SimulationFile.demo()
                }
                if let simulatorIntervalMs { file.tickMs = simulatorIntervalMs }
                simulator = SimulatorProvider(file: file, socketPath: socketPath, logger: logger)
                // Its accessories are served by the simulator, over the socket like any provider's.
                configuration.inProcessProviders.remove(file.provider)
            } catch {
                FileHandleStderr.write("homed: \(error.message)\n")
                throw ExitCode(Int32(error.code.rawValue))
            }
        }
        let server = HomeServer(store: store, configuration: configuration, logger: logger)

        // The value log's folding comes first so that it stops last, leaving the file folded.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if database != nil {
            services.append(
                .init(
                    service: ValueLogFolding(
                        store: store, interval: .milliseconds(valueFoldIntervalMs), logger: logger)))
        }
        services.append(.init(service: server))
        services.append(.init(service: AutomationEngine(store: store, values: server.values, logger: logger)))
        if let simulator {
            services.append(.init(service: simulator))
        }
        // systemctl reload (ExecReload=kill -HUP): SIGHUP must not end homed, and
        // systemd hears the reload begin and end.
        let reloads = Task {
            for await _ in await UnixSignalsSequence(trapping: .sighup) {
                _ = notifier.reloading()
                logger.info("reload: nothing to reload")
                _ = notifier.ready(status: "serving \(socketPath)")
            }
        }
        defer { reloads.cancel() }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as HomeError {
            FileHandleStderr.write("homed: \(error.message)\n")
            throw ExitCode(Int32(error.code.rawValue))
        } catch let error as ServiceGroupError {
            FileHandleStderr.write("homed: \(error)\n")
            throw ExitCode.failure
        }
    }
}

func nowMs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}

enum FileHandleStderr {
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
