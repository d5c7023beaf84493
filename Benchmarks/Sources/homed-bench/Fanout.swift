internal import CBenchFloor
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeServer
@_spi(Wire) internal import HomeWire
internal import NIOCore
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homed-bench fanout [--duration-ms N]`: change-to-delivery latency with 1, 100
/// and 1000 subscribers (each its own HomeClient connection) at 1000 and 100
/// changes/s, next to `cbf_fanout` (64-byte frames) with the same counts and rates;
/// plus resident memory per idle subscription.
///
/// The writer publishes Brightness changes through `HomeStore.write` in-process,
/// recording a ContinuousClock instant per change (keyed by the change's seq); each
/// subscriber stamps every event on receipt; latency = receipt - publication.
enum Fanout {
    static let subscriberCounts = [1, 100, 1000]
    static let rates = [1000, 100]

    static func run(durationMs: Int) async throws {
        let limit = raiseFileLimit()
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print(
            "homed-bench fanout: \(durationMs) ms per point, \(ProcessInfo.processInfo.activeProcessorCount) cores, RLIMIT_NOFILE \(limit)"
        )
        print(
            "  (latency = receipt by the subscriber - publication in HomeStore.write, both by CLOCK_MONOTONIC; in-process server."
        )
        print("   Each point runs homed twice: read by C subscriber threads like the floor's (the daemon's own cost),")
        print("   and by HomeClient connections in this process (end to end, Swift client code sharing the two cores))")
        print("")

        try await idleMemory(directory: directory + "/idle", subscriptions: 1000)
        print("")

        for subscribers in subscriberCounts {
            for rate in rates {
                let label = "\(subscribers) sub x \(rate)/s"
                var floor: Percentiles?
                var floorNote = ""
                do {
                    let (percentiles, count, capacity) = try floorFanout(
                        directory: directory, subscribers: subscribers,
                        rate: rate, durationMs: durationMs)
                    floor = percentiles
                    floorNote = count == capacity ? "" : " (lost \(capacity - count))"
                } catch {
                    floorNote = "floor failed: \(error)"
                }
                let bareNIO = try await NIOFanoutFloor.run(
                    directory: directory, subscribers: subscribers, rate: rate,
                    durationMs: durationMs)
                let cSubscribers = try await homedFanoutC(
                    directory: directory + "/c\(subscribers)-\(rate)",
                    subscribers: subscribers, rate: rate, durationMs: durationMs)
                let homed = try await homedFanout(
                    directory: directory + "/f\(subscribers)-\(rate)", subscribers: subscribers,
                    rate: rate, durationMs: durationMs)
                print("\(label): \(homed.changes) changes, \(subscribers * homed.changes) deliveries expected")
                if let floor {
                    print(row("floor p50 / p99", "\(us(floor.p50)) / \(us(floor.p99))\(floorNote)"))
                } else {
                    print(row("floor", floorNote))
                }
                report(
                    "bare SwiftNIO fan-out, C subscribers (what NIO costs here)", bareNIO, subscribers: subscribers,
                    floor: floor, durationMs: durationMs)
                report("C subscribers", cSubscribers, subscribers: subscribers, floor: floor, durationMs: durationMs)
                report("HomeClient", homed, subscribers: subscribers, floor: floor, durationMs: durationMs)
                print("")
            }
        }
    }

    /// Prints one homed variant of a point: latency, ratios to the floor, delivery.
    static func report(_ variant: String, _ homed: Figures, subscribers: Int, floor: Percentiles?, durationMs: Int) {
        print("  \(variant):")
        if let latency = homed.latency {
            print(row("  p50 / p99", "\(us(latency.p50)) / \(us(latency.p99))"))
            if let floor {
                print(
                    row(
                        "  ratio p50 / p99",
                        String(format: "%.1fx / %.1fx", latency.p50 / floor.p50, latency.p99 / floor.p99)))
            }
        } else {
            print(row("  latency", "no latencies recorded"))
        }
        let expected = subscribers * homed.changes
        let ok = homed.delivered == expected && homed.merged == 0 && homed.gaps == 0 && homed.complete == subscribers
        print(
            row(
                "  delivery",
                "\(homed.delivered)/\(expected) events, merged \(homed.merged), gap/resync markers \(homed.gaps), "
                    + "\(homed.complete)/\(subscribers) subscribers complete, write errors \(homed.unchanged)"
                    + (ok ? " -> nothing lost" : " -> LOSS/INCOMPLETE")))
        if homed.timedOut {
            print(
                row(
                    "",
                    String(
                        format: "did not finish within the deadline (%.1f s after the last change); "
                            + "homed could not keep up at this point", homed.graceSeconds)))
        }
        print(
            row(
                "  wall time",
                String(
                    format: "%.2f s (writer took %.2f s: %.0f changes/s achieved", homed.wallSeconds,
                    homed.writerSeconds, Double(homed.changes) / homed.writerSeconds)
                    + (homed.writerSeconds > Double(durationMs) / 1000 * 1.05 ? ", BELOW target)" : ")")))
    }

    // MARK: Memory

    static func idleMemory(directory: String, subscriptions: Int) async throws {
        let server = try await Bench.startServer(directory: directory, maxConnections: subscriptions + 64)
        let path = server.configuration.socketPath
        let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        // Warm up the client and server paths once so their one-time allocations are not counted.
        let warm = try await HomeClient.connect(to: path, name: "warm")
        let warmSubscription = warm.subscribe(
            SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness])))
        var warmIterator = warmSubscription.makeAsyncIterator()
        _ = try await warmIterator.next()
        try await Task.sleep(for: .milliseconds(200))
        let before = residentKiB()

        let ready = Counter()
        var clients: [HomeClient] = []
        clients.reserveCapacity(subscriptions)
        for index in 0..<subscriptions {
            clients.append(try await HomeClient.connect(to: path, name: "idle-\(index)"))
        }
        let holders = clients.map { client in
            Task(executorPreference: client.taskExecutor) {
                let subscription = client.subscribe(
                    SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness])))
                var iterator = subscription.makeAsyncIterator()
                do {
                    _ = try await iterator.next()  // SUBSCRIBED
                    ready.add()
                    while try await iterator.next() != nil {}
                } catch {}
            }
        }
        try await waitFor(ready, count: subscriptions, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(300))
        let after = residentKiB()
        let subscribed = server.store.subscriptionCount
        print("Memory per idle subscription (\(subscriptions) connections, one Brightness subscription each):")
        print(
            row("VmRSS before / after", "\(before) KiB / \(after) KiB (\(subscribed) subscriptions open on the server)")
        )
        print(
            row(
                "per subscription",
                String(format: "%.1f KiB", Double(after - before) / Double(subscriptions))
                    + " (client + server side: the server runs in this process)"))
        for task in holders { task.cancel() }
        for client in clients { await client.close() }
        for task in holders { await task.value }
        await warm.close()
        await server.stop()
    }

    // MARK: Floor

    static func floorFanout(directory: String, subscribers: Int, rate: Int, durationMs: Int) throws
        -> (Percentiles, Int, Int)
    {
        let capacity = cbf_fanout_capacity(Int32(subscribers), Int32(rate), Int32(durationMs))
        var latencies = [Double](repeating: 0, count: Int(capacity))
        var count = 0
        let status = cbf_fanout(directory, Int32(subscribers), Int32(rate), Int32(durationMs), 64, &latencies, &count)
        guard status == 0 else { throw BenchError("cbf_fanout failed: \(status)") }
        guard count > 0 else { throw BenchError("cbf_fanout recorded nothing") }
        return (Percentiles(Array(latencies.prefix(count))), count, Int(capacity))
    }

    // MARK: homed

    struct Receipt: Sendable {
        var seqs: [UInt64] = []
        /// `cbf_now_ns()` when the event's message was parsed.
        var times: [Int64] = []
        var delivered = 0
        var merged = 0
        var gaps = 0
        var complete = false
    }

    struct Figures {
        var changes: Int
        var latency: Percentiles?
        var delivered: Int
        var merged: Int
        var gaps: Int
        var complete: Int
        var unchanged: Int
        var timedOut: Bool
        var graceSeconds: Double
        var wallSeconds: Double
        var writerSeconds: Double
    }

    static func homedFanout(directory: String, subscribers: Int, rate: Int, durationMs: Int) async throws -> Figures {
        let (server, brightness) = try await startFanoutServer(directory: directory, subscribers: subscribers)
        let store = server.store
        let changes = max(1, rate * durationMs / 1000)
        var clients: [HomeClient] = []
        clients.reserveCapacity(subscribers)
        for index in 0..<subscribers {
            clients.append(try await HomeClient.connect(to: server.configuration.socketPath, name: "fanout-\(index)"))
        }
        let ready = Counter()
        let receivers = clients.map { client in
            Task(executorPreference: client.taskExecutor) {
                await receive(client: client, brightness: brightness, expected: changes, ready: ready)
            }
        }
        try await waitFor(ready, count: subscribers, timeout: .seconds(60))

        let clock = ContinuousClock()
        let start = clock.now
        let writer = try await publish(store: store, brightness: brightness, changes: changes, rate: rate)

        // Everything should arrive soon after the last change; a point that cannot keep
        // up is cut off (its connections closed) rather than left to run for minutes.
        let grace = Duration.seconds(max(10, durationMs / 1000 * 3))
        let finished = Counter()
        let watchdog = Task {
            try? await Task.sleep(for: grace)
            if Task.isCancelled { return }
            finished.add()
            for client in clients { await client.close() }
        }
        var receipts: [Receipt] = []
        for receiver in receivers { receipts.append(await receiver.value) }
        watchdog.cancel()
        let wallSeconds = seconds(clock.now - start)

        var latencies: [Double] = []
        latencies.reserveCapacity(subscribers * changes)
        var figures = Figures(
            changes: changes, latency: nil, delivered: 0, merged: 0, gaps: 0, complete: 0,
            unchanged: writer.unchanged, timedOut: finished.value > 0, graceSeconds: seconds(grace),
            wallSeconds: wallSeconds, writerSeconds: writer.seconds)
        for receipt in receipts {
            figures.delivered += receipt.delivered
            figures.merged += receipt.merged
            figures.gaps += receipt.gaps
            if receipt.complete { figures.complete += 1 }
            for (seq, time) in zip(receipt.seqs, receipt.times) {
                if let publishedAt = writer.published[seq] { latencies.append(Double(time - publishedAt)) }
            }
        }
        if !latencies.isEmpty { figures.latency = Percentiles(latencies) }
        for client in clients { await client.close() }
        await server.stop()
        return figures
    }

    /// A daemon with room for the subscribers, and the Brightness characteristic the
    /// writer changes, set to a known starting value so that every later write (51,
    /// 52, …, wrapping at 100) changes it.
    static func startFanoutServer(directory: String, subscribers: Int) async throws -> (HomeServer, ObjectID) {
        let server = try await Bench.startServer(
            directory: directory, queueLimit: 65_536, maxConnections: subscribers + 64)
        let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        _ = server.store.write(
            [CharacteristicWrite(characteristicID: brightness, value: .int(50))],
            origin: .simulator, enforceWritable: false)
        return (server, brightness)
    }

    struct Publication {
        /// `cbf_now_ns()` just before each change's write, by its sequence number.
        var published: [UInt64: Int64]
        var unchanged: Int
        var seconds: Double
    }

    /// Publishes `changes` Brightness changes at `rate` through `HomeStore.write`
    /// (in-process, as a provider would), on an absolute schedule like the floor's.
    static func publish(store: HomeStore, brightness: ObjectID, changes: Int, rate: Int) async throws -> Publication {
        let clock = ContinuousClock()
        var published: [UInt64: Int64] = [:]
        published.reserveCapacity(changes)
        var unchanged = 0
        let interval = Duration.nanoseconds(1_000_000_000 / Int64(rate))
        var lastSeq = store.lastSeq
        let start = clock.now
        for index in 0..<changes {
            let target = start + interval * index
            if clock.now < target { try await Task.sleep(until: target, clock: clock) }
            let value = CharacteristicValue.int(Int64((51 + index) % 101))
            let publishedAt = cbf_now_ns()
            let response = store.write(
                [CharacteristicWrite(characteristicID: brightness, value: value)],
                origin: .simulator, enforceWritable: false)
            if response.seq == lastSeq { unchanged += 1 } else { published[response.seq] = publishedAt }
            lastSeq = response.seq
        }
        return Publication(published: published, unchanged: unchanged, seconds: seconds(clock.now - start))
    }

    /// The same fan-out read by the floor's kind of subscriber: C threads with
    /// blocking sockets that decode each stream message with protoc-c's code. The
    /// daemon's own cost, without Swift client code sharing the two cores.
    static func homedFanoutC(directory: String, subscribers: Int, rate: Int, durationMs: Int) async throws -> Figures {
        let (server, brightness) = try await startFanoutServer(directory: directory, subscribers: subscribers)
        let store = server.store
        do {
            let figures = try await cSubscribersFanout(
                socketPath: server.configuration.socketPath, subscriptionTo: brightness, subscribers: subscribers,
                rate: rate,
                durationMs: durationMs
            ) { changes in
                try await publish(store: store, brightness: brightness, changes: changes, rate: rate)
            }
            await server.stop()
            return figures
        } catch {
            await server.stop()
            throw error
        }
    }

    /// `subscribers` C subscriber threads subscribe on `socketPath` to one
    /// characteristic and count value events; once all are live, `publish` makes
    /// the changes and says when it published each.
    static func cSubscribersFanout(
        socketPath: String, subscriptionTo characteristic: ObjectID, subscribers: Int, rate: Int,
        durationMs: Int, publish: (Int) async throws -> Publication
    ) async throws -> Figures {
        let changes = max(1, rate * durationMs / 1000)
        var setup = WireFrame(callID: 0, body: .hello(Hello(clientName: "fanout-c"))).encoded()
        WireFrame(
            callID: 1,
            body: .open(
                CallOpen(
                    method: HomeMethods.subscribe.name,
                    request: SubscribeRequest(
                        filter: SubscriptionFilter(characteristicIDs: [characteristic]), queueLimit: 65_536
                    ).encoded()))
        )
        .encode(into: &setup)
        let bytes = Array(setup.readableBytesView)
        var error: Int32 = 0
        guard let readers = cbf_subscribers_start(socketPath, Int32(subscribers), bytes, bytes.count, changes, &error)
        else {
            throw BenchError("cbf_subscribers_start failed: \(error)")
        }
        defer { cbf_subscribers_free(readers) }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while cbf_subscribers_ready(readers) < subscribers {
            guard clock.now < deadline else {
                _ = cbf_subscribers_join(readers, 0)
                throw BenchError("only \(cbf_subscribers_ready(readers)) of \(subscribers) C subscriptions became live")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        let start = clock.now
        let writer = try await publish(changes)
        let graceMs = max(10, durationMs / 1000 * 3) * 1000
        let status = cbf_subscribers_join(readers, Int32(graceMs))
        let wallSeconds = seconds(clock.now - start)
        var latencies: [Double] = []
        latencies.reserveCapacity(subscribers * changes)
        var delivered = 0
        for index in 0..<subscribers {
            var seqs: UnsafePointer<UInt64>?
            var times: UnsafePointer<Int64>?
            let count = cbf_subscribers_records(readers, Int32(index), &seqs, &times)
            delivered += count
            guard count > 0, let seqs, let times else { continue }
            for record in 0..<count {
                if let publishedAt = writer.published[seqs[record]] {
                    latencies.append(Double(times[record] - publishedAt))
                }
            }
        }
        let merged = cbf_subscribers_merged(readers)
        // join reports the first failure; 0 means every subscriber got all it expected.
        let complete = status == 0 ? subscribers : 0
        return Figures(
            changes: changes, latency: latencies.isEmpty ? nil : Percentiles(latencies), delivered: delivered,
            merged: merged, gaps: cbf_subscribers_markers(readers), complete: complete,
            unchanged: writer.unchanged, timedOut: status == -ETIMEDOUT, graceSeconds: Double(graceMs) / 1000,
            wallSeconds: wallSeconds, writerSeconds: writer.seconds)
    }

    /// One subscriber: waits for SUBSCRIBED, then stamps every value event until it
    /// has `expected` changes (delivered or merged) or the stream ends.
    static func receive(client: HomeClient, brightness: ObjectID, expected: Int, ready: Counter) async -> Receipt {
        let subscription = client.subscribe(
            SubscribeRequest(
                filter: SubscriptionFilter(characteristicIDs: [brightness]), queueLimit: 65_536))
        var iterator = subscription.makeAsyncIterator()
        var receipt = Receipt()
        receipt.seqs.reserveCapacity(expected)
        receipt.times.reserveCapacity(expected)
        var subscribed = false
        do {
            while receipt.delivered + receipt.merged < expected {
                guard let message = try await iterator.next() else { break }
                let now = cbf_now_ns()
                if let marker = message.marker {
                    switch marker.kind {
                    case .subscribed:
                        if !subscribed {
                            subscribed = true
                            ready.add()
                        }
                    case .gap, .resync: receipt.gaps += 1
                    default: break
                    }
                }
                for event in message.events {
                    guard case .value(let change) = event.body else { continue }
                    receipt.delivered += 1
                    receipt.merged += Int(change.merged)
                    receipt.seqs.append(event.seq)
                    receipt.times.append(now)
                }
            }
            receipt.complete = receipt.delivered + receipt.merged >= expected
        } catch {
            receipt.complete = false
        }
        if !subscribed { ready.add() }
        return receipt
    }

    // MARK: Helpers

    final class Counter: Sendable {
        private let atomic = Atomic<Int>(0)
        func add() { atomic.wrappingAdd(1, ordering: .relaxed) }
        var value: Int { atomic.load(ordering: .relaxed) }
    }

    static func waitFor(_ counter: Counter, count: Int, timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while counter.value < count {
            guard clock.now < deadline else {
                throw BenchError("only \(counter.value) of \(count) subscriptions became live")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the new soft limit.
    static func raiseFileLimit() -> UInt64 {
        var limit = rlimit()
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
        _ = getrlimit(resource, &limit)
        return UInt64(limit.rlim_cur)
    }
}

/// VmRSS of this process, in KiB (0 where /proc is missing).
func residentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
    return 0
}
