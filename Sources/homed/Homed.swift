internal import ArgumentParser
internal import Foundation
internal import HomeConfig
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
            """,
        version: HomedVersion.current)

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

    @Option(help: "The role of anyone else who can open the socket: admin, user (default), viewer or none.")
    var defaultRole: String?

    @Option(help: ArgumentHelp("The database file (default: homed.sqlite in the state directory).", valueName: "path"))
    var db: String?

    @Flag(help: "Print where the socket, database and lock are, and why there; then exit.")
    var printPaths = false

    @Flag(help: "Keep nothing: no database, the home lasts as long as homed runs.")
    var inMemory = false

    @Option(
        help: ArgumentHelp(
            "The configuration file (default, if it exists: $CONFIGURATION_DIRECTORY/homed.yaml, else /etc/homed/homed.yaml as root, else ~/.config/homed/homed.yaml). Flags win over it.",
            valueName: "path"))
    var config: String?

    @Option(
        help: "Milliseconds between folds of the value log into the tables (values are saved before that; default 500)."
    )
    var valueFoldIntervalMs: Int?

    @Flag(help: "Create the demo home if there is no home yet, and run its simulator (a provider, in-process).")
    var demo = false

    @Flag(help: "With --demo: do not simulate (the home stays still, its accessories served by homed itself).")
    var noSimulator = false

    @Option(help: "With --demo: milliseconds between simulator steps (default: the simulation file's tick_ms).")
    var simulatorIntervalMs: Int?

    @Option(help: "With --demo: the simulation file to run instead of the built-in demo home (see homed-sim).")
    var simulation: String?

    @Option(help: "How many recent events are held for clients that resume (default 100000).")
    var journalCapacity: Int?

    @Option(
        help:
            "How long the stored history keeps events: a duration such as 10d, 36h or 1y (default 10d), or off to keep none (then every restart begins a new journal)."
    )
    var historyRetention: String?

    @Option(
        help:
            "What a timer or sunrise/sunset trigger that came due while homed was down does at the next start: skip (the default) or catch-up (fire once, if it was due since it last fired)."
    )
    var missedTriggers: String?

    @Option(
        help:
            "What a trigger's end (an undo) that came due while homed was down does at the next start: run (the default: undo at once) or skip (leave the values, with a note)."
    )
    var missedEnds: String?

    @Option(help: "Events a subscriber may have pending unless it asks otherwise (default 1024).")
    var queueLimit: Int?

    @Option(
        help: "Milliseconds a provider has to answer a read or write that sets no timeout of its own (default 5000)."
    )
    var providerTimeoutMs: Int?

    @Option(help: "Milliseconds between pings of each provider (default 300).")
    var providerPingIntervalMs: Int?

    @Option(help: "Milliseconds a provider has to answer a ping before its session ends (default 600).")
    var providerPingTimeoutMs: Int?

    @Option(
        help:
            "Milliseconds after start during which a request to a provider known from before that has not come back yet waits for it, up to the request's deadline (default 10000; 0: fail at once)."
    )
    var providerStartupGraceMs: Int?

    @Option(help: "Log level: trace, debug, info (default), notice, warning, error, critical.")
    var logLevel: String?

    // For tests of the daemon across time: hidden, never for a home in use.
    @Option(
        help: ArgumentHelp(
            "For tests: the time is read from this file (milliseconds since the epoch), which only the test moves.",
            valueName: "path", visibility: .hidden))
    var testClockFile: String?

    @Option(help: "Log format: auto (default: journal when stderr goes to journald), human, journal.")
    var logFormat: String?

    func validate() throws {
        if let logFormat, LogFormat(rawValue: logFormat) == nil {
            throw ValidationError("unknown log format '\(logFormat)'; use auto, human or journal")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError(
                "unknown log level '\(logLevel)'; use trace, debug, info, notice, warning, error or critical")
        }
        guard db == nil || !inMemory else { throw ValidationError("--db and --in-memory exclude each other") }
        guard db?.isEmpty != true else { throw ValidationError("--db needs a file name") }
        guard (valueFoldIntervalMs ?? 1) > 0 else { throw ValidationError("--value-fold-interval-ms must be positive") }
        guard (simulatorIntervalMs ?? 1) > 0 else { throw ValidationError("--simulator-interval-ms must be positive") }
        guard simulation == nil || demo else { throw ValidationError("--simulation goes with --demo") }
        guard (journalCapacity ?? 1) > 0 else { throw ValidationError("--journal-capacity must be positive") }
        guard (queueLimit ?? 1) > 0 else { throw ValidationError("--queue-limit must be positive") }
        for (value, flag) in [
            (providerTimeoutMs, "--provider-timeout-ms"), (providerPingIntervalMs, "--provider-ping-interval-ms"),
            (providerPingTimeoutMs, "--provider-ping-timeout-ms"),
        ] {
            guard (value ?? 1) > 0 else { throw ValidationError("\(flag) must be positive") }
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        // Before anything else: a configuration homed cannot use changes nothing.
        let file: ConfigFile?
        let settings: DaemonSettings
        do throws(HomeError) {
            file = try loadConfigFile(environment: environment)
            settings = try self.settings(file: file)
        } catch {
            throw Self.exit(error)
        }
        let logLevel = LiveLogLevel(settings.logLevel)
        LoggingSystem.bootstrap(settings.logFormat.handlerFactory(level: logLevel, environment: environment))
        let logger = Logger(label: "homed")
        if let file { logger.info("read the configuration", metadata: ["file": "\(file.path)"]) }

        let activated: ActivatedSocket?
        do throws(HomeError) {
            activated = try SystemdSockets.listenFDs()
        } catch {
            throw Self.exit(error)
        }
        let paths = DaemonPaths.resolve(
            socket: activated?.path ?? settings.socket, database: settings.database, inMemory: inMemory,
            environment: environment,
            uid: getuid())
        if printPaths {
            print(paths.description)
            return
        }
        let socketPath = paths.socket.path
        let access = settings.access
        let clock: any AutomationClock
        do throws(HomeError) {
            clock = try testClockFile.map(FileAutomationClock.init(path:)) ?? SystemAutomationClock()
        } catch {
            throw Self.exit(error)
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
            throw Self.exit(error)
        }
        defer {
            database?.close()
            withExtendedLifetime(instanceLock) {}
        }
        let store = HomeStore(
            graph: graph, journalCapacity: settings.journalCapacity, persistence: database,
            history: settings.history.flatMap { retention in
                database.map { StoredHistory(storage: $0, retention: retention) }
            }, logger: logger, wallClockMs: { clock.nowMs })
        var configuration = ServerConfiguration(socketPath: socketPath)
        configuration.databasePath = paths.database?.path ?? ""
        configuration.defaultQueueLimit = settings.queueLimit
        configuration.providerTimeoutMs = UInt32(clamping: settings.providerTimeoutMs)
        configuration.providerPingIntervalMs = UInt32(clamping: settings.providerPingIntervalMs)
        configuration.providerPingTimeoutMs = UInt32(clamping: settings.providerPingTimeoutMs)
        configuration.providerStartupGraceMs = UInt32(clamping: settings.providerStartupGraceMs)
        configuration.socketMode = access.socketMode
        configuration.socketGroup = access.socketGroup
        configuration.roles = RoleTable(access.roles)
        configuration.listeningSocket = activated?.fd
        let notifier = SystemdNotifier(logger: logger)
        configuration.onListening = { _ = notifier.ready(status: "serving \(socketPath)") }
        configuration.onStopping = { _ = notifier.stopping() }
        let simulation: SimulationFile?
        do throws(HomeError) {
            simulation = try demoSimulation(configuration: &configuration)
        } catch {
            throw Self.exit(error)
        }
        // The demo's simulator connects in-process and registers before the socket
        // accepts anyone, so that no client ever finds the demo unreachable.
        let (registered, registration) = AsyncStream.makeStream(of: Void.self)
        if simulation != nil {
            configuration.beforeListening = {
                if await !Self.firstSignal(of: registered, withinSeconds: 10) {
                    logger.warning("the simulator did not register within 10 s; serving the socket without it")
                }
            }
        }
        let server = HomeServer(store: store, configuration: configuration, logger: logger)
        let simulator = simulation.map { file in
            SimulatorProvider(
                file: file, connectedSocket: { try await server.connectInProcess() },
                onRegistered: { registration.finish() }, logger: logger)
        }

        // The value log's folding comes first so that it stops last, leaving the file folded.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if database != nil {
            services.append(
                .init(
                    service: ValueLogFolding(
                        store: store, interval: .milliseconds(settings.valueFoldIntervalMs), logger: logger)))
        }
        if store.keepsHistory {
            services.append(.init(service: HistoryMaintenance(store: store, logger: logger)))
        }
        services.append(.init(service: server))
        services.append(
            .init(
                service: AutomationEngine(
                    store: store, clock: clock,
                    limits: AutomationLimits(
                        catchUpMissed: settings.catchUpMissedTriggers, runMissedEnds: settings.runMissedEnds),
                    values: server.values, logger: logger)))
        if let simulator {
            services.append(.init(service: simulator))
        }
        // systemctl reload (ExecReload=kill -HUP): the configuration file read again,
        // the roles, limits and log level replaced (open connections too), and
        // systemd told it began and ended.
        let reloads = Task { [configuration] in
            var current = settings
            let live = LiveSettings(roles: configuration.roles, limits: configuration.limits, logLevel: logLevel)
            for await _ in await UnixSignalsSequence(trapping: .sighup) {
                _ = notifier.reloading()
                current = reload(from: current, live: live, logger: logger)
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
            throw Self.exit(error)
        } catch let error as ServiceGroupError {
            FileHandleStderr.write("homed: \(error)\n")
            throw ExitCode.failure
        }
    }
}
