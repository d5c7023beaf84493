internal import CBenchFloor
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeServer
internal import HomeTesting
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// One part of the benchmark alone, to run under `perf record`.
enum Profile {
    static let parts = [
        "cread", "nio-echo", "blocking", "blocking-here", "async", "cpu", "write-cpu", "stream",
        "stream-c", "fanout-c", "fanout-nio",
    ]

    /// `homed-bench profile cread|nio-echo|blocking|blocking-here|async|cpu|write-cpu|stream|stream-c|fanout-c|fanout-nio [N]`: one part alone, for `perf record`.
    static func run(part: String, count: Int?) async throws {
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        switch part {
        case "cread":
            let (ping, read) = try await Bench.cClientRoundTrips(directory: directory, iterations: count ?? 200_000)
            print("C ping p50 \(us(ping.p50)), C read p50 \(us(read.p50))")
        case "nio-echo":
            let figures = try await NIOEchoFloor.roundTrips(directory: directory, iterations: count ?? 200_000)
            print("NIO echo p50 \(us(figures.p50))")
        case "blocking":
            let figures = try await Bench.homedBlockingRoundTrip(directory: directory, iterations: count ?? 200_000)
            print("blocking p50 \(us(figures.p50))")
        case "async":
            let figures = try await Bench.homedRoundTrip(directory: directory, iterations: count ?? 200_000)
            print("async p50 \(us(figures.p50))")
        case "blocking-here":
            // The blocking client on the calling (cooperative) thread, as the C client runs.
            let server = try await Bench.startServer(directory: directory)
            let brightness = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
            let client = try BlockingHomeClient(path: server.configuration.socketPath, name: "here")
            for _ in 0..<1000 { _ = try client.read([brightness]) }
            var latencies: [Double] = []
            let clock = ContinuousClock()
            for _ in 0..<(count ?? 50_000) {
                let start = clock.now
                _ = try client.read([brightness])
                latencies.append(nanoseconds(clock.now - start))
            }
            print("blocking-here p50 \(us(Percentiles(latencies).p50))")
            await server.stop()
        case "fanout-c":
            // 1000 C subscribers at 1000 changes/s for 3 s (or N subscribers).
            let figures = try await Fanout.homedFanoutC(
                directory: directory, subscribers: count ?? 1000, rate: 1000, durationMs: 3000)
            if let latency = figures.latency { print("fanout-c p50 \(us(latency.p50)) p99 \(us(latency.p99))") }
        case "fanout-nio":
            // The bare SwiftNIO fan-out floor alone: N C subscribers (1000) at 1000 changes/s for 3 s.
            let figures = try await NIOFanoutFloor.run(
                directory: directory, subscribers: count ?? 1000, rate: 1000, durationMs: 3000)
            if let latency = figures.latency { print("fanout-nio p50 \(us(latency.p50)) p99 \(us(latency.p99))") }
        case "write-cpu":
            // HomeStore.write alone (no sockets, no subscribers): batches of 1000 changes.
            let store = HomeStore(graph: demoHome())
            let brightness = try store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
            let batches = (0..<2).map { parity in
                WriteCharacteristicsRequest(
                    writes: (0..<1000).map { offset in
                        CharacteristicWrite(
                            characteristicID: brightness, value: .uint(10 + UInt64((offset + parity) % 2)))
                    })
            }
            let encoded = batches.map { $0.encoded() }
            let n = count ?? 2000
            let clock = ContinuousClock()
            var decode = Duration.zero
            var write = Duration.zero
            var reply = Duration.zero
            var total = 0
            for index in 0..<n {
                let t0 = clock.now
                let request = try WriteCharacteristicsRequest(wire: encoded[index % 2])
                let t1 = clock.now
                let outcome = store.write(request.writes, origin: .simulator)
                let response = WriteCharacteristicsResponse(results: outcome.results, seq: outcome.seq)
                let t2 = clock.now
                var payload = ByteBuffer()
                response.encode(into: &payload)
                let t3 = clock.now
                total &+= payload.readableBytes
                decode += t1 - t0
                write += t2 - t1
                reply += t3 - t2
            }
            for (name, d) in [("request decode", decode), ("store.write", write), ("response encode", reply)] {
                print(name, String(format: "%.0f ns per write", nanoseconds(d) / Double(n * 1000)))
            }
            print(total)
        case "cpu":
            // The server's CPU work for one cached read, without sockets or NIO.
            let store = HomeStore(graph: demoHome())
            let brightness = try store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
            let open = WireFrame(
                callID: 1,
                body: .open(
                    CallOpen(
                        method: HomeMethods.readCharacteristics.name,
                        request: ReadCharacteristicsRequest(characteristicIDs: [brightness]).encoded()))
            ).encoded()
            var body = open
            body.moveReaderIndex(forwardBy: 4)
            let n = count ?? 1_000_000
            let clock = ContinuousClock()
            var stages = [Duration](repeating: .zero, count: 5)
            var total = 0
            for _ in 0..<n {
                let t0 = clock.now
                let frame = try WireFrame(decoding: body)
                let t1 = clock.now
                guard case .open(let call) = frame.body, call.method == HomeMethods.readCharacteristics.name else {
                    fatalError()
                }
                let request = try ReadCharacteristicsRequest(wire: call.request)
                let t2 = clock.now
                let outcome = store.read(request.characteristicIDs)
                let response = ReadCharacteristicsResponse(reads: outcome.reads, seq: outcome.seq)
                let t3 = clock.now
                var payload = ByteBuffer()
                response.encode(into: &payload)
                let t4 = clock.now
                var out = ByteBuffer()
                WireFrame.encodeMessage(callID: frame.callID, payload: payload, into: &out)
                WireFrame.encodeOKStatus(callID: frame.callID, into: &out)
                let t5 = clock.now
                total &+= out.readableBytes
                stages[0] += t1 - t0
                stages[1] += t2 - t1
                stages[2] += t3 - t2
                stages[3] += t4 - t3
                stages[4] += t5 - t4
            }
            for (name, d) in zip(
                ["frame decode", "method+request decode", "store.read", "response encode", "frames encode"], stages)
            {
                print(name, String(format: "%.0f ns", nanoseconds(d) / Double(n)))
            }
            print(total)
        case "stream", "stream-c":
            let figures = try await Bench.homedStream(
                directory: directory, events: count ?? 5_000_000,
                writer: part == "stream" ? .homeClient : .cPeer)
            print("\(rate(figures.eventsPerSecond)) events/s")
        default:
            throw BenchError("unknown part '\(part)'; one of \(parts.joined(separator: ", "))")
        }
    }

}
