import Foundation
import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Logging
import Synchronization
import Testing

@testable import HomeServer

@Suite("automation over the socket", .timeLimit(.safetyNet))
struct AutomationTests {
    @Test(
        "turning the lamp on fires its trigger: the change, trigger fired, the scene's change by automation, scene executed"
    )
    func eventTriggerRunsScene() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect(name: "writer")
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            let scene = try await home.scene("Evening", [(home.brightness, .int(30))])
            let trigger = try await client.addTrigger(
                name: "Lamp on", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil,
                    rangeMax: nil, conditions: []),
                actionSetIDs: [scene]
            ).createdID
            var log = try await EventLog(client)

            let write = try await client.write(.bool(true), to: home.on)
            let events = try await log.events { $0.body == .actionSetExecuted(scene) }

            let automation = Origin(kind: .automation, name: "Lamp on")
            #expect(
                events.map(\.body) == [
                    .value(home.change(home.on, .bool(true))),
                    .triggerFired(trigger),
                    .value(home.change(home.brightness, .int(30))),
                    .actionSetExecuted(scene),
                ])
            #expect(
                events.map(\.origin) == [
                    Origin(kind: .client, connectionID: client.connectionID, name: "writer", uid: getuid()), automation,
                    automation,
                    automation,
                ])
            #expect(events.first?.seq == write.seq)
            #expect(events.map(\.seq) == events.map(\.seq).sorted())
            await client.close()
        }
    }

    @Test("a disabled trigger does not fire, and fires again once enabled")
    func disabledTrigger() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            let scene = try await home.scene("Bright", [(home.brightness, .int(100))])
            let trigger = try await client.addTrigger(
                name: "Lamp on", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil,
                    rangeMax: nil, conditions: []),
                actionSetIDs: [scene]
            ).createdID
            try await client.setTrigger(trigger, enabled: false)
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client)

            _ = try await client.write(.bool(true), to: home.on)
            let quiet = try await log.events(through: sentinel)
            #expect(quiet.firings == [sentinel.trigger])
            #expect(!quiet.contains { $0.body == .value(home.change(home.brightness, .int(100))) })

            try await client.setTrigger(trigger, enabled: true)
            _ = try await client.write(.bool(false), to: home.on)
            _ = try await client.write(.bool(true), to: home.on)
            let fired = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(fired.firings == [trigger])
            await client.close()
        }
    }

    @Test("a condition that does not hold prevents firing; once it holds, the trigger fires")
    func conditionGuards() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let temperature = home.graph.id("Living Room/Thermostat/CurrentTemperature")  // 20.5
            _ = try await client.write(.bool(false), to: home.on)
            let trigger = try await client.addTrigger(
                name: "Lamp on when warm", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil,
                    conditions: [
                        CharacteristicCondition(characteristicID: temperature, comparison: .greater, value: .float(25))
                    ])
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client)

            _ = try await client.write(.bool(true), to: home.on)
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])

            // A sensor reading: the simulator's to set, not a client's.
            let reading = server.store.write(
                [
                    CharacteristicWrite(characteristicID: temperature, value: .float(26))
                ], origin: .simulator, enforceWritable: false)
            #expect(reading.results.first?.error == nil)
            _ = try await client.write(.bool(false), to: home.on)
            _ = try await client.write(.bool(true), to: home.on)
            #expect(try await log.events { $0.body == .triggerFired(trigger) }.firings == [trigger])
            await client.close()
        }
    }

    @Test("a threshold trigger fires on entering its range, not again while inside it, and again after leaving")
    func thresholdFiresOnEntering() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let target = home.graph.id("Living Room/Thermostat/TargetTemperature")  // 21
            let trigger = try await client.addTrigger(
                name: "Too warm", homeID: home.id,
                kind: .event(characteristicID: target, value: nil, rangeMin: 25, rangeMax: 30, conditions: [])
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client)

            for value in [22.0, 26, 27, 28.5, 30] {
                _ = try await client.write(.float(value), to: target)
            }
            #expect(try await log.events(through: sentinel).firings == [trigger, sentinel.trigger])

            for value in [31.0, 29] {
                _ = try await client.write(.float(value), to: target)
            }
            #expect(try await log.events(through: sentinel).firings == [trigger, sentinel.trigger])
            await client.close()
        }
    }

    @Test("two triggers that undo each other's scene fire once each, not forever")
    func cascadeStops() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            let turnOff = try await home.scene("Off", [(home.on, .bool(false))])
            let turnOn = try await home.scene("On", [(home.on, .bool(true))])
            func watchOn(_ name: String, _ value: Bool, runs scene: ObjectID) async throws -> ObjectID {
                try await client.addTrigger(
                    name: name, homeID: home.id,
                    kind: .event(
                        characteristicID: home.on, value: .bool(value), rangeMin: nil,
                        rangeMax: nil, conditions: []),
                    actionSetIDs: [scene]
                ).createdID
            }
            let onThenOff = try await watchOn("Undo on", true, runs: turnOff)
            let offThenOn = try await watchOn("Undo off", false, runs: turnOn)
            var log = try await EventLog(client)

            _ = try await client.write(.bool(true), to: home.on)
            _ = try await log.events { $0.body == .actionSetExecuted(turnOn) }
            // Anything the loop would still fire is queued before the sentinel's firing.
            let sentinel = try await home.sentinel()
            let after = try await log.events(through: sentinel)
            #expect(after.firings == [sentinel.trigger])
            let graph = try await client.getHome().graph
            #expect(graph.characteristics[home.on]?.value == .bool(true), "the last scene to run was Undo off's")
            _ = (onThenOff, offThenOn)
            await client.close()
        }
    }

    @Test("a trigger fires at most its rate limit within the window")
    func rateLimited() async throws {
        try await withAutomation(limits: AutomationLimits(maxFirings: 3, rateWindowMs: 60_000)) { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            let trigger = try await client.addTrigger(
                name: "Lamp on", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil,
                    rangeMax: nil, conditions: [])
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client)
            for _ in 0..<5 {
                _ = try await client.write(.bool(true), to: home.on)
                _ = try await client.write(.bool(false), to: home.on)
            }
            #expect(try await log.events(through: sentinel).firings == [trigger, trigger, trigger, sentinel.trigger])
            await client.close()
        }
    }

    @Test(
        "a daily timer fires at its moment and the next day, by the clock the engine is given; past and disabled timers do not"
    )
    func timerFires() async throws {
        let start = Int64(1_714_564_800_000)  // 2024-05-01T12:00:00Z
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let scene = try await home.scene("Morning", [(home.brightness, .int(55))])
            let hour: Int64 = 3_600_000
            func timer(_ name: String, at ms: Int64, _ recurrence: Recurrence) async throws -> ObjectID {
                try await client.addTrigger(
                    name: name, homeID: home.id,
                    kind: .timer(fireDateMs: ms, timeZone: "Europe/Paris", recurrence: recurrence),
                    actionSetIDs: [scene]
                ).createdID
            }
            let past = try await timer("Yesterday", at: start - 24 * hour, .none)
            let soon = try await timer("Soon", at: start + hour / 2, .none)
            let daily = try await timer("Daily", at: start + hour, .daily)
            try await client.setTrigger(soon, enabled: false)
            var log = try await EventLog(client)

            // The engine sleeps until the daily timer once it has seen the disabled one go.
            try await clock.waitForSleeper(untilMs: start + hour)
            clock.advance(to: start + hour)
            let first = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(first.firings == [daily])
            #expect(
                first.contains {
                    $0.body == .value(home.change(home.brightness, .int(55)))
                        && $0.origin == Origin(kind: .automation, name: "Daily")
                })

            try await clock.waitForSleeper(untilMs: start + 25 * hour)
            clock.advance(to: start + 25 * hour)
            let second = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(second.firings == [daily])
            _ = past
            await client.close()
        }
    }

    @Test("a timer removed before its moment does not fire")
    func removedTimer() async throws {
        let start = Int64(1_714_564_800_000)
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let doomed = try await client.addTrigger(
                name: "Doomed", homeID: home.id,
                kind: .timer(fireDateMs: start + 1000, timeZone: "UTC", recurrence: .none)
            ).createdID
            let kept = try await client.addTrigger(
                name: "Kept", homeID: home.id,
                kind: .timer(fireDateMs: start + 2000, timeZone: "UTC", recurrence: .none)
            ).createdID
            try await clock.waitForSleeper(untilMs: start + 1000)
            _ = try await client.remove(doomed)
            try await clock.waitForSleeper(untilMs: start + 2000)
            var log = try await EventLog(client)
            clock.advance(to: start + 2000)
            #expect(try await log.events { $0.body == .triggerFired(kept) }.firings == [kept])
            await client.close()
        }
    }
}

/// A lamp served by a provider process: its writes are applied only once the provider confirms them.
private let providerLampFile = """
    provider: loop-sim
    home: Demo Home
    rooms: [Porch]
    tick_ms: 1000
    accessories:
      - key: lamp-1
        name: Porch Lamp
        room: Porch
        category: lightbulb
        services:
          - type: Lightbulb
            characteristics: {On: false, Brightness: 20, Hue: 0}
    """

@Suite("automation through a provider process", .timeLimit(.safetyNet))
struct AutomationThroughProviderTests {
    @Test(
        "two triggers that undo each other's scene on a provider's lamp fire once each: the cascade travels with the change through the provider's confirmation"
    )
    func cascadeStopsThroughProvider() async throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--no-simulator", "--in-memory"])
        let file = daemon.directory + "/loop.yaml"
        try providerLampFile.write(toFile: file, atomically: true, encoding: .utf8)
        let provider = try ChildProcess(
            builtExecutable("homed-sim"), [file, "--socket", daemon.socketPath, "--log-level", "warning"])
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "writer")
        let graph = try await withTimeout(patience, "the provider's registration") {
            while true {
                let graph = try await client.getHome().graph
                if let lamp = graph.accessories.values.first(where: { $0.provider == "loop-sim" }), lamp.isReachable {
                    return graph
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let homeID = try #require(graph.primaryHomeID)
        let on = graph.id("Porch/Porch Lamp/On")
        let hue = graph.id("Porch/Porch Lamp/Hue")
        func scene(_ name: String, _ value: Bool) async throws -> ObjectID {
            let scene = try await client.addActionSet(name: name, homeID: homeID).createdID
            try await client.addAction(characteristicID: on, value: .bool(value), toActionSet: scene)
            return scene
        }
        func watchOn(_ name: String, _ value: Bool, runs scene: ObjectID) async throws -> ObjectID {
            try await client.addTrigger(
                name: name, homeID: homeID,
                kind: .event(characteristicID: on, value: .bool(value), rangeMin: nil, rangeMax: nil, conditions: []),
                actionSetIDs: [scene]
            ).createdID
        }
        let turnOff = try await scene("Off", false)
        let turnOn = try await scene("On", true)
        let undoOn = try await watchOn("Undo on", true, runs: turnOff)
        let undoOff = try await watchOn("Undo off", false, runs: turnOn)
        let sentinel = Sentinel(
            client: client, hue: hue,
            trigger: try await client.addTrigger(
                name: "Sentinel", homeID: homeID,
                kind: .event(characteristicID: hue, value: nil, rangeMin: nil, rangeMax: nil, conditions: [])
            ).createdID)
        var log = try await EventLog(client)

        _ = try await client.write(.bool(true), to: on)
        let loop = try await log.events { $0.body == .actionSetExecuted(turnOn) }
        // The scene's change was confirmed by the provider before the scene counted as run,
        // so whatever it fired is already queued before the sentinel's firing.
        let after = try await log.events(through: sentinel)
        #expect((loop + after).firings == [undoOn, undoOff, sentinel.trigger])
        let automated = loop.filter { $0.origin.kind == .automation }
        #expect(!automated.isEmpty && automated.allSatisfy { $0.origin.triggerChain.isEmpty }, "never on the wire")
        await client.close()
        provider.signal(SIGTERM)
        _ = provider.wait()
    }
}

// MARK: - Support

/// Runs an automation engine on a fresh test server for the length of `body`.
func withAutomation<T>(
    clock: ManualClock = ManualClock(nowMs: 1_714_564_800_000),
    limits: AutomationLimits = AutomationLimits(),
    _ body: (TestServer, ManualClock) async throws -> T
) async throws -> T {
    try await withPatientServer { server in
        var logger = Logger(label: "automation-test")
        logger.logLevel = .critical
        let (ready, readiness) = AsyncStream.makeStream(of: Void.self)
        let engine = AutomationEngine(
            store: server.store, clock: clock, limits: limits, logger: logger,
            onReady: { readiness.finish() })
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            for await _ in ready {}
            do {
                let result = try await body(server, clock)
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}

/// The demo home as a test sees it, and the setup steps the tests share.
struct DemoFixture {
    let client: HomeClient
    let graph: HomeGraph
    let id: ObjectID
    let on: ObjectID
    let brightness: ObjectID

    init(_ client: HomeClient) async throws {
        self.client = client
        graph = try await client.getHome().graph
        id = try #require(graph.primaryHomeID)
        on = graph.id("Living Room/Lamp/On")
        brightness = graph.id("Living Room/Lamp/Brightness")
    }

    func change(_ characteristicID: ObjectID, _ value: CharacteristicValue) -> ValueChange {
        let characteristic = graph.characteristics[characteristicID]!
        return ValueChange(
            accessoryID: characteristic.accessoryID, serviceID: characteristic.serviceID,
            characteristicID: characteristicID, value: value)
    }

    func scene(_ name: String, _ actions: [(ObjectID, CharacteristicValue)]) async throws -> ObjectID {
        let scene = try await client.addActionSet(name: name, homeID: id).createdID
        for (characteristicID, value) in actions {
            try await client.addAction(characteristicID: characteristicID, value: value, toActionSet: scene)
        }
        return scene
    }

    /// A trigger on any change of the lamp's hue, with no scene. The engine handles
    /// matches in order, so once it has fired, any firing caused by earlier changes
    /// has been published: the way to show that something did *not* fire.
    func sentinel() async throws -> Sentinel {
        let hue = graph.id("Living Room/Lamp/Hue")
        let trigger = try await client.addTrigger(
            name: "Sentinel", homeID: id,
            kind: .event(characteristicID: hue, value: nil, rangeMin: nil, rangeMax: nil, conditions: [])
        ).createdID
        return Sentinel(client: client, hue: hue, trigger: trigger)
    }
}

final class Sentinel: Sendable {
    let client: HomeClient
    let hue: ObjectID
    let trigger: ObjectID
    private let next = Mutex<Double>(1)

    init(client: HomeClient, hue: ObjectID, trigger: ObjectID) {
        self.client = client
        self.hue = hue
        self.trigger = trigger
    }

    /// Changes the hue, so the sentinel fires.
    func poke() async throws {
        let value = next.withLock { value in
            defer { value += 1 }
            return value
        }
        _ = try await client.write(.float(value), to: hue)
    }
}

/// A subscriber to value changes, firings and scene runs, read as a flat list of events.
struct EventLog {
    private var iterator: HomeSubscription.AsyncIterator
    private var pending: [HomeEvent] = []

    init(_ client: HomeClient, kinds: [EventKind] = [.valueChanged, .triggerFired, .actionSetExecuted]) async throws {
        iterator = client.subscribe(
            SubscribeRequest(
                filter: SubscriptionFilter(
                    kinds: kinds))
        ).makeAsyncIterator()
        let first = try await iterator.next()
        try #require(first?.marker?.kind == .subscribed)
    }

    /// The events from here up to and including the first that matches.
    mutating func events(_ match: (HomeEvent) -> Bool) async throws -> [HomeEvent] {
        var events: [HomeEvent] = []
        while true {
            while !pending.isEmpty {
                let event = pending.removeFirst()
                events.append(event)
                if match(event) { return events }
            }
            guard let message = try await iterator.next() else { throw HomeError(.unavailable, "the stream ended") }
            pending = message.events
        }
    }

    /// Pokes the sentinel, then returns the events up to its firing.
    mutating func events(through sentinel: Sentinel) async throws -> [HomeEvent] {
        try await sentinel.poke()
        return try await events { $0.body == .triggerFired(sentinel.trigger) }
    }
}

extension Array where Element == HomeEvent {
    /// The triggers that fired, in order.
    var firings: [ObjectID] {
        compactMap { if case .triggerFired(let id) = $0.body { id } else { nil } }
    }
}

/// A wall clock that moves only when a test moves it.
final class ManualClock: AutomationClock {
    private struct Waiter {
        var id: Int
        var deadlineMs: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var nowMs: Int64
        /// Moves with `advance` (forward only), not with `jump`.
        var monotonicMs: Int64 = 0
        var nextID = 0
        var waiters: [Waiter] = []
        var cancelled = Set<Int>()
    }

    private let state: Mutex<State>

    init(nowMs: Int64) {
        state = Mutex(State(nowMs: nowMs))
    }

    var nowMs: Int64 { state.withLock { $0.nowMs } }

    var monotonicMs: Int64 { state.withLock { $0.monotonicMs } }

    func sleep(untilMs deadlineMs: Int64) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if state.nowMs >= deadlineMs { return .success(()) }
                    state.waiters.append(Waiter(id: id, deadlineMs: deadlineMs, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Sets the time, waking every sleeper whose deadline it reaches; real time
    /// passes as far as it moves forward.
    func advance(to nowMs: Int64) {
        let due = state.withLock { state -> [Waiter] in
            state.monotonicMs += max(nowMs - state.nowMs, 0)
            state.nowMs = nowMs
            let due = state.waiters.filter { $0.deadlineMs <= nowMs }
            state.waiters.removeAll { $0.deadlineMs <= nowMs }
            return due
        }
        for waiter in due { waiter.continuation.resume() }
    }

    /// Sets the wall clock alone (as a person or NTP does), waking every sleeper:
    /// no real time passes.
    func jump(to nowMs: Int64) {
        let waiters = state.withLock { state -> [Waiter] in
            state.nowMs = nowMs
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Waits (boundedly) until something sleeps until a deadline in `range`, and returns it.
    func waitForSleeper(in range: ClosedRange<Int64>) async throws -> Int64 {
        try await withTimeout(patience, "a sleeper in \(range)") { [self] in
            while true {
                if let deadline = state.withLock({ $0.waiters.map(\.deadlineMs).first { range.contains($0) } }) {
                    return deadline
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// Waits (boundedly) until something sleeps until exactly `deadlineMs`.
    func waitForSleeper(untilMs deadlineMs: Int64) async throws {
        try await withTimeout(patience, "a sleeper until \(deadlineMs)") { [self] in
            while !state.withLock({ $0.waiters.contains { $0.deadlineMs == deadlineMs } }) {
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }
}
