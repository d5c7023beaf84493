internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeServer
internal import HomeWire

/// What making every value durable before it is acknowledged costs: the same
/// writers and subscriber with the home in memory and in a SQLite file (values
/// logged before each reply), alternately in one run, and a single write's round
/// trip both ways.
enum Durability {
    static func run(events: Int, roundTrips: Int, runs: Int) async throws {
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(label: String, writer: Bench.StreamWriter)] = [
            ("Swift writer", .homeClient), ("C writer", .cPeer),
        ]
        var rates: [String: (memory: [Double], database: [Double])] = [:]
        var writeRT: (memory: [Percentiles], database: [Percentiles]) = ([], [])
        for run in 0..<runs {
            for (index, item) in cases.enumerated() {
                for database in [false, true] {
                    // Progress on stderr: a run takes minutes.
                    FileHandle.standardError.write(
                        Data("run \(run + 1): \(item.label), \(database ? "durable" : "in memory")\n".utf8))
                    let figures = try await Bench.homedStream(
                        directory: directory + "/s\(run)-\(index)-\(database)", events: events, writer: item.writer,
                        database: database)
                    if database {
                        rates[item.label, default: ([], [])].database.append(figures.eventsPerSecond)
                    } else {
                        rates[item.label, default: ([], [])].memory.append(figures.eventsPerSecond)
                    }
                }
            }
            for database in [false, true] {
                let figures = try await writeRoundTrip(
                    directory: directory + "/w\(run)-\(database)", iterations: roundTrips, database: database)
                if database { writeRT.database.append(figures) } else { writeRT.memory.append(figures) }
            }
        }
        print("Value events to one subscriber, batches of 1000 writes per call; median of \(runs) runs:")
        for item in cases {
            guard let figures = rates[item.label] else { continue }
            let memory = figures.memory.sorted()[figures.memory.count / 2]
            let database = figures.database.sorted()[figures.database.count / 2]
            print(
                "  \(item.label.padding(toLength: 36, withPad: " ", startingAt: 0))"
                    + "in memory \(rate(memory)) events/s, durable \(rate(database)) events/s, "
                    + String(format: "loss %.1f%%", (1 - database / memory) * 100))
        }
        let memory = median(writeRT.memory)
        let database = median(writeRT.database)
        print("A single write's round trip (HomeClient, sequential):")
        print("  in memory p50 / p99  \(us(memory.p50)) / \(us(memory.p99))")
        print("  durable   p50 / p99  \(us(database.p50)) / \(us(database.p99))")
    }

    static func writeRoundTrip(directory: String, iterations: Int, database: Bool, history: Bool = false) async throws
        -> Percentiles
    {
        let server = try await Bench.startServer(directory: directory, database: database, history: history)
        let client = try await HomeClient.connect(to: server.configuration.socketPath, name: "bench")
        let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        let latencies = try await withTaskExecutorPreference(client.taskExecutor) {
            var latencies: [Double] = []
            latencies.reserveCapacity(iterations)
            let clock = ContinuousClock()
            for index in 0..<(iterations + 1000) {
                let start = clock.now
                _ = try await client.write(.int(Int64(index % 2)), to: brightness)
                if index >= 1000 { latencies.append(nanoseconds(clock.now - start)) }
            }
            return latencies
        }
        await client.close()
        await server.stop()
        return Percentiles(latencies)
    }
}
