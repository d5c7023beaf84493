internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// Options every subcommand shares.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "homed's socket (default: $HOMED_SOCKET, else the daemon's default path).")
    var socket: String?

    @Flag(name: .customLong("json"), help: "Print JSON instead of text for people (the same as -o json).")
    var jsonFlag = false

    @Option(
        name: [.short, .customLong("output")],
        help: ArgumentHelp(
            "How to print: text (for people), json, yaml; list commands also table and wide (more columns).",
            valueName: "format"))
    var output: OutputFormat?

    @Flag(help: "With -o table or -o wide: no header line.")
    var noHeaders = false

    @Option(
        help: ArgumentHelp(
            "Seconds to wait for homed to answer before giving up with exit code 4 (0: wait forever).",
            valueName: "seconds"))
    var timeout: Double = 10

    @Option(help: .hidden)
    var clientName = "homectl"

    /// The output format: --json is -o json; text unless told.
    var format: OutputFormat { jsonFlag ? .json : output ?? .text }

    /// Whether `-o text` was given: text for people even into a pipe (`watch`
    /// prints JSON into a pipe unless told).
    var textAskedFor: Bool { output == .text }

    /// JSON or YAML rather than text: what every `if options.json` prints.
    var json: Bool { format.isStructured }

    func validate() throws {
        if jsonFlag, let output, output != .text && output != .json {
            throw ValidationError("--json and -o \(output.rawValue) ask for two formats; give one")
        }
        guard timeout >= 0, timeout.isFinite else {
            throw ValidationError("--timeout takes a number of seconds, 0 or more, not \(timeout)")
        }
    }

    /// Runs `body` with a connected client, turning every error into a sentence on
    /// stderr and the exit code of its status. Past --timeout, homectl ends with
    /// DEADLINE_EXCEEDED's code (4).
    func withClient<T>(_ body: (HomeClient) async throws(HomeError) -> T) async throws -> T {
        let watchdog = startWatchdog()
        defer { watchdog?.cancel() }
        let client: HomeClient
        do throws(HomeError) {
            client = try await HomeClient.connect(to: socket, name: clientName)
        } catch {
            throw Failure(explained(error))
        }
        do throws(HomeError) {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw Failure(AccessExplanation.roleDenied(error, socketPath: socketPath) ?? error)
        }
    }
}

extension ConnectionOptions {
    /// The socket homectl uses.
    var socketPath: String { socket ?? HomeClient.defaultSocketPath() }

    /// A connection error with where the socket's path came from (a path from a
    /// forgotten HOMED_SOCKET is a common surprise) and, when nothing listens, how
    /// to start homed.
    func explained(_ error: HomeError) -> HomeError {
        if error.code == .permissionDenied {
            return AccessExplanation.roleDenied(error, socketPath: socketPath)
                ?? AccessExplanation.socketDenied(error, path: socketPath)
        }
        guard error.code == .unavailable else { return error }
        let source =
            socket != nil
            ? "--socket"
            : ProcessInfo.processInfo.environment["HOMED_SOCKET"] != nil ? "HOMED_SOCKET" : "the default for this user"
        let start =
            error.message.contains("no daemon is listening")
            ? "; start homed with `homed`, or `systemctl start homed` for the system service" : ""
        return HomeError(error.code, error.message + " (the socket path is from \(source)\(start))")
    }

    /// Ends the process once --timeout has passed. A socket that accepts and never
    /// answers (a hung daemon, another program listening) would otherwise hang
    /// homectl, and the script that runs it, forever; the calls themselves cannot
    /// be abandoned (a NIO promise does not end with the task), so the process ends.
    /// Cancel the task once homed has answered.
    func startWatchdog() -> Task<Void, Never>? {
        guard timeout > 0 else { return nil }
        let seconds = timeout
        let path = socketPath
        return Task.detached {
            guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
            Output.error("homectl: homed on \(path) did not answer within \(seconds.formatted()) s (--timeout)")
            Glibc.exit(Int32(HomeError.Code.deadlineExceeded.rawValue))
        }
    }
}

extension Double {
    /// 10 rather than 10.0; 0.5 as it is.
    func formatted() -> String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}

/// An error shown as "homectl: <message>" with the exit code of its status, unless
/// it was already shown (`shown`: the command printed it, item by item).
struct Failure: Error {
    let error: HomeError
    let shown: Bool
    init(_ error: HomeError, shown: Bool = false) {
        self.error = error
        self.shown = shown
    }
}
