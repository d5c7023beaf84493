import Foundation
import HomeClient
import HomeModel
import HomeServer
import HomeTesting
import HomeWire
import Synchronization
import Testing

/// A provider's lamp: key "lamp", a Lightbulb with On and Brightness.
private func lamp(on: Bool = true, brightness: Int64 = 50, optimisticBrightness: Bool = false) -> ProvidedAccessory {
    ProvidedAccessory(
        key: "lamp", name: "Porch Lamp", category: .lightbulb, manufacturer: "Acme", room: "Hallway",
        services: [
            ProvidedService(
                type: "Lightbulb", primary: true,
                characteristics: [
                    ProvidedCharacteristic(type: "On", value: .bool(on)),
                    ProvidedCharacteristic(
                        type: "Brightness", value: .int(brightness), optimistic: optimisticBrightness),
                ])
        ])
}

private let onRef = CharacteristicRef(accessoryKey: "lamp", service: "Lightbulb", characteristic: "On")
private let brightnessRef = CharacteristicRef(accessoryKey: "lamp", service: "Lightbulb", characteristic: "Brightness")

/// What a test provider's handlers saw.
private final class DeviceLog: Sendable {
    let writes = Mutex<[[CharacteristicRef: CharacteristicValue]]>([])
    let reads = Mutex<[[CharacteristicRef]]>([])
}

/// The errors of the calls a test saw refused.
private final class Refusals: Sendable {
    let errors = Mutex<[HomeError]>([])
}

/// Runs a provider in a task until the body ends.
private func withProvider<T: Sendable>(
    _ provider: HomeProvider, _ body: () async throws -> T
) async throws -> T {
    let task = Task { try await provider.run() }
    defer { task.cancel() }
    try await withTimeout(patience, "the provider's registration") { await provider.waitForRegistration() }
    // The wait also ends when the test is cancelled (its time limit): then there is no
    // registration to test.
    try Task.checkCancellation()
    return try await body()
}

/// A subscription's events one at a time (a message may carry several).
private struct EventReader {
    var iterator: HomeSubscription.AsyncIterator
    var pending: [HomeEvent] = []

    init(_ subscription: HomeSubscription) {
        iterator = subscription.makeAsyncIterator()
    }

    /// The next event that matches, skipping the others.
    mutating func next(where match: (HomeEvent) -> Bool) async throws -> HomeEvent {
        while true {
            while !pending.isEmpty {
                let event = pending.removeFirst()
                if match(event) { return event }
            }
            guard let message = try await iterator.next() else {
                throw HomeError(.unavailable, "the subscription ended")
            }
            pending = message.events
        }
    }
}

@Suite("accessory providers over the socket", .timeLimit(.safetyNet))
struct ProviderTests {
    @Test("a provider's accessories appear with a layout event; a write is acknowledged once the provider confirms it")
    func registerAndWrite() async throws {
        try await withPatientServer { server in
            let log = DeviceLog()
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp()],
                write: { values, _ in
                    log.writes.withLock { $0.append(values) }
                    return [:]
                })
            let client = try await server.connect(name: "user")
            var events = EventReader(client.subscribe(SubscribeRequest(filter: SubscriptionFilter())))
            try await withProvider(provider) {
                let added = try await events.next {
                    if case .layout(let change) = $0.body {
                        change.action == .added && change.object == .accessory
                    } else {
                        false
                    }
                }
                let lampID = try #require(provider.accessoryID(ofKey: "lamp"))
                guard case .layout(let change) = added.body else { return }
                #expect(change.objectID == lampID && change.name == "Porch Lamp")
                #expect(added.origin.kind == .provider && added.origin.name == "acme")
                let graph = try await client.getHome().graph
                #expect(graph.accessories[lampID]?.roomID == graph.id("Hallway"))
                #expect(graph.accessories[lampID]?.isReachable == true)

                let on = try #require(provider.id(of: onRef))
                let result = try await client.write(.bool(false), to: on)
                #expect(log.writes.withLock { $0 } == [[onRef: .bool(false)]])
                let event = try await events.next { $0.seq == result.seq }
                #expect(event.kind == .valueChanged)
                #expect(event.origin.kind == .client && event.origin.connectionID == client.connectionID)
                #expect(try await client.read([on]).reads.first?.value == .bool(false))
            }
            await client.close()
        }
    }

    @Test(
        "a provider that never answers: other reads keep flowing while a write waits on it; the write fails with DEADLINE_EXCEEDED at its deadline"
    )
    func unresponsiveProvider() async throws {
        try await withPatientServer { server in
            let received = Atomic<Int>(0)
            // The device never answers: a write waits until its deadline (or the provider stops).
            let provider = HomeProvider(
                id: "slow", socketPath: server.socketPath, accessories: [lamp()],
                write: { _, _ in
                    received.add(1, ordering: .releasing)
                    try await Task.sleep(for: .seconds(3_600))
                    return [:]
                })
            let writer = try await server.connect(name: "writer")
            let reader = try await server.connect(name: "reader")
            try await withProvider(provider) {
                let on = try #require(provider.id(of: onRef))
                let brightness = try #require(provider.id(of: brightnessRef))
                let thermostat = try await reader.getHome().graph.id("Living Room/Thermostat/CurrentTemperature")
                /// A write to the provider, in a task; its error when it ends (nil: written).
                func write(_ id: ObjectID, _ value: CharacteristicValue, timeoutMs: UInt32) -> Task<HomeError?, Never> {
                    Task {
                        do throws(HomeError) {
                            let response = try await writer.call(
                                HomeMethods.writeCharacteristics,
                                WriteCharacteristicsRequest(writes: [
                                    CharacteristicWrite(characteristicID: id, value: value)
                                ]),
                                timeoutMs: timeoutMs)
                            return response.results.first?.error
                        } catch {
                            return error
                        }
                    }
                }
                // A write with a deadline no test reaches, held by the provider: while it
                // waits, twenty reads come and go (reads queued behind it would never end).
                let writeDone = Atomic<Bool>(false)
                let held = Task {
                    defer { writeDone.store(true, ordering: .releasing) }
                    return await write(on, .bool(false), timeoutMs: 3_600_000).value
                }
                defer { held.cancel() }
                try await withTimeout(patience, "the provider to be sent the write") {
                    while received.load(ordering: .acquiring) == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
                for _ in 0..<20 { _ = try await reader.read([thermostat]) }
                let writeEnded = writeDone.load(ordering: .acquiring)
                #expect(!writeEnded, "the write ended with no answer and before its deadline")

                // A write with a short deadline: DEADLINE_EXCEEDED when it passes, not before
                // (and not never: the provider would answer in an hour).
                let started = ContinuousClock.now
                let failure = await write(brightness, .int(20), timeoutMs: 1_000).value
                #expect(failure?.code == .deadlineExceeded, "\(String(describing: failure))")
                #expect(ContinuousClock.now - started >= .seconds(1), "it failed before its deadline")
                // Nothing was applied.
                #expect(try await reader.read([on, brightness]).reads.map(\.value) == [.bool(true), .int(50)])
            }
            await writer.close()
            await reader.close()
        }
    }

    @Test(
        "a viewer flooding a slow provider with fresh reads gets its share; another client's write still goes through")
    func freshReadsCannotStarveWrites() async throws {
        try await withPatientServer { server in
            let log = DeviceLog()
            // Reads hang (until the provider stops); writes are answered at once.
            let provider = HomeProvider(
                id: "slow-reads", socketPath: server.socketPath, accessories: [lamp()],
                read: { _ in
                    try await Task.sleep(for: .seconds(60))
                    return [:]
                },
                write: { values, _ in
                    log.writes.withLock { $0.append(values) }
                    return [:]
                })
            let viewer = try await server.connect(name: "viewer")
            let writer = try await server.connect(name: "writer")
            try await withProvider(provider) {
                let on = try #require(provider.id(of: onRef))
                // 1 100 fresh reads from one connection: 1 024 wait, the rest are refused at once.
                let refused = Refusals()
                let reads = Task {
                    await withTaskGroup(of: Void.self) { group in
                        for _ in 0..<1_100 {
                            group.addTask {
                                let response = try? await viewer.call(
                                    HomeMethods.readCharacteristics,
                                    ReadCharacteristicsRequest(characteristicIDs: [on], fresh: true), timeoutMs: 60_000)
                                if let error = response?.reads.first?.error, error.code == .resourceExhausted {
                                    refused.errors.withLock { $0.append(error) }
                                }
                            }
                        }
                    }
                }
                defer { reads.cancel() }
                try await withTimeout(patience, "the reads past the connection's share to be refused") {
                    while refused.errors.withLock({ $0.count }) < 76 { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(
                    refused.errors.withLock {
                        $0.first?.message.hasPrefix("connection \(viewer.connectionID) has 1024 requests")
                    }
                        == true)
                let result = try await writer.write(.bool(false), to: on)
                #expect(result.error == nil, "the write reached the provider and was confirmed")
                #expect(log.writes.withLock { $0 } == [[onRef: .bool(false)]])
                #expect(refused.errors.withLock { $0.count } == 76)
            }
            await viewer.close()
            await writer.close()
        }
    }

    @Test("a fresh read asks the provider, and the fresh value also becomes the cache's, as the provider's change")
    func freshRead() async throws {
        try await withPatientServer { server in
            let log = DeviceLog()
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp(brightness: 50)],
                read: { refs in
                    log.reads.withLock { $0.append(refs) }
                    return [brightnessRef: .int(77), onRef: .uint(0)]
                })
            let client = try await server.connect()
            try await withProvider(provider) {
                let brightness = try #require(provider.id(of: brightnessRef))
                #expect(try await client.read([brightness]).reads.first?.value == .int(50))
                #expect(log.reads.withLock { $0 }.isEmpty, "a cached read must not reach the provider")
                let fresh = try await client.read([brightness], fresh: true)
                #expect(fresh.reads.first?.value == .int(77))
                #expect(log.reads.withLock { $0 } == [[brightnessRef]])
                #expect(try await client.read([brightness]).reads.first?.value == .int(77))
                // A value in another kind the format admits comes back as the format stores it.
                let on = try #require(provider.id(of: onRef))
                #expect(try await client.read([on], fresh: true).reads.first?.value == .bool(false))
            }
            await client.close()
        }
    }

    @Test("an answer after the deadline is dropped (not accepted) and changes nothing")
    func lateAnswer() async throws {
        try await withPatientServer { server in
            let providerClient = try await server.connect(name: "raw provider")
            var commands = providerClient.openProvider("raw").makeAsyncIterator()
            guard case .opened(let opened)? = try await commands.next()?.kind else {
                Issue.record("no opened message")
                return
            }
            #expect(opened.providerID == "raw" && opened.knownKeys.isEmpty)
            let registered = try await providerClient.registerAccessories(
                RegisterAccessoriesRequest(accessories: [lamp()]))
            let on = try #require(
                registered.characteristics.values.first {
                    $0.type.name == "On" && $0.accessoryID == registered.accessories[0].id
                }?.id)
            let client = try await server.connect()
            let write = Task {
                try await client.call(
                    HomeMethods.writeCharacteristics,
                    WriteCharacteristicsRequest(writes: [CharacteristicWrite(characteristicID: on, value: .bool(false))]
                    ),
                    timeoutMs: 300)
            }
            // Pings are answered, the write is not, until the call is over.
            var writeCommand: ProviderCommand?
            while writeCommand == nil, let command = try await commands.next() {
                switch command.kind {
                case .ping: try await providerClient.answer(CommandAnswer(requestID: command.requestID))
                case .write: writeCommand = command
                default: break
                }
            }
            let command = try #require(writeCommand)
            #expect(command.timeoutMs <= 300)
            let outcome = await write.result
            let failedOnTime: Bool
            switch outcome {
            case .failure(let error as HomeError): failedOnTime = error.code == .deadlineExceeded
            case .success(let response): failedOnTime = response.results.first?.error?.code == .deadlineExceeded
            default: failedOnTime = false
            }
            #expect(failedOnTime)
            let accepted = try await providerClient.answer(
                CommandAnswer(requestID: command.requestID, writes: [WriteResult(characteristicID: on)]))
            #expect(!accepted)
            #expect(try await client.read([on]).reads.first?.value == .bool(true))
            await client.close()
            await providerClient.close()
        }
    }

    @Test("a threshold crossed while a provider's accessory was away fires once when it comes back, noted as caught up")
    func warmBeer() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            var events = EventReader(
                client.subscribe(
                    SubscribeRequest(filter: SubscriptionFilter(kinds: [.triggerFired, .audit, .reachabilityChanged]))))
            let first = HomeProvider(id: "acme", socketPath: server.socketPath, accessories: [lamp(brightness: 50)])
            let task = Task { try await first.run() }
            try await withTimeout(patience, "registration") { await first.waitForRegistration() }
            let brightness = try #require(first.id(of: brightnessRef))
            let trigger = try await client.addTrigger(
                name: "Bright", homeID: 1,
                kind: .event(characteristicID: brightness, value: nil, rangeMin: 60, rangeMax: nil, conditions: [])
            ).createdID
            let lampID = try #require(first.accessoryID(ofKey: "lamp"))
            task.cancel()
            _ = try await events.next { $0.body == .reachability(accessoryID: lampID, reachable: false) }

            // Back with a brightness that crossed 60 while it was away.
            let second = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp(brightness: 65)], write: { _, _ in [:] })
            try await withProvider(second) {
                let note = try await events.next {
                    if case .audit(let note) = $0.body { note.action == "trigger-fired" } else { false }
                }
                guard case .audit(let fired) = note.body else { return }
                #expect(fired.detail.contains("65"), "\(fired.detail)")
                #expect(
                    fired.detail.contains("caught up: it changed while Porch Lamp was unreachable"), "\(fired.detail)")
                #expect(try await events.next { $0.kind == .triggerFired }.body == .triggerFired(trigger))
                let later = try await client.readHistory(
                    ReadHistoryRequest(filter: SubscriptionFilter(kinds: [.triggerFired]), newestFirst: true))
                #expect(later.events.filter { $0.body == .triggerFired(trigger) }.count == 1)
            }
            await client.close()
        }
    }

    @Test(
        "a provider that goes away leaves its accessories unreachable at once, not after a ping's timeout; back, they are reachable with the same ids and what changed is published once"
    )
    func reachabilityFollowsProvider() async throws {
        // No ping can end the session within the test's time limit: if the accessory
        // becomes unreachable, the closed connection made it so.
        try await withPatientServer(configure: { $0.providerPingTimeoutMs = 3_600_000 }) { server in
            let client = try await server.connect()
            var events = EventReader(
                client.subscribe(
                    SubscribeRequest(filter: SubscriptionFilter(kinds: [.reachabilityChanged, .valueChanged]))))
            let first = HomeProvider(id: "acme", socketPath: server.socketPath, accessories: [lamp(brightness: 50)])
            let task = Task { try await first.run() }
            try await withTimeout(patience, "registration") { await first.waitForRegistration() }
            let lampID = try #require(first.accessoryID(ofKey: "lamp"))
            let brightness = try #require(first.id(of: brightnessRef))
            let scene = try await client.changeLayout(.addActionSet(name: "Evening", kind: .userDefined, homeID: 1))
                .createdID
            _ = try await client.changeLayout(
                .addAction(CharacteristicWriteAction(characteristicID: brightness, value: .int(10)), actionSetID: scene)
            )

            task.cancel()
            let unreachable = try await events.next { $0.body == .reachability(accessoryID: lampID, reachable: false) }
            #expect(unreachable.origin.kind == .provider)
            let writeWhileAway = try await client.write(
                WriteCharacteristicsRequest(writes: [CharacteristicWrite(characteristicID: brightness, value: .int(20))]
                ))
            #expect(writeWhileAway.results.first?.error?.code == .unavailable)

            // Back, with a brightness that changed while it was away.
            let second = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp(brightness: 65)], write: { _, _ in [:] })
            try await withProvider(second) {
                #expect(second.accessoryID(ofKey: "lamp") == lampID)
                #expect(second.id(of: brightnessRef) == brightness)
                _ = try await events.next { $0.body == .reachability(accessoryID: lampID, reachable: true) }
                let changed = try await events.next {
                    if case .value(let change) = $0.body { change.characteristicID == brightness } else { false }
                }
                guard case .value(let change) = changed.body else { return }
                #expect(change.value == .int(65))
                let graph = try await client.getHome().graph
                #expect(graph.actionSets[scene]?.actions.map(\.characteristicID) == [brightness])
                #expect(graph.accessories[lampID]?.roomID == graph.id("Hallway"))
                // On did not change: no event for it (the next one is ours).
                let on = try #require(second.id(of: onRef))
                let mark = try await client.write(.bool(false), to: on)
                let next = try await events.next { $0.kind == .valueChanged }
                #expect(next.seq == mark.seq)
            }
            await client.close()
        }
    }

    @Test(
        "an optimistic characteristic is acknowledged before the provider has applied it; the provider still hears of the write"
    )
    func optimistic() async throws {
        // The provider holds the write until the test releases it, after the acknowledgement:
        // an acknowledgement that waited for its answer would come only when the (patient)
        // wait for it ran out, counted as a timeout.
        try await withPatientServer { server in
            let log = DeviceLog()
            let released = Atomic<Bool>(false)
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp(optimisticBrightness: true)],
                write: { values, _ in
                    // The device is slow: it applies the write only when the test says so.
                    while !released.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(10)) }
                    log.writes.withLock { $0.append(values) }
                    return [:]
                })
            let client = try await server.connect()
            try await withProvider(provider) {
                let brightness = try #require(provider.id(of: brightnessRef))
                let result = try await client.write(.int(30), to: brightness)
                #expect(result.seq > 0)
                #expect(log.writes.withLock { $0 }.isEmpty, "the write waited for the provider")
                // The provider has not answered (it cannot before the release): acknowledged
                // before its answer, not when the wait for it ran out.
                let timeouts = try await client.listProviders().first { $0.providerID == "acme" }?.timeouts
                #expect(timeouts == 0, "the write was acknowledged when the provider's answer timed out")
                #expect(try await client.read([brightness]).reads.first?.value == .int(30))
                released.store(true, ordering: .releasing)
                try await withTimeout(patience, "the provider's write") {
                    while log.writes.withLock({ $0 }).isEmpty { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(log.writes.withLock { $0 } == [[brightnessRef: .int(30)]])
            }
            await client.close()
        }
    }

    @Test(
        "provider calls are refused clearly: a taken id, no session, another's characteristic, an atomic batch across providers"
    )
    func refusals() async throws {
        try await withPatientServer { server in
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp()], write: { _, _ in [:] })
            try await withProvider(provider) {
                let other = try await server.connect(name: "impostor")
                var commands = other.openProvider("acme").makeAsyncIterator()
                await #expect(throws: HomeError.self) { _ = try await commands.next() }
                do {
                    _ = try await other.registerAccessories(RegisterAccessoriesRequest(accessories: [lamp()]))
                    Issue.record("a connection without a provider session registered accessories")
                } catch let error as HomeError {
                    #expect(error.code == .failedPrecondition)
                    #expect(error.message.contains("OpenProvider"))
                }

                // Another provider may not report this one's values.
                let second = HomeProvider(id: "other", socketPath: server.socketPath, accessories: [])
                let task = Task { try await second.run() }
                try await withTimeout(patience, "registration") { await second.waitForRegistration() }
                let on = try #require(provider.id(of: onRef))
                let secondClient = try await server.connect(name: "second raw")
                var secondCommands = secondClient.openProvider("other2").makeAsyncIterator()
                _ = try await secondCommands.next()
                let report = try await secondClient.report(
                    ValueReport(values: [CharacteristicWrite(characteristicID: on, value: .bool(false))]))
                #expect(report.rejected.first?.error?.code == .permissionDenied)
                #expect(
                    report.rejected.first?.error?.message
                        == "characteristic \(on) belongs to accessory \(provider.accessoryID(ofKey: "lamp")!) of provider \"acme\", not of \"other2\""
                )
                // Nor its reachability: the refusal names the accessory, as characteristic 0.
                let lampID = try #require(provider.accessoryID(ofKey: "lamp"))
                let reachability = try await secondClient.report(
                    ValueReport(reachability: [ReachabilityChange(accessoryID: lampID, reachable: false)]))
                #expect(reachability.rejected.first?.error?.code == .permissionDenied)
                #expect(reachability.rejected.first?.characteristicID == 0)
                #expect(reachability.rejected.first?.accessoryID == lampID)
                task.cancel()

                // An atomic batch spanning the provider and the daemon's own accessories.
                let client = try await server.connect()
                let demoLamp = try await client.getHome().graph.id("Living Room/Lamp/On")
                do {
                    _ = try await client.write(
                        WriteCharacteristicsRequest(
                            writes: [
                                CharacteristicWrite(characteristicID: on, value: .bool(false)),
                                CharacteristicWrite(characteristicID: demoLamp, value: .bool(false)),
                            ], atomic: true))
                    Issue.record("an atomic batch across providers was accepted")
                } catch let error as HomeError {
                    #expect(error.code == .failedPrecondition)
                    #expect(error.message.contains("spans \"acme\" and the daemon itself"))
                }
                #expect(try await client.read([demoLamp]).reads.first?.value == .bool(true))
                await client.close()
                await other.close()
                await secondClient.close()
            }
        }
    }

    @Test("a scene writes a provider's characteristic through the provider, then publishes that it ran")
    func sceneThroughProvider() async throws {
        try await withPatientServer { server in
            let log = DeviceLog()
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp(on: true)],
                write: { values, _ in
                    log.writes.withLock { $0.append(values) }
                    return [:]
                })
            let client = try await server.connect()
            try await withProvider(provider) {
                let on = try #require(provider.id(of: onRef))
                let demoLamp = try await client.getHome().graph.id("Living Room/Lamp/On")
                let scene = try await client.changeLayout(.addActionSet(name: "Night", kind: .sleep, homeID: 1))
                    .createdID
                for target in [on, demoLamp] {
                    _ = try await client.changeLayout(
                        .addAction(
                            CharacteristicWriteAction(characteristicID: target, value: .bool(false)), actionSetID: scene
                        ))
                }
                var events = EventReader(client.subscribe(SubscribeRequest(filter: SubscriptionFilter())))
                let ran = try await client.executeActionSet(scene)
                #expect(ran.results.allSatisfy { $0.error == nil })
                #expect(log.writes.withLock { $0 } == [[onRef: .bool(false)]])
                let executed = try await events.next { $0.body == .actionSetExecuted(scene) }
                #expect(executed.seq == ran.seq)
                #expect(try await client.read([on, demoLamp]).reads.map(\.value) == [.bool(false), .bool(false)])
            }
            await client.close()
        }
    }

    @Test("an atomic batch the provider confirms only in part is applied not at all; values go to it normalized")
    func atomicPartialConfirmation() async throws {
        try await withPatientServer { server in
            let log = DeviceLog()
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp(on: true, brightness: 50)],
                write: { values, _ in
                    log.writes.withLock { $0.append(values) }
                    return [onRef: HomeError(.failedPrecondition, "the relay is stuck")]
                })
            let client = try await server.connect()
            try await withProvider(provider) {
                let on = try #require(provider.id(of: onRef))
                let brightness = try #require(provider.id(of: brightnessRef))
                let response = try await client.write(
                    WriteCharacteristicsRequest(
                        writes: [
                            CharacteristicWrite(characteristicID: on, value: .int(0)),
                            CharacteristicWrite(characteristicID: brightness, value: .int(70)),
                            CharacteristicWrite(characteristicID: 999_999, value: .int(1)),
                        ], atomic: false))
                // Not atomic: the unknown id fails alone; the provider confirmed Brightness only.
                #expect(response.results.map { $0.error?.code } == [.failedPrecondition, nil, .notFound])
                // The bool went to the provider as a bool, whatever kind the client wrote.
                #expect(log.writes.withLock { $0.last?[onRef] } == .bool(false))
                let atomic = try await client.write(
                    WriteCharacteristicsRequest(
                        writes: [
                            CharacteristicWrite(characteristicID: on, value: .bool(false)),
                            CharacteristicWrite(characteristicID: brightness, value: .int(10)),
                        ], atomic: true))
                #expect(atomic.results.map { $0.error?.code } == [.failedPrecondition, .aborted])
                #expect(try await client.read([on, brightness]).reads.map(\.value) == [.bool(true), .int(70)])
            }
            await client.close()
        }
    }

    @Test("keys are per provider: two providers registering the same key each get their own accessory")
    func keysPerProvider() async throws {
        try await withPatientServer { server in
            let first = HomeProvider(id: "first", socketPath: server.socketPath, accessories: [lamp()])
            let second = HomeProvider(id: "second", socketPath: server.socketPath, accessories: [lamp(on: false)])
            try await withProvider(first) {
                try await withProvider(second) {
                    let (one, two) = (first.accessoryID(ofKey: "lamp"), second.accessoryID(ofKey: "lamp"))
                    #expect(one != nil && two != nil && one != two)
                    let client = try await server.connect()
                    let ons = (try #require(first.id(of: onRef)), try #require(second.id(of: onRef)))
                    let values = try await client.read([ons.0, ons.1]).reads.map(\.value)
                    #expect(values == [.bool(true), .bool(false)])
                    await client.close()
                }
            }
        }
    }

    @Test("ListProviders shows connected and gone providers with their accessories and request figures")
    func listProviders() async throws {
        try await withPatientServer { server in
            let provider = HomeProvider(
                id: "acme", socketPath: server.socketPath, accessories: [lamp()], write: { _, _ in [:] })
            let client = try await server.connect()
            try await withProvider(provider) {
                let on = try #require(provider.id(of: onRef))
                _ = try await client.write(.bool(false), to: on)
                let infos = try await client.listProviders()
                let info = try #require(infos.first { $0.providerID == "acme" })
                #expect(info.connected && info.clientName == "provider acme")
                #expect(info.accessoryIDs == [try #require(provider.accessoryID(ofKey: "lamp"))])
                #expect(info.requests >= 1 && info.timeouts == 0 && info.latencyP50Us > 0)
            }
            try await withTimeout(patience, "the provider to be gone") {
                while try await client.listProviders().first(where: { $0.providerID == "acme" })?.connected == true {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            await client.close()
        }
    }
}
