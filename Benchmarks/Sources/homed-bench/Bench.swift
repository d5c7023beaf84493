internal import CBenchFloor
internal import Foundation
internal import Histogram
internal import HomeClient
internal import HomeModel
internal import HomeServer
internal import HomeStorage
@_spi(Wire) internal import HomeTesting
@_spi(Wire) internal import HomeWire
internal import Logging
internal import NIOCore
internal import NIOPosix

/// `homed-bench wire` (the default): homed's wire figures next to the floor —
/// minimal C code doing the same over a Unix socket in the same run — printed as
/// ratios, because this machine's absolute timings drift.
/// Its options and the other subcommands are in Commands.swift.
enum Bench {
    struct Arguments {
        var roundTrips: Int
        var events: Int
        var runs: Int
    }

    static func run(_ arguments: Arguments) async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        print(
            "homed-bench: \(arguments.runs) runs each, median reported; \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print("")

        // The floor first, then homed, alternating per run so drift hits both alike.
        var floorRoundTrips: [Percentiles] = []
        var homedRoundTrips: [Percentiles] = []
        var blockingRoundTrips: [Percentiles] = []
        var cPingRoundTrips: [Percentiles] = []
        var cReadRoundTrips: [Percentiles] = []
        var nioEchoRoundTrips: [Percentiles] = []
        var floorStreams: [Double] = []
        var homedStreams: [StreamFigures] = []
        var cWriterStreams: [StreamFigures] = []
        for run in 1...arguments.runs {
            floorRoundTrips.append(try floorPingPong(directory: directory, iterations: arguments.roundTrips))
            homedRoundTrips.append(
                try await homedRoundTrip(directory: directory + "/rt\(run)", iterations: arguments.roundTrips))
            blockingRoundTrips.append(
                try await homedBlockingRoundTrip(directory: directory + "/bt\(run)", iterations: arguments.roundTrips))
            let (ping, read) = try await cClientRoundTrips(
                directory: directory + "/ct\(run)", iterations: arguments.roundTrips)
            cPingRoundTrips.append(ping)
            cReadRoundTrips.append(read)
            nioEchoRoundTrips.append(
                try await NIOEchoFloor.roundTrips(directory: directory, iterations: arguments.roundTrips))
            floorStreams.append(try floorStream(directory: directory, frames: arguments.events))
            homedStreams.append(try await homedStream(directory: directory + "/st\(run)", events: arguments.events))
            cWriterStreams.append(
                try await homedStream(directory: directory + "/sc\(run)", events: arguments.events, writer: .cPeer))
        }

        let floorRT = median(floorRoundTrips)
        let homedRT = median(homedRoundTrips)
        print(
            "Sequential round trip, 64-byte frame (floor: C client <-> C server) vs cached read (Swift HomeClient <-> homed):"
        )
        print(row("floor p50 / p99", "\(us(floorRT.p50)) / \(us(floorRT.p99))"))
        print(row("homed p50 / p99", "\(us(homedRT.p50)) / \(us(homedRT.p99))"))
        print(
            row(
                "ratio p50 / p99", String(format: "%.2fx / %.2fx", homedRT.p50 / floorRT.p50, homedRT.p99 / floorRT.p99)
            ))
        let blockingRT = median(blockingRoundTrips)
        print(row("blocking p50 / p99", "\(us(blockingRT.p50)) / \(us(blockingRT.p99))  (BlockingHomeClient)"))
        print(
            row(
                "ratio p50 / p99",
                String(format: "%.2fx / %.2fx", blockingRT.p50 / floorRT.p50, blockingRT.p99 / floorRT.p99)))
        print("  The daemon alone, answering the floor's C client (the client's share is the difference),")
        print("  and a bare SwiftNIO echo server of 64-byte frames on the same event loops (what NIO costs here):")
        for (label, figures) in [
            ("C ping p50 / p99", median(cPingRoundTrips)), ("C read p50 / p99", median(cReadRoundTrips)),
            ("NIO echo p50 / p99", median(nioEchoRoundTrips)),
        ] {
            print(
                row(
                    label,
                    "\(us(figures.p50)) / \(us(figures.p99))  "
                        + String(format: "ratio %.2fx / %.2fx", figures.p50 / floorRT.p50, figures.p99 / floorRT.p99)))
        }
        print("")
        let floorRate = floorStreams.sorted()[floorStreams.count / 2]
        print(
            "Events to one subscriber, a HomeClient (floor: C reader of 64-byte frames, 64 per write) vs homed value events,"
        )
        print("written in batches of 1000 by a HomeClient (end to end) or by a C client sending pre-encoded batches:")
        print(row("floor", "\(rate(floorRate)) frames/s"))
        for (label, runs) in [("homed (Swift writer)", homedStreams), ("homed (C writer)", cWriterStreams)] {
            let homed = runs.sorted { $0.eventsPerSecond < $1.eventsPerSecond }[runs.count / 2]
            print(
                row(
                    label,
                    "\(rate(homed.eventsPerSecond)) events/s (\(homed.delivered) delivered, \(homed.merged) merged, "
                        + "\(homed.markers) markers)  "
                        + String(format: "ratio %.3f", homed.eventsPerSecond / floorRate)))
        }
    }

    // MARK: Round trips

    static func floorPingPong(directory: String, iterations: Int) throws -> Percentiles {
        var latencies = [Double](repeating: 0, count: iterations)
        let status = cbf_pingpong(directory, Int32(iterations), 64, &latencies)
        guard status == 0 else { throw BenchError("cbf_pingpong failed: \(status)") }
        return Percentiles(latencies)
    }

    static func homedRoundTrip(directory: String, iterations: Int) async throws -> Percentiles {
        let server = try await startServer(directory: directory)
        defer { Task { await server.stop() } }
        let client = try await HomeClient.connect(to: server.configuration.socketPath, name: "bench")
        let graph = try await client.getHome().graph
        let brightness = try graph.resolve(path: "Living Room/Lamp/Brightness")
        // The loop runs on the connection's event loop (HomeClient.taskExecutor), as a
        // latency-sensitive client should: no thread hop on either side of a call.
        let latencies = try await withTaskExecutorPreference(client.taskExecutor) {
            for _ in 0..<1000 { _ = try await client.read([brightness]) }
            var latencies: [Double] = []
            latencies.reserveCapacity(iterations)
            let clock = ContinuousClock()
            for _ in 0..<iterations {
                let start = clock.now
                _ = try await client.read([brightness])
                latencies.append(nanoseconds(clock.now - start))
            }
            return latencies
        }
        await client.close()
        await server.stop()
        return Percentiles(latencies)
    }

    /// The same round trip from `BlockingHomeClient`: blocking reads and writes on
    /// the calling thread, as the C floor's client does.
    static func homedBlockingRoundTrip(directory: String, iterations: Int) async throws -> Percentiles {
        let server = try await startServer(directory: directory)
        let path = server.configuration.socketPath
        let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        // Blocking I/O belongs on a thread of its own, not on the cooperative pool.
        let latencies: [Double] = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let client = try BlockingHomeClient(path: path, name: "bench-blocking")
                    for _ in 0..<1000 { _ = try client.read([brightness]) }
                    var latencies: [Double] = []
                    latencies.reserveCapacity(iterations)
                    let clock = ContinuousClock()
                    for _ in 0..<iterations {
                        let start = clock.now
                        _ = try client.read([brightness])
                        latencies.append(nanoseconds(clock.now - start))
                    }
                    continuation.resume(returning: latencies)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        await server.stop()
        return Percentiles(latencies)
    }

    /// The floor's kind of C client against homed: a ping (frame codec and NIO
    /// only) and the same cached read as above, with frames encoded here once.
    static func cClientRoundTrips(directory: String, iterations: Int) async throws -> (
        ping: Percentiles, read: Percentiles
    ) {
        let server = try await startServer(directory: directory)
        let path = server.configuration.socketPath
        let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        let hello = Array(WireFrame(callID: 0, body: .hello(Hello(clientName: "bench-c"))).encoded().readableBytesView)
        let ping = Array(WireFrame(callID: 0, body: .ping(nonce: 7)).encoded().readableBytesView)
        let read = Array(
            WireFrame(
                callID: 1,
                body: .open(
                    CallOpen(
                        method: HomeMethods.readCharacteristics.name,
                        request: ReadCharacteristicsRequest(characteristicIDs: [brightness]).encoded()))
            ).encoded().readableBytesView)
        func measure(_ request: [UInt8], replies: Int32) throws -> Percentiles {
            var latencies = [Double](repeating: 0, count: iterations)
            let status = cbf_client_round_trips(
                path, hello, hello.count, 1, request, request.count, replies,
                Int32(iterations), &latencies)
            guard status == 0 else { throw BenchError("cbf_client_round_trips failed: \(status)") }
            return Percentiles(latencies)
        }
        // A unary call is answered by a message frame and a status frame.
        let figures = (try measure(ping, replies: 1), try measure(read, replies: 2))
        await server.stop()
        return figures
    }

    // MARK: Streams

    static func floorStream(directory: String, frames: Int) throws -> Double {
        var rate = 0.0
        let status = cbf_stream_reader(directory, frames, 64, 64, &rate)
        guard status == 0 else { throw BenchError("cbf_stream_reader failed: \(status)") }
        return rate
    }

    struct StreamFigures {
        var eventsPerSecond: Double
        var delivered: Int
        var merged: Int
        var markers: Int
    }

    /// What writes the changes a stream benchmark's subscriber counts.
    enum StreamWriter {
        /// A `HomeClient` in this process: end to end, the writer's own encoding
        /// and reply decoding included (on the same two cores).
        case homeClient
        /// The floor's kind of C client, sending pre-encoded batches and not
        /// decoding the replies: the daemon's and the subscriber's cost alone.
        case cPeer
    }

    /// A writer sends batches of writes that each change a value; one subscriber
    /// counts the value events (and what coalescing merged) until all arrived.
    ///
    /// - Parameters:
    ///   - database: keep the home in a SQLite file in `directory`, as homed does
    ///     (every write logged before it is acknowledged); else in memory.
    static func homedStream(
        directory: String, events: Int, writer kind: StreamWriter = .homeClient, database: Bool = false,
        history: Bool = false
    ) async throws -> StreamFigures {
        let server = try await startServer(
            directory: directory, queueLimit: 65_536, database: database, history: history)
        let path = server.configuration.socketPath
        let reader = try await HomeClient.connect(to: path, name: "bench-reader")
        let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        let subscription = reader.subscribe(
            SubscribeRequest(
                filter: SubscriptionFilter(characteristicIDs: [brightness]), queueLimit: 65_536))
        var iterator = subscription.makeAsyncIterator()
        _ = try await iterator.next()  // the SUBSCRIBED marker: from here on nothing is missed

        let batch = 1000
        let batches = (events + batch - 1) / batch
        // Values alternate 10, 11 across the whole stream, so every write changes it.
        func writes(_ index: Int) -> WriteCharacteristicsRequest {
            let count = min(batch, events - index * batch)
            return WriteCharacteristicsRequest(
                writes: (0..<count).map { offset in
                    CharacteristicWrite(
                        characteristicID: brightness, value: .uint(10 + UInt64((index * batch + offset) % 2)))
                })
        }
        // The writer keeps a few batches in flight (calls are multiplexed), so the
        // daemon always has the next batch to apply while the last one is answered.
        let inFlight = 4
        let homeWriter = kind == .homeClient ? try await HomeClient.connect(to: path, name: "bench-writer") : nil
        // As homed does, the value log is folded into the tables every half second.
        let store = server.store
        let folding = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                if database { _ = try? store.foldValueLog() }
            }
        }
        defer { folding.cancel() }
        let clock = ContinuousClock()
        let start = clock.now
        let writerTask: Task<Void, any Error>
        switch kind {
        case .homeClient:
            let writer = homeWriter!
            writerTask = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<batches {
                        if index >= inFlight { try await group.next() }
                        let request = writes(index)
                        group.addTask { _ = try await writer.write(request) }
                    }
                    try await group.waitForAll()
                }
                await writer.close()
            }
        case .cPeer:
            precondition(events % batch == 0 && batch % 2 == 0, "the C writer repeats one even-sized batch")
            let hello = Array(
                WireFrame(callID: 0, body: .hello(Hello(clientName: "bench-writer-c"))).encoded().readableBytesView)
            let payload = writes(0).encoded()
            // Distinct call ids for the calls in flight at once.
            let frames = (1...UInt64(2 * inFlight)).map { callID in
                Array(
                    WireFrame(
                        callID: callID,
                        body: .open(
                            CallOpen(
                                method: HomeMethods.writeCharacteristics.name, request: payload))
                    ).encoded().readableBytesView)
            }
            writerTask = Task {
                let status: Int32 = await withCheckedContinuation { continuation in
                    // Blocking I/O belongs on a thread of its own, not on the cooperative pool.
                    Thread.detachNewThread {
                        let pointers = frames.map { frame in
                            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: frame.count)
                            copy.initialize(from: frame, count: frame.count)
                            return UnsafePointer(copy)
                        }
                        defer { for pointer in pointers { pointer.deallocate() } }
                        let lengths = frames.map(\.count)
                        let optionals: [UnsafePointer<UInt8>?] = pointers
                        continuation.resume(
                            returning: cbf_pipelined_calls(
                                path, hello, hello.count, 1, optionals, lengths, Int32(frames.count), batches,
                                2, Int32(inFlight)))
                    }
                }
                guard status == 0 else { throw BenchError("cbf_pipelined_calls failed: \(status)") }
            }
        }
        var delivered = 0
        var merged = 0
        var markers = 0
        while delivered + merged < events, let message = try await iterator.next() {
            if message.marker != nil { markers += 1 }
            for event in message.events {
                delivered += 1
                if case .value(let change) = event.body { merged += Int(change.merged) }
            }
        }
        let elapsed = clock.now - start
        try await writerTask.value
        await reader.close()
        await server.stop()
        // Merged changes were not delivered as events: only delivered ones count.
        return StreamFigures(
            eventsPerSecond: Double(delivered) / seconds(elapsed), delivered: delivered,
            merged: merged, markers: markers)
    }

    // MARK: Helpers

    static func startServer(
        directory: String, queueLimit: Int = 1024, maxConnections: Int = 1024,
        graph: HomeGraph? = nil, database: Bool = false, history: Bool = false,
        group: MultiThreadedEventLoopGroup = daemonGroup
    ) async throws -> HomeServer {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let home = graph ?? demoHome()
        var persistence: HomeDatabase?
        if database {
            let file = try HomeDatabase.open(path: directory + "/homed.sqlite")
            try file.saveLayout(from: HomeGraph(), to: home)
            persistence = file
        }
        var configuration = ServerConfiguration(socketPath: directory + "/homed.sock")
        configuration.defaultQueueLimit = queueLimit
        // The benchmarks' subscribers take whole bursts without merging: as the
        // daemon's operator may allow, past its default maximum.
        configuration.maxQueueLimit = max(configuration.maxQueueLimit, queueLimit)
        configuration.maxConnections = maxConnections
        var logger = Logger(label: "homed-bench")
        logger.logLevel = .error
        let server = HomeServer(
            store: persistence.map { HomeStore(graph: home, database: $0, history: history) }
                ?? HomeStore(graph: home),
            configuration: configuration, logger: logger,
            group: group)
        try await server.start()
        return server
    }

    /// The in-process daemon's event loops, apart from the clients' (the singleton
    /// group), as they are when homed runs as its own process: otherwise where NIO
    /// happens to place the server's and the client's channels decides whether they
    /// share one thread, and figures swing by 2x from run to run.
    static let daemonGroup = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)

    static func makeTemporaryDirectory() -> String {
        TestServer.makeTemporaryDirectory("homed-bench")
    }
}

/// The median and 99th percentile of a set of samples, from an HDR histogram at
/// three significant digits (0.1% resolution).
struct Percentiles {
    var p50: Double
    var p99: Double

    /// - Parameter samples: nanoseconds.
    init(_ samples: [Double]) {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for sample in samples { _ = histogram.record(UInt64(max(sample, 0).rounded())) }
        p50 = Double(histogram.valueAtPercentile(50))
        p99 = Double(histogram.valueAtPercentile(99))
    }

    init(p50: Double, p99: Double) {
        self.p50 = p50
        self.p99 = p99
    }
}

func median(_ runs: [Percentiles]) -> Percentiles {
    Percentiles(p50: runs.map(\.p50).sorted()[runs.count / 2], p99: runs.map(\.p99).sorted()[runs.count / 2])
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

func seconds(_ duration: Duration) -> Double { nanoseconds(duration) / 1e9 }
func us(_ ns: Double) -> String { String(format: "%.1f us", ns / 1000) }
func rate(_ perSecond: Double) -> String { String(format: "%.0f", perSecond) }
func row(_ label: String, _ value: String) -> String {
    "  " + label.padding(toLength: 22, withPad: " ", startingAt: 0) + value
}
