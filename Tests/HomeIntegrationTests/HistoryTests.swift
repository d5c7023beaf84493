import Foundation
import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
import HomeWire
import Testing

/// The home's memory over the wire: ReadHistory, subscriptions that start in the
/// past, and a journal that survives restarts, against real `homed` processes.
@Suite("history", .serialized, .timeLimit(.safetyNet))
struct HistoryTests {
    /// Writes `values` to the lamp's brightness, one write each; returns their seqs.
    private func writeBrightness(_ values: [UInt64], client: HomeClient, brightness: ObjectID) async throws -> [UInt64]
    {
        var seqs: [UInt64] = []
        for value in values { seqs.append(try await client.write(.uint(value), to: brightness).seq) }
        return seqs
    }

    private func brightnessValues(_ events: [HomeEvent]) -> [UInt64] {
        events.compactMap { event in
            guard case .value(let change) = event.body else { return nil }
            switch change.value {
            case .uint(let value): return value
            case .int(let value): return UInt64(value)
            default: return nil
            }
        }
    }

    @Test("ReadHistory pages through one characteristic's changes by seq, either way, and by time")
    func readHistoryPages() async throws {
        let daemon = try DaemonProcess()
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "history")
        let graph = try await client.getHome().graph
        let brightness = graph.id("Living Room/Lamp/Brightness")
        let before = Int64(Date().timeIntervalSince1970 * 1000) - 1
        let seqs = try await writeBrightness([11, 12, 13, 14, 15], client: client, brightness: brightness)
        _ = try await client.write(.bool(false), to: graph.id("Living Room/Lamp/On"))  // not asked for
        let filter = SubscriptionFilter(characteristicIDs: [brightness])
        var request = ReadHistoryRequest(filter: filter, limit: 2)
        var pages: [[UInt64]] = []
        while true {
            let page = try await client.readHistory(request)
            #expect(page.journalID == (try await client.status()).journalID)
            pages.append(brightnessValues(page.events))
            guard page.nextSeq != 0 else { break }
            request.afterSeq = page.nextSeq
        }
        #expect(pages.flatMap { $0 }.suffix(5) == [11, 12, 13, 14, 15])
        #expect(pages.allSatisfy { $0.count <= 2 })
        let newest = try await client.readHistory(ReadHistoryRequest(filter: filter, limit: 3, newestFirst: true))
        #expect(brightnessValues(newest.events) == [15, 14, 13])
        #expect(newest.events.map(\.seq) == Array(seqs.suffix(3).reversed()))
        #expect(newest.nextSeq == seqs[2])
        let since = try await client.readHistory(ReadHistoryRequest(filter: filter, sinceMs: before))
        #expect(brightnessValues(since.events) == [11, 12, 13, 14, 15])
        #expect(since.nextSeq == 0)
        let last = try await client.lastChange(of: brightness)
        #expect(last?.seq == seqs.last)
        #expect(last?.origin.name == "history")
        await client.close()
    }

    @Test("a removed accessory's past is still answered by its characteristic's id; layout changes say who made them")
    func removedAndAudit() async throws {
        let daemon = try DaemonProcess()
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "history")
        let graph = try await client.getHome().graph
        let brightness = graph.id("Living Room/Lamp/Brightness")
        _ = try await writeBrightness([21, 22], client: client, brightness: brightness)
        let removed = try daemon.homectl("remove", "Living Room/Lamp", "--yes")
        #expect(removed.status == 0, "\(removed.stderr)")
        let past = try await client.readHistory(
            ReadHistoryRequest(filter: SubscriptionFilter(characteristicIDs: [brightness])))
        #expect(brightnessValues(past.events).suffix(2) == [21, 22])
        let layout = try await client.readHistory(
            ReadHistoryRequest(filter: SubscriptionFilter(kinds: [.layoutChanged]), newestFirst: true))
        let removal = layout.events.first { event in
            if case .layout(let change) = event.body {
                change.action == .removed && change.object == .accessory
            } else {
                false
            }
        }
        #expect(removal?.origin.kind == .client && removal?.origin.name == "homectl", "\(layout.events.prefix(3))")
        await client.close()
    }

    @Test("bad requests are refused naming the value, nothing read")
    func badRequests() async throws {
        let daemon = try DaemonProcess()
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "history")
        let future = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
        let cases: [(ReadHistoryRequest, String)] = [
            (ReadHistoryRequest(limit: 10_001), "limit 10001 exceeds the largest page, 10000"),
            (ReadHistoryRequest(sinceMs: future), "since_ms \(future) is in the future"),
            (ReadHistoryRequest(sinceMs: 2000, untilMs: 1000), "until_ms 1000 is not after since_ms 2000"),
            (ReadHistoryRequest(afterSeq: 5, beforeSeq: 6), "before_seq 6 leaves no sequence number after after_seq 5"),
        ]
        for (request, message) in cases {
            do {
                _ = try await client.readHistory(request)
                Issue.record("\(request) was answered")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains(message), "\(error.message)")
            }
        }
        var sub = client.subscribe(SubscribeRequest(sinceTimeMs: future)).makeAsyncIterator()
        await #expect(throws: HomeError.self) { _ = try await sub.next() }
        await client.close()
    }

    @Test("a subscription from a time in the past: the stored events, then live, with no gap or duplicate at the seam")
    func subscribeFromThePast() async throws {
        let daemon = try DaemonProcess()
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "history")
        let graph = try await client.getHome().graph
        let brightness = graph.id("Living Room/Lamp/Brightness")
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 1
        let seqs = try await writeBrightness([31, 32, 33], client: client, brightness: brightness)
        var iterator = client.subscribe(
            SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness]), sinceTimeMs: start)
        ).makeAsyncIterator()
        var events: [HomeEvent] = []
        while events.count < 3, let message = try await iterator.next() {
            #expect(message.marker?.kind != .resync)
            events += message.events
        }
        #expect(events.map(\.seq) == seqs)
        let live = try await client.write(.uint(34), to: brightness).seq
        var next: [HomeEvent] = []
        while next.isEmpty, let message = try await iterator.next() { next += message.events }
        #expect(next.map(\.seq) == [live])
        await client.close()
    }

    @Test("after kill -9 and a restart the journal goes on: a resume gets exactly the events it missed, no resync")
    func resumeAcrossKillNine() async throws {
        let directory = TestServer.makeTemporaryDirectory("homed-hist")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var journal = ""
        var resumeFrom: UInt64 = 0
        var missed: [UInt64] = []
        do {
            let daemon = try DaemonProcess(directory: directory)
            let client = try await HomeClient.connect(to: daemon.socketPath, name: "before")
            let brightness = try await client.getHome().graph.id("Living Room/Lamp/Brightness")
            journal = try await client.status().journalID
            resumeFrom = try await client.write(.uint(41), to: brightness).seq
            missed = try await writeBrightness([42, 43], client: client, brightness: brightness)
            await client.close()
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
        }
        let restarted = try DaemonProcess(directory: directory)
        let client = try await HomeClient.connect(to: restarted.socketPath, name: "after")
        #expect(try await client.status().journalID == journal, "the journal continues across the restart")
        let brightness = try await client.getHome().graph.id("Living Room/Lamp/Brightness")
        var iterator = client.subscribe(
            SubscribeRequest(
                filter: SubscriptionFilter(characteristicIDs: [brightness]), sinceSeq: resumeFrom, journalID: journal)
        ).makeAsyncIterator()
        var events: [HomeEvent] = []
        while events.count < 2, let message = try await iterator.next() {
            #expect(message.marker?.kind != .resync, "\(message.marker?.reason ?? "")")
            events += message.events
        }
        #expect(events.map(\.seq) == missed)
        #expect(brightnessValues(events) == [42, 43])
        let after = try await client.write(.uint(44), to: brightness).seq
        #expect(after > missed.last!, "numbers go on from the stored journal, never reused")
        await client.close()
    }

    @Test("with the history off, a restart begins a new journal and a resume resyncs, as documented")
    func historyOff() async throws {
        let directory = TestServer.makeTemporaryDirectory("homed-hoff")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["--demo", "--no-simulator", "--history-retention", "off"]
        var journal = ""
        do {
            let daemon = try DaemonProcess(arguments: arguments, directory: directory)
            let client = try await HomeClient.connect(to: daemon.socketPath, name: "before")
            journal = try await client.status().journalID
            await client.close()
            daemon.child.signal(SIGTERM)
            daemon.child.wait()
        }
        let restarted = try DaemonProcess(arguments: arguments, directory: directory)
        let client = try await HomeClient.connect(to: restarted.socketPath, name: "after")
        #expect(try await client.status().journalID != journal)
        var iterator = client.subscribe(SubscribeRequest(sinceSeq: 1, journalID: journal)).makeAsyncIterator()
        var marker: StreamMarker?
        while marker?.kind != .resync, let message = try await iterator.next() { marker = message.marker ?? marker }
        #expect(marker?.reason.contains("journal changed") == true)
        await client.close()
    }

    @Test("homed refuses a bad --history-retention naming it")
    func badRetention() throws {
        for (value, message) in [
            ("0d", "must be positive"), ("soon", "'soon' is not a duration"),
        ] {
            let result = try run(
                builtExecutable("homed"),
                ["--in-memory", "--socket", "/tmp/homed-never.sock", "--history-retention", value])
            #expect(result.status != 0)
            #expect(
                result.stderr.contains("--history-retention") && result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
