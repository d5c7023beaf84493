internal import ArgumentParser
internal import Foundation
internal import HomeModel
internal import HomeServer
internal import HomeSimulator

// The demo's simulator, and how homed ends on an error.
extension Homed {
    /// With `--demo` (and no `--no-simulator`): the simulation to run, the built-in
    /// one or `--simulation`'s, its accessories then served by the simulator, a
    /// provider like any other. Nil otherwise.
    func demoSimulation(configuration: inout ServerConfiguration) throws(HomeError) -> SimulationFile? {
        guard demo && !noSimulator else { return nil }
        var file: SimulationFile
        if let path = simulation {
            file = try SimulationFile.load(path: path)
        } else {
            file = try SimulationFile.demo()
        }
        if let simulatorIntervalMs { file.tickMs = simulatorIntervalMs }
        configuration.inProcessProviders.remove(file.provider)
        return file
    }

    /// Says what was wrong on stderr and gives the exit status for it (the error's code).
    static func exit(_ error: HomeError) -> ExitCode {
        FileHandleStderr.write("homed: \(error.message)\n")
        return ExitCode(Int32(error.code.rawValue))
    }

    /// Whether `signals` yields or finishes within the time: false when it is over first.
    static func firstSignal(of signals: AsyncStream<Void>, withinSeconds seconds: Int) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in signals { break }
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

enum FileHandleStderr {
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
