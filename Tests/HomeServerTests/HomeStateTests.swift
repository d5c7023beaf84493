import HomeModel
import Testing

@testable import HomeServer

/// The store's rules on its state as a value: no lock, no storage, no subscribers.
@Suite("the store's state as a value (HomeState)")
struct HomeStateTests {
    private static func state() -> HomeState {
        HomeState(graph: DemoHome.make(nowMs: 0), journal: Journal(id: "j1", capacity: 1_000))
    }

    private static func id(_ path: String, in state: HomeState) throws -> ObjectID {
        try state.graph.resolve(path: path)
    }

    @Test(
        "a change is numbered from the journal; installing it moves the graph's version, a layout change the layout's too"
    )
    func installMovesVersions() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        var values = state.begin(.values, nowMs: 5, keepingUndo: false)
        let results = HomeStore.apply(
            [CharacteristicWrite(characteristicID: brightness, value: .int(12))], atomic: false, validateOnly: false,
            enforceWritable: true, journalID: "j1", in: &values)
        #expect(results.map(\.seq) == [1])
        #expect(state.install(&values) == 1, "the graph stands after the change's one event")
        #expect((state.layoutVersion, state.graphVersion) == (0, 1))
        #expect(state.graph.characteristics[brightness]?.value == .int(12))

        var layout = state.begin(.layout, nowMs: 6, keepingUndo: false)
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let applied = try layout.graph.apply(.rename(id: lamp, name: "Reading Lamp"), nowMs: 6)
        for event in applied.events { layout.emit(event) }
        #expect(layout.firstSeq == 1, "nothing journaled yet: numbers start after the journal's last")
        _ = state.install(&layout)
        #expect((state.layoutVersion, state.graphVersion) == (1, 2))
    }

    @Test("a change that threw leaves the state as it was: values, claims and versions")
    func abandonedChange() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        state.conditionalWritesInFlight = [brightness]
        var transaction = state.begin(.values, nowMs: 5, keepingUndo: false)
        #expect(transaction.claims == [brightness], "the claims move in with the change")
        #expect(state.conditionalWritesInFlight.isEmpty)
        transaction.claims.insert(999)
        state.abandon(&transaction)
        #expect(state.conditionalWritesInFlight == [brightness], "the change's claims are not kept")
        #expect(state.graph.characteristics[brightness] != nil, "the graph is back")
        #expect((state.layoutVersion, state.graphVersion) == (0, 0))
    }

    @Test("an atomic batch with one invalid write applies none: the others fail ABORTED and nothing is emitted")
    func atomicBatch() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        var transaction = state.begin(.values, nowMs: 5, keepingUndo: false)
        let results = HomeStore.apply(
            [
                CharacteristicWrite(characteristicID: brightness, value: .int(30)),
                CharacteristicWrite(characteristicID: brightness, value: .int(500)),
            ], atomic: true, validateOnly: false, enforceWritable: true, journalID: "j1", in: &transaction)
        #expect(results.map(\.error?.code) == [.aborted, .invalidArgument])
        #expect(transaction.events.isEmpty)
        _ = state.install(&transaction)
        #expect(state.graph.characteristics[brightness]?.value != .int(30))
    }

    @Test("a conditional write claimed is refused to a second writer until its claim is released")
    func claims() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let current = try #require(state.graph.characteristics[brightness]?.value)
        let write = CharacteristicWrite(
            characteristicID: brightness, value: .int(40), condition: WriteCondition(value: current))
        func plan() throws -> WritePlan {
            try WritePlan(
                [write], atomic: false, validateOnly: false, in: state.graph, layoutVersion: state.layoutVersion,
                provider: { _ in "lamps" }, optimistic: { _ in [] }, journalID: "j1")
        }
        // Planned before `begin`, which moves the graph into the change.
        let first = try plan()
        let second = try plan()
        #expect(first.conditionalProviderItems.map(\.characteristicID) == [brightness])
        var transaction = state.begin(.values, nowMs: 5, keepingUndo: false)
        // Called outside #expect, which would call it on a copy.
        let claimed = transaction.claim(first.conditionalProviderItems, journalID: "j1")
        #expect(claimed.isEmpty)
        let refused = transaction.claim(second.conditionalProviderItems, journalID: "j1")
        #expect(refused[0]?.code == .failedPrecondition)
        #expect(refused[0]?.message.contains("waiting for its provider's answer") == true)
        _ = state.install(&transaction)
        #expect(state.conditionalWritesInFlight == [brightness])

        var release = state.begin(.values, nowMs: 6, keepingUndo: false)
        release.claims.remove(brightness)
        _ = state.install(&release)
        let third = try plan()
        var again = state.begin(.values, nowMs: 7, keepingUndo: false)
        let claimedAgain = again.claim(third.conditionalProviderItems, journalID: "j1")
        #expect(claimedAgain.isEmpty)
    }

    @Test("a confirmation planned before a layout change is checked again: the characteristic removed is NOT_FOUND")
    func confirmationAfterLayoutChange() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let plan = try WritePlan(
            [CharacteristicWrite(characteristicID: brightness, value: .int(40))], atomic: false, validateOnly: false,
            in: state.graph, layoutVersion: state.layoutVersion, provider: { _ in "lamps" },
            optimistic: { _ in [] }, journalID: "j1")
        var layout = state.begin(.layout, nowMs: 5, keepingUndo: false)
        for event in try layout.graph.apply(.remove(id: lamp), nowMs: 5).events { layout.emit(event) }
        _ = state.install(&layout)

        var confirmation = state.begin(.values, nowMs: 6, keepingUndo: false)
        let results = HomeStore.apply(
            plan.providers[0].items, sameLayout: confirmation.layoutVersion == plan.layoutVersion, atomic: false,
            checkingConditions: false, journalID: "j1", in: &confirmation)
        #expect(results.map(\.error?.code) == [.notFound])
        #expect(confirmation.events.isEmpty)
    }
}
