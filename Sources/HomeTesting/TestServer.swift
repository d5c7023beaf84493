internal import Foundation
public import HomeClient
public import HomeModel
public import HomeServer
internal import Logging
internal import NIOCore
internal import NIOPosix

/// A real `HomeServer` on a temporary Unix socket, in this process, serving the
/// demo home (no simulator: nothing changes unless a test changes it).
public struct TestServer: Sendable {
    public let server: HomeServer
    public let socketPath: String
    public let directory: String

    public var store: HomeStore { server.store }

    /// A fresh temporary directory under /tmp (short: socket paths are limited to 107 bytes).
    public static func makeTemporaryDirectory(_ prefix: String = "homed-test") -> String {
        let template = "/tmp/\(prefix)-XXXXXX"
        var bytes = Array(template.utf8CString)
        let result = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func start(
        graph: HomeGraph = demoHome(nowMs: 1_700_000_000_000), journalCapacity: Int = 100_000,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = makeTemporaryDirectory()
        let socketPath = directory + "/homed.sock"
        var configuration = ServerConfiguration(socketPath: socketPath)
        // Generous: a loaded CI machine must not fail a test on the hello timeout, nor
        // end a provider's session on a ping answered late (the tests of that set it).
        configuration.helloTimeoutMs = 60_000
        configuration.providerPingTimeoutMs = 10_000
        configure(&configuration)
        var logger = Logger(label: "homed-test")
        logger.logLevel = .critical
        let server = HomeServer(
            store: HomeStore(graph: graph, journalCapacity: journalCapacity), configuration: configuration,
            logger: logger)
        try await server.start()
        return TestServer(server: server, socketPath: socketPath, directory: directory)
    }

    /// How a test reaches the server: the two ways a client can, which a test may
    /// take as its arguments to run once each way.
    public enum Transport: String, Sendable, CaseIterable {
        /// Over the Unix socket, as another process would.
        case live
        /// Over an in-process connection (`HomeServer.connectInProcess()`): the same
        /// pipeline, no socket file.
        case inProcess
    }

    public func connect(name: String = "test", via transport: Transport = .live) async throws -> HomeClient {
        switch transport {
        case .live:
            try await HomeClient.connect(to: socketPath, name: name)
        case .inProcess:
            try await HomeClient.connect(connectedSocket: try await server.connectInProcess(), name: name)
        }
    }

    public func stop() async {
        await server.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `body` against a fresh server, always stopping it.
public func withTestServer<T>(
    graph: HomeGraph = demoHome(nowMs: 1_700_000_000_000),
    journalCapacity: Int = 100_000,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.start(graph: graph, journalCapacity: journalCapacity, configure: configure)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

extension HomeGraph {
    /// The id at a path that a test knows exists.
    public func id(_ path: String) -> ObjectID {
        do {
            return try resolve(path: path)
        } catch {
            fatalError("test path \(path) does not resolve: \(error)")
        }
    }
}

/// Fails after `seconds`: tests that wait for something never hang.
public func withTimeout<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimeoutError(what: what, seconds: seconds)
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

public struct TimeoutError: Error, CustomStringConvertible {
    public let what: String
    public let seconds: Double
    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}
