import Foundation
import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Logging
import Testing

@Suite("subscriptions over the socket", .timeLimit(.safetyNet))
struct SubscriptionTests {
    @Test("a subscriber to one characteristic receives its changes and nothing else, with the writer as origin")
    func filteredByCharacteristic() async throws {
        try await withPatientServer { server in
            let watcher = try await server.connect(name: "watcher")
            let writer = try await server.connect(name: "writer")
            let graph = try await writer.getHome().graph
            let on = graph.id("Living Room/Lamp/On")
            let brightness = graph.id("Living Room/Lamp/Brightness")
            var iterator = watcher.subscribe(SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [on])))
                .makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.marker?.kind == .subscribed)
            _ = try await writer.write(.uint(12), to: brightness)  // not watched
            let result = try await writer.write(.bool(false), to: on)
            let message = try await iterator.next()
            let event = try #require(message?.events.first)
            #expect(message?.events.count == 1)
            #expect(event.seq == result.seq)
            #expect(
                event.body
                    == .value(
                        ValueChange(
                            accessoryID: graph.id("Living Room/Lamp"),
                            serviceID: graph.characteristics[on]!.serviceID,
                            characteristicID: on, value: .bool(false))))
            #expect(
                event.origin == Origin(kind: .client, connectionID: writer.connectionID, name: "writer", uid: getuid()))
            await watcher.close()
            await writer.close()
        }
    }

    @Test(
        "twenty subscribers on their own connections each receive every change once, in order, identical; one leaving mid-stream disturbs none"
    )
    func fanOutToManySubscribers() async throws {
        try await withPatientServer { server in
            let writer = try await server.connect(name: "writer")
            let graph = try await writer.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            // Connections alternate between the daemon's event loops, so flushes of
            // one change are batched on more than one loop.
            var watchers: [HomeClient] = []
            for index in 0..<20 { watchers.append(try await server.connect(name: "watcher-\(index)")) }
            let leaver = try await server.connect(name: "leaver")
            var leaverIterator = leaver.subscribe(
                SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness]))
            )
            .makeAsyncIterator()
            #expect(try await leaverIterator.next()?.marker?.kind == .subscribed)
            let receivers = watchers.map { watcher in
                Task { () throws -> [HomeEvent] in
                    var iterator = watcher.subscribe(
                        SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness]))
                    )
                    .makeAsyncIterator()
                    var events: [HomeEvent] = []
                    while events.count < 40, let message = try await iterator.next() {
                        events += message.events
                    }
                    return events
                }
            }
            // Every watcher is live once the daemon counts its subscription.
            while try await writer.status().subscriptions < 21 { try await Task.sleep(for: .milliseconds(5)) }
            var written: [UInt64] = []
            for level in 1...40 {
                written.append(try await writer.write(.uint(UInt64(level)), to: brightness).seq)
                if level == 10 { await leaver.close() }
            }
            let expected = try await receivers[0].value
            #expect(expected.map(\.seq) == written)
            let values = expected.map { event -> CharacteristicValue? in
                if case .value(let change) = event.body { return change.value }
                return nil
            }
            #expect(values == (1...40).map { CharacteristicValue.int(Int64($0)) })
            #expect(
                expected.allSatisfy {
                    $0.origin == Origin(kind: .client, connectionID: writer.connectionID, name: "writer", uid: getuid())
                })
            for receiver in receivers.dropFirst() {
                #expect(try await receiver.value == expected)
            }
            for watcher in watchers { await watcher.close() }
            await writer.close()
        }
    }

    @Test("a subscriber to an accessory receives all of its characteristics' changes, in order")
    func filteredByAccessory() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let lamp = graph.id("Living Room/Lamp")
            let subscription = client.subscribe(SubscribeRequest(filter: SubscriptionFilter(accessoryIDs: [lamp])))
            var iterator = subscription.makeAsyncIterator()
            _ = try await iterator.next()
            for level in 1...20 {
                _ = try await client.write(.uint(UInt64(level)), to: graph.id("Living Room/Lamp/Brightness"))
            }
            _ = try await client.write(.float(21), to: graph.id("Living Room/Thermostat/TargetTemperature"))
            _ = try await client.write(.uint(99), to: graph.id("Living Room/Lamp/Saturation"))
            var values: [CharacteristicValue] = []
            var seqs: [UInt64] = []
            while values.count < 21, let message = try await iterator.next() {
                for event in message.events {
                    guard case .value(let change) = event.body else { continue }
                    #expect(change.accessoryID == lamp)
                    values.append(change.value)
                    seqs.append(event.seq)
                }
            }
            #expect(
                values == (1...20).map { .int(Int64($0)) } + [.float(99)], "Brightness is an int, Saturation a float")
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
            await client.close()
        }
    }

    @Test("ending the iteration cancels the call on the wire")
    func endingCancels() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            do {
                let subscription = client.subscribe(SubscribeRequest())
                for try await message in subscription where message.marker?.kind == .subscribed { break }
            }
            #expect(server.store.subscriptionCount <= 1)
            try await withTimeout(patience, "the subscription to be cancelled") {
                while server.store.subscriptionCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            }
            await client.close()
        }
    }

    @Test("a subscription naming an unknown id is NOT_FOUND naming it")
    func unknownFilterID() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let error = await #expect(throws: HomeError.self) {
                for try await _ in client.subscribe(
                    SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [777_777])))
                {}
            }
            #expect(
                error == HomeError(.notFound, "subscription filter names characteristic 777777, which does not exist"))
            await client.close()
        }
    }

    @Test("shutdown says go-away and ends open streams with UNAVAILABLE")
    func goAway() async throws {
        let server = try await startPatientServer()
        let client = try await server.connect()
        var iterator = client.subscribe(SubscribeRequest()).makeAsyncIterator()
        _ = try await iterator.next()
        await server.stop()
        let error = await #expect(throws: HomeError.self) {
            while try await iterator.next() != nil {}
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("shutting down") == true)
        let afterwards = await #expect(throws: HomeError.self) { _ = try await client.status() }
        #expect(afterwards?.code == .unavailable)
    }

    @Test("a second daemon on a live socket is refused; a stale socket file is replaced")
    func socketOwnership() async throws {
        try await withPatientServer { server in
            let rival = HomeServer(
                store: HomeStore(graph: HomeGraph()), configuration: .patient(socketPath: server.socketPath),
                logger: .init(label: "rival"))
            let error = await #expect(throws: HomeError.self) { try await rival.start() }
            #expect(error == HomeError(.alreadyExists, "another homed is listening on \(server.socketPath)"))
            _ = try await server.connect().status()  // still the original daemon's socket
        }
        // A socket file nobody listens on (left by a dead daemon) is replaced.
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/homed.sock"
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(stale)
        let server = HomeServer(
            store: HomeStore(graph: DemoHome.make(nowMs: 0)), configuration: .patient(socketPath: path),
            logger: .init(label: "fresh"))
        try await server.start()
        let client = try await HomeClient.connect(to: path, name: "t")
        #expect(try await client.status().homes == 1)
        await client.close()
        await server.stop()
        #expect(access(path, F_OK) != 0, "stop removes the socket file")
    }
}
