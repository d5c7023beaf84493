internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeServer
internal import HomeStorage
internal import HomeTesting
internal import HomeWire
internal import Logging

/// `homed-bench history`: what keeping every event costs and what asking the
/// past takes.
///
/// - The event rate to one subscriber and a single write's round trip, on a SQLite
///   file with the stored history off and on, alternately in one run.
/// - A simulated year of a 100-accessory home (`--days`, `--events-per-day`, one
///   commit per accessory report of several values): the file's size per million
///   events, ReadHistory's round trip for the questions people ask, and a purge of
///   a month: the longest step, which is the longest any writer waits for it.
enum HistoryBench {
    static func run(events: Int, roundTrips: Int, runs: Int, days: Int, eventsPerDay: Int) async throws {
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if events > 0 { try await cost(directory: directory, events: events, roundTrips: roundTrips, runs: runs) }
        if days > 0 { try await queries(directory: directory, days: days, eventsPerDay: eventsPerDay) }
    }

    static func cost(directory: String, events: Int, roundTrips: Int, runs: Int) async throws {
        var rates: (off: [Double], on: [Double]) = ([], [])
        var trips: (off: [Percentiles], on: [Percentiles]) = ([], [])
        for run in 0..<runs {
            for history in [false, true] {
                FileHandle.standardError.write(Data("run \(run + 1): history \(history ? "on" : "off")\n".utf8))
                let figures = try await Bench.homedStream(
                    directory: directory + "/c\(run)-\(history)", events: events, database: true, history: history)
                let trip = try await Durability.writeRoundTrip(
                    directory: directory + "/r\(run)-\(history)", iterations: roundTrips, database: true,
                    history: history)
                if history {
                    rates.on.append(figures.eventsPerSecond)
                    trips.on.append(trip)
                } else {
                    rates.off.append(figures.eventsPerSecond)
                    trips.off.append(trip)
                }
            }
        }
        let off = rates.off.sorted()[runs / 2]
        let on = rates.on.sorted()[runs / 2]
        print("Stored history, durable daemon, alternately; median of \(runs) runs:")
        print(
            "  value events to one subscriber (batches of 1000 writes): off \(rate(off))/s, on \(rate(on))/s, "
                + String(format: "loss %.1f%%", (1 - on / off) * 100))
        let tripOff = median(trips.off)
        let tripOn = median(trips.on)
        print(
            "  a single write's round trip p50 / p99: off \(us(tripOff.p50)) / \(us(tripOff.p99)), "
                + "on \(us(tripOn.p50)) / \(us(tripOn.p99))")
    }

    static func queries(directory: String, days: Int, eventsPerDay: Int) async throws {
        let path = directory + "/year.sqlite"
        // Bulbs 0–99 are a provider's; bulb 100 is the daemon's own, for the writer during the purge.
        let graph = ScaleHome.make(accessories: 101, rooms: 10, daemonOwned: 1)
        let writerLamp = try graph.resolve(path: "Room 0/Bulb 100/Brightness")
        func id(_ path: String) throws -> ObjectID { try graph.resolve(path: path) }
        // Bulb 0's On is the back door: four changes a day. Bulb 1's Hue changed in
        // the first week only: its last change is months back. The rest report.
        let door = try id("Room 0/Bulb 0/On")
        let cold = try id("Room 1/Bulb 1/Hue")
        let busy = try id("Room 2/Bulb 2/Brightness")
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        let startMs = nowMs - Int64(days) * 86_400_000
        let perCommit = 5
        let commitsPerDay = max(eventsPerDay / perCommit, 1)
        let clock = ContinuousClock()
        let built = clock.now
        var seq: UInt64 = 0
        var events = 0
        do {
            let database = try HomeDatabase.open(path: path)
            defer { database.close() }
            try database.saveLayout(from: HomeGraph(), to: graph)
            try database.beginJournal(id: "bench")
            let origin = Origin(kind: .provider, connectionID: 1, name: "zigbee2mqtt")
            func event(_ characteristic: ObjectID, _ value: CharacteristicValue, at timeMs: Int64) -> HomeEvent {
                seq += 1
                let target = graph.characteristics[characteristic]!
                return HomeEvent(
                    seq: seq, timeMs: timeMs, origin: origin,
                    body: .value(
                        ValueChange(
                            accessoryID: target.accessoryID, serviceID: target.serviceID,
                            characteristicID: characteristic,
                            value: value)))
            }
            let bulbs = (2..<100).map { number in
                (try? graph.resolve(path: "Room \(number % 10)/Bulb \(number)/Brightness")) ?? busy
            }
            for day in 0..<days {
                for commit in 0..<commitsPerDay {
                    let timeMs = startMs + Int64(day) * 86_400_000 + Int64(commit) * 86_400_000 / Int64(commitsPerDay)
                    var batch: [HomeEvent] = []
                    if commit % (commitsPerDay / 4 + 1) == 0 {
                        batch.append(event(door, .bool(commit % 2 == 0), at: timeMs))
                    } else if day < 7 && commit % 50 == 0 {
                        batch.append(event(cold, .float(Double(commit % 360)), at: timeMs))
                    } else {
                        let bulb = bulbs[commit % bulbs.count]
                        for step in 0..<perCommit {
                            batch.append(event(bulb, .int(Int64((commit + step) % 101)), at: timeMs))
                        }
                    }
                    events += batch.count
                    // Kept 5 days past their time (so that the purge below is of the oldest month
                    // alone, never of the writer's new events, kept the default 10 days from now).
                    try database.appendEvents(batch, keepUntilMs: timeMs + 5 * 86_400_000)
                }
            }
        }
        let buildSeconds = seconds(clock.now - built)
        let size = ["", "-wal"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0)
        }
        print(
            "A simulated \(days) days of a 100-accessory home: \(events) events in \(seq) numbers, "
                + String(
                    format: "written in %.1f s; file %.1f MiB, %.1f MiB per million events", buildSeconds,
                    Double(size) / 1_048_576, Double(size) / 1_048_576 / (Double(events) / 1_000_000)))

        let database = try HomeDatabase.open(path: path)
        let loaded = try database.load()
        let store = HomeStore(graph: loaded, database: database, history: true)
        var configuration = ServerConfiguration(socketPath: directory + "/homed.sock")
        configuration.maxConnections = 16
        var logger = Logger(label: "homed-bench")
        logger.logLevel = .error
        let server = HomeServer(store: store, configuration: configuration, logger: logger, group: Bench.daemonGroup)
        try await server.start()
        let client = try await HomeClient.connect(to: configuration.socketPath, name: "bench-history")
        func time(_ label: String, _ iterations: Int = 50, _ ask: () async throws -> Int) async throws {
            var samples: [Double] = []
            var answered = 0
            for _ in 0..<iterations {
                let start = clock.now
                answered = try await ask()
                samples.append(
                    Double((clock.now - start).components.attoseconds / 1_000_000_000)
                        + Double((clock.now - start).components.seconds) * 1e9)
            }
            let figures = Percentiles(samples)
            print(
                "  \(label.padding(toLength: 52, withPad: " ", startingAt: 0))p50 \(ms(figures.p50)) "
                    + "p99 \(ms(figures.p99))  (\(answered) events)")
        }
        print("ReadHistory round trips over it:")
        for (label, characteristic) in [
            ("last change of a sensor reporting every minutes", busy), ("last change of the door (4 a day)", door),
            ("last change of one unchanged for \(max(days - 7, 0)) days", cold),
        ] {
            try await time(label, 20) {
                var request = ReadHistoryRequest(
                    filter: SubscriptionFilter(characteristicIDs: [characteristic], kinds: [.valueChanged]), limit: 1,
                    newestFirst: true)
                while true {
                    let page = try await client.readHistory(request)
                    if !page.events.isEmpty || page.nextSeq == 0 { return page.events.count }
                    request.beforeSeq = page.nextSeq
                }
            }
        }
        let dayStart = nowMs - Int64(min(100, days / 2)) * 86_400_000
        try await time("one day of one sensor, \(min(100, days / 2)) days ago") {
            var request = ReadHistoryRequest(
                filter: SubscriptionFilter(characteristicIDs: [busy]), sinceMs: dayStart,
                untilMs: dayStart + 86_400_000,
                limit: 10_000)
            var count = 0
            while true {
                let page = try await client.readHistory(request)
                count += page.events.count
                if page.nextSeq == 0 { return count }
                request.afterSeq = page.nextSeq
            }
        }
        try await time("the last 100 events of a room") {
            let room = try loaded.resolve(path: "Room 3")
            return try await client.readHistory(
                ReadHistoryRequest(filter: SubscriptionFilter(roomIDs: [room]), limit: 100, newestFirst: true)
            ).events.count
        }
        try await writerDuringPurge(
            client: client, store: store, characteristic: writerLamp,
            // Never past now: the writer's own events (kept days from now) must not
            // expire under the purge, or it chases the writer (a short --days).
            cutoffMs: min(startMs + 35 * 86_400_000, nowMs))
        await client.close()
        await server.stop()
        database.close()
    }

    /// The oldest month purged by the daemon's own upkeep (`HomeStore.purgeHistory`,
    /// in its steps with its pauses) while a client writes back to back over the
    /// socket, and a subscriber of what it writes receives each change. The purge
    /// runs in alternate half-seconds (it waits in its pause
    /// through the others), so that the machine's noise falls on the writes with and
    /// without it alike: the slowest round trips and deliveries in the purge's
    /// half-seconds, next to the others', are what a purge costs a writer and a
    /// subscriber.
    static func writerDuringPurge(
        client: HomeClient, store: HomeStore, characteristic: ObjectID, cutoffMs: Int64
    ) async throws {
        let clock = ContinuousClock()
        let began = clock.now
        let window = Duration.milliseconds(500)
        /// Whether `instant` falls in one of the purge's half-seconds.
        @Sendable func purgeWindow(_ instant: ContinuousClock.Instant) -> Bool {
            Int((instant - began) / window) % 2 == 0
        }
        let purging = Task {
            let start = clock.now
            let purged = try await store.purgeHistory(
                nowMs: cutoffMs,
                pause: {
                    try? await Task.sleep(for: .milliseconds(5))
                    while !purgeWindow(clock.now) { try? await Task.sleep(for: .milliseconds(5)) }
                })
            return (purged, seconds(clock.now - start))
        }
        let finished = SeqBox()
        let watcher = Task {
            _ = try? await purging.value
            finished.max(1)
        }
        // A subscriber of the lamp: each write's event, timed from the write's start
        // to its arrival (one at a time, so nothing is merged).
        var subscription = client.subscribe(
            SubscribeRequest(
                filter: SubscriptionFilter(characteristicIDs: [characteristic], kinds: [.valueChanged]),
                queueLimit: 1024, heartbeatMs: 1000)
        ).makeAsyncIterator()
        _ = try await subscription.next()
        var during = WriterStalls()
        var between = WriterStalls()
        var deliveredDuring = WriterStalls()
        var deliveredBetween = WriterStalls()
        var value: Int64 = 0
        while finished.value == 0 {
            value += 1
            let start = clock.now
            _ = try await client.write(.int(value % 101), to: characteristic)
            let end = clock.now
            var delivered = false
            while !delivered, let message = try await subscription.next() {
                delivered = message.events.contains { if case .value = $0.body { true } else { false } }
            }
            let arrived = clock.now
            if purgeWindow(start) && purgeWindow(arrived) {
                during.add(nanoseconds(end - start))
                deliveredDuring.add(nanoseconds(arrived - start))
            } else if !purgeWindow(start) && !purgeWindow(arrived) {
                between.add(nanoseconds(end - start))
                deliveredBetween.add(nanoseconds(arrived - start))
            }
        }
        _ = await watcher.value
        let (purged, purgeSeconds) = try await purging.value
        print(
            String(
                format: "A purge of the oldest month by the daemon's upkeep: %d commits in %.1f s (in alternate "
                    + "half-seconds), while a client wrote back to back:", purged, purgeSeconds))
        print("  writes in the purge's half-seconds (\(during.samples.count)): \(during.summary)")
        print("  writes in the others (\(between.samples.count)):            \(between.summary)")
        print("  a subscriber's event, from the write's start, in the purge's half-seconds: \(deliveredDuring.summary)")
        print(
            "  a subscriber's event, from the write's start, in the others:               \(deliveredBetween.summary)")
    }

    /// A writer's round trips: percentiles and the slowest.
    struct WriterStalls {
        var samples: [Double] = []
        mutating func add(_ sample: Double) { samples.append(sample) }
        var summary: String {
            let sorted = samples.sorted()
            guard !sorted.isEmpty else { return "no writes" }
            func at(_ fraction: Double) -> Double {
                sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
            }
            return "p50 \(us(at(0.5))), p99 \(us(at(0.99))), p99.9 \(us(at(0.999))), slowest \(ms(sorted.last!)); "
                + "\(sorted.filter { $0 > 10_000_000 }.count) over 10 ms"
        }
    }

    static func ms(_ ns: Double) -> String { String(format: "%.2f ms", ns / 1_000_000) }
}
