import HomeModel
@_spi(Wire) import HomeWire
import Testing

@testable import HomeServer

/// The demo home, with the lamp served by provider "lamps" and the coffee maker by
/// "plugs"; everything else is the daemon's own.
private struct PlanFixture {
    let graph = DemoHome.make(nowMs: 1_700_000_000_000)
    var optimistic: [String: Set<ObjectID>] = [:]

    func id(_ path: String) -> ObjectID {
        (try? graph.resolve(path: path)) ?? 0
    }

    func plan(_ writes: [(String, CharacteristicValue)], atomic: Bool = false, validateOnly: Bool = false)
        throws(HomeError) -> WritePlan
    {
        try WritePlan(
            writes.map { CharacteristicWrite(characteristicID: id($0.0), value: $0.1) }, atomic: atomic,
            validateOnly: validateOnly, in: graph, layoutVersion: 7,
            provider: { accessory in
                switch accessory.name {
                case "Lamp": "lamps"
                case "Coffee Maker": "plugs"
                default: nil
                }
            }, optimistic: { optimistic[$0] ?? [] })
    }
}

@Suite("planning a batch of writes from one snapshot")
struct WritePlanTests {
    @Test("each write is validated once: invalid ones are refused with their error, valid ones split by owner")
    func splitsByOwner() throws {
        let fixture = PlanFixture()
        let plan = try fixture.plan([
            ("Living Room/Lamp/Brightness", .int(40)), ("Kitchen/Coffee Maker/On", .bool(true)),
            ("Living Room/Lamp/Brightness", .int(400)), ("Living Room/Thermostat/TargetTemperature", .float(21)),
        ])
        #expect(plan.local.map(\.position) == [3])
        #expect(plan.providers.map(\.providerID) == ["lamps", "plugs"])
        #expect(plan.providers.map { $0.items.map(\.position) } == [[0], [1]])
        #expect(plan.results.map { $0?.error?.code } == [nil, nil, .invalidArgument, nil])
        #expect(plan.layoutVersion == 7)
    }

    @Test("an atomic batch that spans two providers, or a provider and the daemon, is refused whole")
    func atomicSpansOwners() {
        let fixture = PlanFixture()
        for writes in [
            [("Living Room/Lamp/On", CharacteristicValue.bool(true)), ("Kitchen/Coffee Maker/On", .bool(true))],
            [("Living Room/Lamp/On", .bool(true)), ("Living Room/Thermostat/TargetTemperature", .float(21))],
        ] {
            let error = #expect(throws: HomeError.self) { try fixture.plan(writes, atomic: true) }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message.contains("\"lamps\"") == true)
        }
    }

    @Test("an atomic batch with an invalid write aborts the valid ones: nothing to apply or send")
    func atomicInvalid() throws {
        let plan = try PlanFixture().plan(
            [("Living Room/Lamp/On", .bool(true)), ("Living Room/Lamp/Brightness", .int(-3))], atomic: true)
        #expect(plan.local.isEmpty && plan.providers.isEmpty)
        #expect(plan.results.map { $0?.error?.code } == [.aborted, .invalidArgument])
    }

    @Test("a condition that fails against the snapshot is refused in planning; in an atomic batch, all of it")
    func conditionInPlanning() throws {
        let fixture = PlanFixture()
        let writes = [
            CharacteristicWrite(characteristicID: fixture.id("Living Room/Lamp/On"), value: .bool(false)),
            CharacteristicWrite(
                characteristicID: fixture.id("Living Room/Lamp/Brightness"), value: .int(10),
                condition: WriteCondition(value: .int(79))),
            CharacteristicWrite(
                characteristicID: fixture.id("Kitchen/Coffee Maker/On"), value: .bool(true),
                condition: WriteCondition(seq: 0)),
        ]
        func plan(atomic: Bool) throws(HomeError) -> WritePlan {
            try WritePlan(
                atomic ? Array(writes.prefix(2)) : writes, atomic: atomic, validateOnly: false, in: fixture.graph,
                layoutVersion: 7,
                provider: { $0.name == "Lamp" ? "lamps" : $0.name == "Coffee Maker" ? "plugs" : nil },
                optimistic: { _ in [] }, journalID: "j1")
        }
        let loose = try plan(atomic: false)
        #expect(loose.results.map { $0?.error?.code } == [nil, .failedPrecondition, nil])
        #expect(loose.providers.map { $0.items.map(\.position) } == [[0], [2]])
        #expect(loose.conditionalProviderItems.map(\.position) == [2])
        let atomic = try plan(atomic: true)
        #expect(atomic.providers.isEmpty)
        #expect(atomic.results.map { $0?.error?.code } == [.aborted, .failedPrecondition])
    }

    @Test("a condition refused when claimed takes its write out; in an atomic batch, every write")
    func refusedClaims() throws {
        let fixture = PlanFixture()
        let writes = [
            CharacteristicWrite(characteristicID: fixture.id("Living Room/Lamp/On"), value: .bool(false)),
            CharacteristicWrite(
                characteristicID: fixture.id("Living Room/Lamp/Brightness"), value: .int(10),
                condition: WriteCondition(seq: 0)),
        ]
        let stale = HomeError(.failedPrecondition, "characteristic changed")
        for atomic in [false, true] {
            var plan = try WritePlan(
                writes, atomic: atomic, validateOnly: false, in: fixture.graph, layoutVersion: 7,
                provider: { $0.name == "Lamp" ? "lamps" : nil }, optimistic: { _ in [] }, journalID: "j1")
            plan.refuse([1: stale], writes: writes)
            #expect(plan.results[1]?.error == stale)
            if atomic {
                #expect(plan.providers.isEmpty && plan.local.isEmpty)
                #expect(plan.results[0]?.error?.code == .aborted)
            } else {
                #expect(plan.providers.map { $0.items.map(\.position) } == [[0]])
                #expect(plan.results[0] == nil)
            }
        }
    }

    @Test("validate-only decides every write and applies or sends none")
    func validateOnly() throws {
        let plan = try PlanFixture().plan(
            [("Living Room/Lamp/On", .bool(true)), ("Living Room/Lamp/Brightness", .int(-3))], validateOnly: true)
        #expect(plan.local.isEmpty && plan.providers.isEmpty)
        #expect(plan.results.map { $0?.error?.code } == [nil, .invalidArgument])
        #expect(plan.results.allSatisfy { $0 != nil })
    }

    @Test("optimistic characteristics are applied at once and still sent; in an atomic batch nothing is optimistic")
    func optimistic() throws {
        var fixture = PlanFixture()
        let on = fixture.id("Living Room/Lamp/On")
        fixture.optimistic = ["lamps": [on]]
        let writes: [(String, CharacteristicValue)] = [
            ("Living Room/Lamp/On", .bool(true)), ("Living Room/Lamp/Brightness", .int(10)),
        ]
        let plan = try fixture.plan(writes)
        #expect(plan.local.map(\.characteristicID) == [on])
        #expect(plan.providers.first?.items.count == 2)
        #expect(plan.providers.first?.confirmed.map(\.position) == [1])
        let atomic = try fixture.plan(writes, atomic: true)
        #expect(atomic.local.isEmpty)
        #expect(atomic.providers.first?.confirmed.count == 2)
    }

    @Test("a provider is sent the value as the daemon stores it, normalised to the format")
    func normalised() throws {
        let plan = try PlanFixture().plan([("Living Room/Lamp/Hue", .int(40))])
        #expect(plan.providers.first?.items.first?.checked.value == .float(40))
        #expect(plan.providers.first?.items.first?.requested == .int(40))
    }

    @Test("a provider that confirms part of an atomic batch has none of it applied")
    func partialAtomicConfirmation() throws {
        let fixture = PlanFixture()
        let plan = try fixture.plan(
            [("Living Room/Lamp/On", .bool(true)), ("Living Room/Lamp/Brightness", .int(10))], atomic: true)
        let part = try #require(plan.providers.first)
        let on = fixture.id("Living Room/Lamp/On")
        let brightness = fixture.id("Living Room/Lamp/Brightness")
        let answer = CommandAnswer(
            requestID: 1,
            writes: [
                WriteResult(characteristicID: on),
                WriteResult(characteristicID: brightness, error: HomeError(.unavailable, "bulb offline")),
            ])
        let verdicts = WritePlan.verdicts(for: part, answer: .success(answer), atomic: true)
        #expect(verdicts[on]??.code == .aborted)
        #expect(verdicts[brightness]??.code == .unavailable)
        let alone = WritePlan.verdicts(for: part, answer: .success(answer), atomic: false)
        #expect(alone[on] == .some(nil))
    }
}
