import HomeModel
import HomeServer
import HomeTesting
import Testing

/// How long, in seconds, a test waits for what it is waiting for (a socket, a line,
/// an exit, a registration, an event) before it calls it a hang. Only a safety net:
/// every wait ends as soon as its condition holds, and no test asserts on how long
/// something took. Swift Testing runs all of a target's tests at once on the machine's
/// cores (two, on CI), so on a busy machine one step of a test may wait a long time
/// for a thread: the bound is minutes, never seconds.
let patience: Double = 300

extension TimeLimitTrait.Duration {
    /// Every test's time limit: a safety net against a hang, longer than the whole
    /// target takes on a loaded two-core machine (every test of it runs at once, so a
    /// test's time is the others' too).
    static var safetyNet: Self { .minutes(15) }
}

extension ServerConfiguration {
    /// The server's own waits for its clients (a hello, an answer to its keepalive
    /// ping, a provider's answer to a liveness ping or to a request that sets no
    /// deadline of its own) as patient as the tests' waits: on a busy machine a client
    /// in this process may wait long for a thread (or not read while a test makes its
    /// changes), and a test that is not about these timeouts must not fail on them
    /// (those that are set their own afterwards, or give their calls a deadline).
    mutating func makePatient() {
        helloTimeoutMs = Int64(patience * 1000)
        keepaliveIntervalMs = Int64(patience * 1000)
        providerPingTimeoutMs = UInt32(patience * 1000)
        providerTimeoutMs = UInt32(patience * 1000)
    }

    /// A server's configuration on `socketPath`, made patient.
    static func patient(socketPath: String) -> ServerConfiguration {
        var configuration = ServerConfiguration(socketPath: socketPath)
        configuration.makePatient()
        return configuration
    }
}

/// `withTestServer` on a server made patient (`ServerConfiguration.makePatient`);
/// `configure` comes after, so a test of a timeout sets its own.
func withPatientServer<T>(
    graph: HomeGraph = demoHome(nowMs: 1_700_000_000_000), journalCapacity: Int = 100_000,
    configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (TestServer) async throws -> T
) async throws -> T {
    try await withTestServer(
        graph: graph, journalCapacity: journalCapacity,
        configure: { configuration in
            configuration.makePatient()
            configure(&configuration)
        }, body)
}

/// `TestServer.start` on a server made patient, as `withPatientServer`.
func startPatientServer(
    graph: HomeGraph = demoHome(nowMs: 1_700_000_000_000), configure: (inout ServerConfiguration) -> Void = { _ in }
) async throws -> TestServer {
    try await TestServer.start(
        graph: graph,
        configure: { configuration in
            configuration.makePatient()
            configure(&configuration)
        })
}
