internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// Options every subcommand shares.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "homed's socket (default: $HOMED_SOCKET, else the daemon's default path).")
    var socket: String?

    @Flag(help: "Print JSON instead of human-readable text.")
    var json = false

    @Option(help: .hidden)
    var clientName = "homectl"

    /// Runs `body` with a connected client, turning every error into a sentence on
    /// stderr and the exit code of its status.
    func withClient<T>(_ body: (HomeClient) async throws(HomeError) -> T) async throws -> T {
        let client: HomeClient
        do throws(HomeError) {
            client = try await HomeClient.connect(to: socket, name: clientName)
        } catch {
            throw Failure(error)
        }
        do throws(HomeError) {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw Failure(error)
        }
    }
}

/// An error shown as "homectl: <message>" with the exit code of its status.
struct Failure: Error {
    let error: HomeError
    init(_ error: HomeError) { self.error = error }
}
