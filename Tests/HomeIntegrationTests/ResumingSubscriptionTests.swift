import Foundation
import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Logging
import Testing

/// `HomeClient.resumingSubscription`: a stream that outlives its connections.
@Suite("resuming subscriptions", .timeLimit(.safetyNet))
struct ResumingSubscriptionTests {
    /// A daemon's listener over `store`, on `path`: stopping it and serving again
    /// keeps the journal, as a daemon that only dropped its connections would.
    static func serve(_ store: HomeStore, on path: String) async throws -> HomeServer {
        let configuration = ServerConfiguration.patient(socketPath: path)
        var logger = Logger(label: "homed-test")
        logger.logLevel = .critical
        let server = HomeServer(store: store, configuration: configuration, logger: logger)
        try await server.start()
        return server
    }

    static func write(_ value: Int64, to id: ObjectID, in store: HomeStore) -> UInt64 {
        store.write(
            [CharacteristicWrite(characteristicID: id, value: .int(value))],
            origin: .simulator
        ).seq
    }

    @Test("the connection goes away and comes back: the stream resumes with exactly what it missed, without a resync")
    func resumesAfterLostConnection() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/homed.sock"
        let store = HomeStore(graph: DemoHome.make(nowMs: 1_700_000_000_000))
        let brightness = try store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        var server = try await Self.serve(store, on: path)
        let changes = HomeClient.resumingSubscription(to: path, name: "resuming") { _ in
            SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness]))
        }
        var iterator = changes.makeAsyncIterator()
        var elements: [ResumingSubscription.Element] = []
        func values() -> [CharacteristicValue] {
            elements.flatMap(\.message.events).compactMap {
                if case .value(let change) = $0.body { change.value } else { nil }
            }
        }
        elements.append(try #require(try await iterator.next()))
        #expect(elements.first?.message.marker?.kind == .subscribed)
        _ = Self.write(10, to: brightness, in: store)
        while !values().contains(.int(10)), let element = try await iterator.next() { elements.append(element) }

        // The daemon drops every connection; changes go on meanwhile.
        await server.stop()
        _ = Self.write(11, to: brightness, in: store)
        _ = Self.write(12, to: brightness, in: store)
        server = try await Self.serve(store, on: path)
        // The first message on the new connection (what it missed, or its marker);
        // then one more change.
        while elements.last?.connection != 2, let element = try await iterator.next() { elements.append(element) }
        let last = Self.write(13, to: brightness, in: store)
        while !values().contains(.int(13)), let element = try await iterator.next() { elements.append(element) }

        #expect(values() == [.int(10), .int(11), .int(12), .int(13)])
        let seqs = elements.flatMap(\.message.events).map(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "in order, nothing twice")
        #expect(seqs.last == last)
        #expect(!elements.contains { $0.message.marker?.kind == .resync }, "the journal held what was missed")
        #expect(elements.last?.connection == 2)
        await server.stop()
    }

    @Test("the first connection failing is the caller's error, naming the socket")
    func firstConnectionFails() async throws {
        let path = "/tmp/no-homed-\(getpid())/homed.sock"
        let changes = HomeClient.resumingSubscription(to: path, name: "resuming") { _ in SubscribeRequest() }
        var iterator = changes.makeAsyncIterator()
        let error = await #expect(throws: HomeError.self) { _ = try await iterator.next() }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains(path) == true)
    }
}
