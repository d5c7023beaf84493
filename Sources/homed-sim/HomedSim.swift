internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeSimulator
internal import Logging
internal import ServiceLifecycle
internal import UnixSignals

/// Runs a simulation file as an accessory provider of a running homed.
@main
struct HomedSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homed-sim",
        abstract: "Simulated accessories, described in a YAML file, as a provider of a running homed.",
        discussion: """
            The file names the provider id, the home and rooms, and each accessory with its services, \
            initial values and behaviours (a thermostat, a lock, a garage door, a window covering, random \
            walks, motion and contact sensors, a doorbell, an outlet, an accessory that goes unreachable). \
            The demo home homed --demo runs is one such file: Sources/HomeSimulator/Demo/demo-home.yaml.

            The simulator connects like any provider: it registers the accessories by key, answers reads and \
            writes, reports its changes, and reconnects and registers again when homed restarts. Stop it and \
            its accessories become unreachable; start it again and they come back with the same ids.
            """)

    @Argument(help: "The simulation file (YAML).")
    var file: String

    @Option(help: "The socket of the homed to serve (default: $HOMED_SOCKET, else homed's default).")
    var socket: String?

    @Option(help: "Milliseconds between steps (default: the file's tick_ms).")
    var tickMs: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "homed-sim")
        var simulation: SimulationFile
        do throws(HomeError) {
            simulation = try SimulationFile.load(path: file)
        } catch {
            FileHandle.standardError.write(Data("homed-sim: \(error.message)\n".utf8))
            throw ExitCode(Int32(error.code.rawValue))
        }
        if let tickMs { simulation.tickMs = max(1, tickMs) }
        let socketPath = socket ?? HomeClient.defaultSocketPath()
        let provider = SimulatorProvider(file: simulation, socketPath: socketPath, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: provider)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as HomeError {
            FileHandle.standardError.write(Data("homed-sim: \(error.message)\n".utf8))
            throw ExitCode(Int32(error.code.rawValue))
        }
    }
}
