import Foundation
import HomeClient
import HomeModel
import HomeServer
import HomeTesting
import HomeWire
import Logging
import Testing

@Suite("in-process connections and live ones", .timeLimit(.safetyNet))
struct InProcessConnectionTests {

    @Test(
        "a write is acknowledged with its seq and a subscriber on another connection sees it, either way",
        arguments: TestServer.Transport.allCases)
    func writeAndWatch(_ transport: TestServer.Transport) async throws {
        try await withPatientServer { server in
            let watcher = try await server.connect(name: "watcher", via: transport)
            let writer = try await server.connect(name: "writer", via: transport)
            let lamp = try await writer.getHome().graph.id("Living Room/Lamp/Brightness")
            var events = watcher.subscribe(SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [lamp])))
                .makeAsyncIterator()
            #expect(try await events.next()?.marker?.kind == .subscribed)
            let write = try await writer.write(.int(42), to: lamp)
            let event = try #require(try await events.next()?.events.first)
            #expect(event.seq == write.seq)
            #expect(
                event.origin == Origin(kind: .client, connectionID: writer.connectionID, name: "writer", uid: getuid()))
            await writer.close()
            await watcher.close()
        }
    }

    @Test("an in-process connection is this process: its peer credentials and role are the daemon's own")
    func peerIsThisProcess() async throws {
        try await withPatientServer { server in
            let client = try await server.connect(via: .inProcess)
            let status = try await client.call(HomeMethods.getStatus, GetStatusRequest())
            #expect(status.callerPID == UInt32(ProcessInfo.processInfo.processIdentifier))
            #expect(status.callerUID == getuid())
            #expect(status.callerRole == .admin)
            await client.close()
        }
    }

    @Test(
        "a connection made once the server has begun to stop is told it is shutting down, not that there are too many")
    func whileStopping() async throws {
        let server = try await startPatientServer()
        await server.stop()
        let error = await #expect(throws: HomeError.self) {
            try await HomeClient.connect(connectedSocket: try await server.server.connectInProcess(), name: "late")
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("shutting down") == true)
    }

    @Test("a server serves in-process connections before it listens on its socket")
    func beforeListening() async throws {
        var logger = Logger(label: "in-process-test")
        logger.logLevel = .critical
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = HomeServer(
            store: HomeStore(graph: DemoHome.make(nowMs: 1_700_000_000_000)),
            configuration: ServerConfiguration.patient(socketPath: directory + "/homed.sock"), logger: logger)
        let client = try await HomeClient.connect(connectedSocket: try await server.connectInProcess(), name: "early")
        #expect(try await client.getHome().graph.accessories.count == 6)
        #expect(access(directory + "/homed.sock", F_OK) != 0, "no socket file yet")
        await client.close()
    }
}

@Suite("a daemon's start with providers known from before", .timeLimit(.safetyNet))
struct ProviderStartTests {
    @Test(
        "every accessory of a provider that has not come back gets its unreachable event at start, also one stored unreachable"
    )
    func everyAccessoryAnnounced() async throws {
        var graph = DemoHome.make(nowMs: 1_700_000_000_000)
        // Renamed while its provider was away: saved unreachable.
        let lamp = graph.id("Living Room/Lamp")
        _ = try graph.setReachable(false, accessoryID: lamp)
        var logger = Logger(label: "start-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration.patient(socketPath: "/unused")
        configuration.inProcessProviders = []
        let server = HomeServer(
            store: HomeStore(graph: graph), configuration: configuration, logger: logger)
        let client = try await HomeClient.connect(connectedSocket: try await server.connectInProcess(), name: "watcher")
        var events = client.subscribe(
            SubscribeRequest(
                filter: SubscriptionFilter(kinds: [.reachabilityChanged]), sinceSeq: 0,
                journalID: client.hello.journalID)
        ).makeAsyncIterator()
        var unreachable: [ObjectID] = []
        while unreachable.count < graph.accessories.count, let message = try await events.next() {
            for event in message.events {
                if case .reachability(let id, false) = event.body { unreachable.append(id) }
            }
        }
        #expect(Set(unreachable) == Set(graph.accessories.keys))
        #expect(unreachable.contains(lamp))
        await client.close()
    }
}
