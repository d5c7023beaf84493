internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeServer
internal import HomeWire
internal import NIOCore
internal import NIOPosix
internal import Synchronization

/// `homed-bench provider`: what going through a provider costs. In one run, in
/// turns: a cached read's round trip (client → daemon → client), a write through
/// a provider (client → daemon → provider → daemon → client, acknowledged once
/// the provider confirms), and a fresh read (the same path); then the rate of
/// value events one provider reports in batches, as one subscriber receives them.
///
/// The provider is a `HomeProvider` in this process, on the client event loops;
/// the daemon runs on its own (`Bench.daemonGroup`), as it does as a process.
enum ProviderBench {
    /// Accessories the provider registers: each a lightbulb whose brightness the
    /// reports move (a batch touches them in turn, so every value is a change).
    static let accessories = 16

    /// - Parameter daemonThreads: the daemon's event loops; nil: one per core, as
    ///   `homed` has. With one, the client's and the provider's connections share
    ///   it, and what crossing between loops costs a write drops out.
    static func run(roundTrips: Int, events: Int, batch: Int, runs: Int, daemonThreads: Int?) async throws {
        let group = daemonThreads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) } ?? Bench.daemonGroup
        print(
            "homed-bench provider: \(runs) runs, median reported; \(ProcessInfo.processInfo.activeProcessorCount) cores, "
                + "the daemon on \(daemonThreads.map { "\($0)" } ?? "one per core") event loops"
        )
        var cached: [Percentiles] = []
        var writes: [Percentiles] = []
        var fresh: [Percentiles] = []
        var rates: [Double] = []
        for _ in 1...runs {
            let directory = Bench.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = try await Bench.startServer(
                directory: directory, queueLimit: 16_384, graph: HomeGraph(), group: group)
            let figures = try await measure(
                socketPath: server.configuration.socketPath, roundTrips: roundTrips, events: events, batch: batch)
            await server.stop()
            cached.append(figures.cached)
            writes.append(figures.write)
            fresh.append(figures.fresh)
            rates.append(figures.eventsPerSecond)
        }
        if daemonThreads != nil { try await group.shutdownGracefully() }
        let (read, write, freshRead) = (median(cached), median(writes), median(fresh))
        print("")
        print("Round trips, \(roundTrips) each, interleaved in blocks (HomeClient <-> homed [<-> HomeProvider]):")
        print(row("cached read p50 / p99", "\(us(read.p50)) / \(us(read.p99))"))
        print(row("provider write p50/p99", "\(us(write.p50)) / \(us(write.p99))"))
        print(row("fresh read p50 / p99", "\(us(freshRead.p50)) / \(us(freshRead.p99))"))
        print(
            row(
                "write / cached read",
                String(format: "%.2fx / %.2fx (p50 / p99; goal <= 2.5x)", write.p50 / read.p50, write.p99 / read.p99)))
        print(
            row(
                "fresh / cached read",
                String(format: "%.2fx / %.2fx", freshRead.p50 / read.p50, freshRead.p99 / read.p99)))
        print("")
        print("Value events reported by one provider in batches of \(batch), received by one subscriber:")
        print(
            row(
                "events / s",
                rate(rates.sorted()[rates.count / 2]) + "  (goal >= 1 000 000; runs: "
                    + rates.map { rate($0) }.joined(separator: ", ") + ")"))
    }

    struct Figures {
        var cached: Percentiles
        var write: Percentiles
        var fresh: Percentiles
        var eventsPerSecond: Double
    }

    static func measure(socketPath: String, roundTrips: Int, events: Int, batch: Int) async throws -> Figures {
        let lamps = (0..<accessories).map { index in
            ProvidedAccessory(
                key: "lamp-\(index)", name: "Lamp \(index)", category: .lightbulb,
                services: [
                    ProvidedService(
                        type: "Lightbulb",
                        characteristics: [
                            ProvidedCharacteristic(type: "On", value: .bool(false)),
                            ProvidedCharacteristic(type: "Brightness", value: .int(0)),
                        ])
                ])
        }
        let device = Mutex<[CharacteristicRef: CharacteristicValue]>([:])
        let provider = HomeProvider(
            id: "bench", socketPath: socketPath, accessories: lamps,
            read: { refs in device.withLock { values in refs.reduce(into: [:]) { $0[$1] = values[$1] ?? .int(0) } } },
            write: { values, _ in
                device.withLock { $0.merge(values) { _, new in new } }
                return [:]
            })
        let running = Task { try await provider.run() }
        defer { running.cancel() }
        await provider.waitForRegistration()
        let brightness = (0..<accessories).map {
            CharacteristicRef(accessoryKey: "lamp-\($0)", service: "Lightbulb", characteristic: "Brightness")
        }
        let ids = brightness.compactMap { provider.id(of: $0) }
        guard ids.count == accessories else { throw BenchError("the provider's characteristics were not registered") }

        let client = try await HomeClient.connect(to: socketPath, name: "bench client")
        // Warm up every path, then measure in alternating blocks so drift hits all three alike.
        for value in 0..<200 {
            _ = try await client.read([ids[0]])
            _ = try await client.write(.int(Int64(value % 100)), to: ids[0])
            _ = try await client.read([ids[0]], fresh: true)
        }
        var cachedSamples: [Double] = []
        var writeSamples: [Double] = []
        var freshSamples: [Double] = []
        let clock = ContinuousClock()
        let block = 500
        var done = 0
        while done < roundTrips {
            let count = min(block, roundTrips - done)
            for _ in 0..<count {
                let start = clock.now
                _ = try await client.read([ids[0]])
                cachedSamples.append(nanoseconds(clock.now - start))
            }
            for index in 0..<count {
                let start = clock.now
                _ = try await client.write(.int(Int64((done + index) % 100)), to: ids[1])
                writeSamples.append(nanoseconds(clock.now - start))
            }
            for _ in 0..<count {
                let start = clock.now
                _ = try await client.read([ids[2]], fresh: true)
                freshSamples.append(nanoseconds(clock.now - start))
            }
            done += count
        }

        // Events: batches of reports, two in flight, to one subscriber of everything.
        var subscription = client.subscribe(
            SubscribeRequest(filter: SubscriptionFilter(kinds: [.valueChanged]), queueLimit: 16_384, heartbeatMs: 100)
        )
        .makeAsyncIterator()
        _ = try await subscription.next()
        let batches = max(1, events / batch)
        let started = clock.now
        let lastSeq = SeqBox()
        // Set once every report is acknowledged: the sequence number the stream must reach.
        let finalSeq = SeqBox()
        let reporter = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<batches {
                    if number >= 2 { try await group.next() }
                    group.addTask {
                        // The brightnesses in turn, each pass to the other value: every
                        // report is a change, so every one is an event.
                        var values: [(CharacteristicRef, CharacteristicValue)] = []
                        values.reserveCapacity(batch)
                        for item in 0..<batch {
                            let index = number * batch + item
                            let pass = index / accessories
                            values.append((brightness[index % accessories], .int(pass % 2 == 0 ? 10 : 20)))
                        }
                        let seq = try await provider.report(inOrder: values)
                        lastSeq.max(seq)
                    }
                }
                try await group.waitForAll()
                finalSeq.max(lastSeq.value)
            }
        }
        var received = 0
        var seen: UInt64 = 0
        // Until the last report's events are in (its sequence number is known once it is acknowledged).
        while finalSeq.value == 0 || seen < finalSeq.value {
            guard let message = try await subscription.next() else { break }
            for event in message.events {
                if case .value(let change) = event.body { received += 1 + Int(change.merged) }
                seen = max(seen, event.seq)
            }
            if let marker = message.marker, marker.kind != .heartbeat {
                throw BenchError("the subscriber was sent a \(marker.kind) marker; it fell behind")
            }
        }
        let elapsed = seconds(clock.now - started)
        try await reporter.value
        await client.close()
        return Figures(
            cached: Percentiles(cachedSamples), write: Percentiles(writeSamples), fresh: Percentiles(freshSamples),
            eventsPerSecond: Double(received) / elapsed)
    }
}

/// The highest sequence number acknowledged so far.
final class SeqBox: Sendable {
    private let seq = Atomic<UInt64>(0)
    var value: UInt64 { seq.load(ordering: .acquiring) }
    func max(_ value: UInt64) { seq.max(value, ordering: .acquiringAndReleasing) }
}
