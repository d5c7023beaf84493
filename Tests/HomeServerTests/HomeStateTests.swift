import HomeModel
import Testing

@testable import HomeServer

/// The store's rules on its state as a value (`HomeState.commit(StoreChange)`):
/// no lock, no storage, no subscribers.
@Suite("the store's state as a value (HomeState)")
struct HomeStateTests {
    private static func state() -> HomeState {
        HomeState(graph: DemoHome.make(nowMs: 0), journal: Journal(id: "j1", capacity: 1_000))
    }

    private static func id(_ path: String, in state: HomeState) throws -> ObjectID {
        try state.graph.resolve(path: path)
    }

    private static let client = Origin(kind: .client, connectionID: 7, name: "test")

    /// Commits and journals a change, as the store does once it is durable.
    @discardableResult
    private static func commit(_ change: StoreChange, to state: inout HomeState, at nowMs: Int64 = 5)
        throws(HomeError) -> StateCommit
    {
        let commit = try state.commit(change, nowMs: nowMs, origin: client, keepingUndo: false)
        for index in commit.events.indices {
            var event = commit.event(at: index)
            state.journal.append(&event)
        }
        return commit
    }

    private static func write(_ id: ObjectID, _ value: CharacteristicValue, if condition: CharacteristicValue? = nil)
        -> CharacteristicWrite
    {
        CharacteristicWrite(characteristicID: id, value: value, condition: condition.map { WriteCondition(value: $0) })
    }

    @Test(
        "a write is numbered from the journal; a values commit moves the graph's version, a layout one the layout's too"
    )
    func commitMovesVersions() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let written = try Self.commit(
            .write(WriteBatch(writes: [Self.write(brightness, .int(12))]), enforceWritable: true), to: &state)
        #expect(written.result.writes.map(\.seq) == [1])
        #expect(written.event(at: 0).seq == 1 && written.event(at: 0).timeMs == 5)
        #expect((state.layoutVersion, state.graphVersion) == (0, 1))
        #expect(state.graph.characteristics[brightness]?.value == .int(12))
        #expect(state.graph.characteristics[brightness]?.changeSeq == 1)

        let lamp = try Self.id("Living Room/Lamp", in: state)
        let renamed = try Self.commit(.layout(.rename(id: lamp, name: "Reading Lamp")), to: &state, at: 6)
        #expect(renamed.firstSeq == 2, "numbers go on from the journal's last")
        #expect(renamed.layoutBefore?.accessories[lamp]?.name == "Lamp", "the record keeps the layout before")
        #expect(state.graph.accessories[lamp]?.name == "Reading Lamp")
        #expect((state.layoutVersion, state.graphVersion) == (1, 2))
    }

    @Test("a change the state refuses leaves it as it was: graph, claims, versions, journal")
    func refusedChange() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        state.conditionalWritesInFlight = [brightness]
        #expect(throws: HomeError.self) { try Self.commit(.runScene(999), to: &state) }
        #expect(throws: HomeError.self) { try Self.commit(.layout(.rename(id: 999, name: "x")), to: &state) }
        #expect(state.conditionalWritesInFlight == [brightness])
        #expect(state.graph.characteristics[brightness] != nil, "the graph moved back from the change")
        #expect((state.layoutVersion, state.graphVersion, state.journal.lastSeq) == (0, 0, 0))
    }

    @Test("an atomic batch with one invalid write applies none: the others fail ABORTED and nothing is emitted")
    func atomicBatch() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let before = state.graph.characteristics[brightness]?.value
        let commit = try Self.commit(
            .write(
                WriteBatch(
                    writes: [Self.write(brightness, .int(30)), Self.write(brightness, .int(500))], atomic: true),
                enforceWritable: true), to: &state)
        #expect(commit.result.writes.map(\.error?.code) == [.aborted, .invalidArgument])
        #expect(commit.events.isEmpty)
        #expect(state.graph.characteristics[brightness]?.value == before)
    }

    @Test("a validate-only batch checks every write and changes nothing")
    func validateOnly() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let commit = try Self.commit(
            .write(
                WriteBatch(writes: [Self.write(brightness, .int(30)), Self.write(4242, .int(1))], validateOnly: true),
                enforceWritable: true), to: &state)
        #expect(commit.result.writes.map(\.error?.code) == [nil, .notFound])
        #expect(commit.events.isEmpty)
        #expect(state.graph.characteristics[brightness]?.value != .int(30))
    }

    @Test("a write that leaves a value unchanged emits nothing; an occurrence (a doorbell press) always does")
    func occurrences() throws {
        var state = Self.state()
        let on = try Self.id("Living Room/Lamp/On", in: state)
        let press = try Self.id("Hallway/Doorbell/ProgrammableSwitchEvent", in: state)
        let current = try #require(state.graph.characteristics[on]?.value)
        let same = try Self.commit(
            .write(WriteBatch(writes: [Self.write(on, current)]), enforceWritable: true), to: &state)
        #expect(same.events.isEmpty && same.result.writes[0].seq == 0)
        for _ in 0..<2 {
            let pressed = try Self.commit(
                .write(WriteBatch(writes: [Self.write(press, .uint(0))]), enforceWritable: false), to: &state)
            #expect(pressed.events.count == 1, "every press is an event")
            #expect(pressed.events[0].mergeable == false, "and never merged with the one before")
        }
    }

    @Test("a conditional write to a provider is claimed: a second is refused until the confirmation releases it")
    func claims() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let current = try #require(state.graph.characteristics[brightness]?.value)
        let batch = WriteBatch(writes: [Self.write(brightness, .int(40), if: current)])
        let first = try Self.commit(.planWrites(batch, owners: StubOwners.all("lamps")), to: &state)
        guard case .planning(.planned(let plan, let applied)) = first.result else {
            Issue.record("a provider's write is planned, not applied: \(first.result)")
            return
        }
        #expect(applied.isEmpty && first.events.isEmpty, "nothing applied before the provider answers")
        #expect(state.conditionalWritesInFlight == [brightness])

        let second = try Self.commit(.planWrites(batch, owners: StubOwners.all("lamps")), to: &state)
        guard case .planning(.planned(let refusedPlan, _)) = second.result else {
            Issue.record("planned: \(second.result)")
            return
        }
        let refusal = try #require(refusedPlan.results[0]?.error)
        #expect(refusal.code == .failedPrecondition)
        #expect(refusal.message.contains("waiting for its provider's answer"))
        #expect(refusedPlan.providers.isEmpty, "nothing of it is sent")

        let confirmed = try Self.commit(
            .confirm(
                Confirmation(
                    items: plan.providers[0].items, plannedAt: plan.layoutVersion, atomic: false,
                    releasing: [brightness])), to: &state)
        #expect(confirmed.result.writes.map(\.error) == [nil])
        #expect(state.conditionalWritesInFlight.isEmpty, "the confirmation's commit ends the claim")
        #expect(state.graph.characteristics[brightness]?.value == .int(40))
    }

    @Test("an atomic batch across a provider and the daemon is refused whole")
    func atomicAcrossOwners() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let coffee = try Self.id("Kitchen/Coffee Maker/On", in: state)
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let owners = StubOwners { $0.id == lamp ? "lamps" : nil }
        let error = #expect(throws: HomeError.self) {
            try Self.commit(
                .planWrites(
                    WriteBatch(
                        writes: [Self.write(brightness, .int(40)), Self.write(coffee, .bool(true))], atomic: true),
                    owners: owners), to: &state)
        }
        #expect(error?.code == .failedPrecondition)
        #expect(state.graphVersion == 0)
    }

    @Test("a confirmation planned before a layout change is checked again: the characteristic removed is NOT_FOUND")
    func confirmationAfterLayoutChange() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let planned = try Self.commit(
            .planWrites(WriteBatch(writes: [Self.write(brightness, .int(40))]), owners: StubOwners.all("lamps")),
            to: &state)
        guard case .planning(.planned(let plan, _)) = planned.result else {
            Issue.record("planned: \(planned.result)")
            return
        }
        try Self.commit(.layout(.remove(id: lamp)), to: &state)
        let confirmed = try Self.commit(
            .confirm(
                Confirmation(
                    items: plan.providers[0].items, plannedAt: plan.layoutVersion, atomic: false, releasing: [])),
            to: &state)
        #expect(confirmed.result.writes.map(\.error?.code) == [.notFound])
        #expect(confirmed.events.isEmpty)
    }

    @Test("a provider's report applies only its own: another's value and reachability are PERMISSION_DENIED")
    func ownerChecks() throws {
        var state = Self.state()
        let on = try Self.id("Living Room/Lamp/On", in: state)
        let temperature = try Self.id("Bedroom/Temperature Sensor/CurrentTemperature", in: state)
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let commit = try Self.commit(
            .report(
                [
                    ProviderReport(
                        values: [Self.write(temperature, .float(21.5)), Self.write(on, .bool(false))],
                        reachability: [(accessoryID: lamp, reachable: false)])
                ], owner: "acme", readingBack: nil), to: &state)
        guard case .reports(let refused, _, _) = commit.result else {
            Issue.record("a report's result: \(commit.result)")
            return
        }
        #expect(refused[0].map(\.error?.code) == [.permissionDenied, .permissionDenied, .permissionDenied])
        #expect(refused[0][0].error?.message.contains("provider \"simulator\", not of \"acme\"") == true)
        #expect(commit.events.isEmpty, "nothing of another provider's changed")

        let own = try Self.commit(
            .report(
                [ProviderReport(values: [Self.write(temperature, .float(21.5))], reachability: [])],
                owner: DemoHome.provider, readingBack: [temperature]), to: &state)
        guard case .reports(let none, _, let readBack) = own.result else { return }
        #expect(none == [[]], "a read-only reading is the provider's to report")
        #expect(readBack?.first?.value == .float(21.5), "read back in the same commit")
    }

    @Test(
        "a report's value off the step is kept on it and named as adjusted the first time only; one on the step is not"
    )
    func adjustedValues() throws {
        var state = Self.state()
        let temperature = try Self.id("Bedroom/Temperature Sensor/CurrentTemperature", in: state)
        func report(_ value: Double) throws -> (refused: [[WriteResult]], adjusted: [AdjustedValue]) {
            let commit = try Self.commit(
                .report(
                    [ProviderReport(values: [Self.write(temperature, .float(value))], reachability: [])],
                    owner: DemoHome.provider, readingBack: nil), to: &state)
            guard case .reports(let refused, let adjusted, _) = commit.result else {
                Issue.record("a report's result is .reports, not \(commit.result)")
                return ([], [])
            }
            return (refused, adjusted)
        }
        let offStep = try report(21.57)
        #expect(offStep.refused == [[]])
        #expect(offStep.adjusted.map(\.characteristicID) == [temperature])
        #expect(offStep.adjusted.first?.kept != .float(21.57))
        #expect(state.graph.characteristics[temperature]?.value == offStep.adjusted.first?.kept)

        #expect(try report(19.5).adjusted.isEmpty, "on the step: nothing adjusted")
        let again = try report(22.43)
        #expect(again.adjusted.isEmpty, "adjusted again, but named once per characteristic")
        #expect(state.graph.characteristics[temperature]?.value != .float(22.43), "kept on the step all the same")
    }

    @Test("a registration planned on a graph that changed since is not installed; made on the graph as it is, it is")
    func staleRegistration() throws {
        var state = Self.state()
        let home = try #require(state.graph.homes.keys.first)
        let accessory = ProvidedAccessory(
            key: "p1", name: "Porch Light", category: .lightbulb,
            services: [
                ProvidedService(
                    type: "Lightbulb", characteristics: [ProvidedCharacteristic(type: "On", value: .bool(true))])
            ])
        var planned = state.graph
        let registration = try planned.register(
            [accessory], removing: [], provider: "acme", homeID: home, nowMs: 1)
        let version = state.graphVersion
        let on = try Self.id("Living Room/Lamp/On", in: state)
        try Self.commit(.write(WriteBatch(writes: [Self.write(on, .bool(false))]), enforceWritable: true), to: &state)

        let stale = try Self.commit(
            .installRegistration(planned: planned, registration, plannedAtVersion: version), to: &state)
        guard case .registered(nil) = stale.result else {
            Issue.record("a stale plan is not installed: \(stale.result)")
            return
        }
        #expect(!stale.installed && stale.events.isEmpty)
        #expect(state.graph.accessories.values.allSatisfy { $0.provider != "acme" })
        #expect(state.graph.characteristics[on]?.value == .bool(false), "the write in between is kept")

        let made = try Self.commit(
            .register(RegistrationRequest(accessories: [accessory], removing: [], provider: "acme", homeID: home)),
            to: &state)
        guard case .registered(let done?) = made.result else {
            Issue.record("registered: \(made.result)")
            return
        }
        #expect(made.events.count == done.changes.count)
        #expect(state.graph.accessories.values.contains { $0.provider == "acme" && $0.name == "Porch Light" })
    }

    @Test("undoing a values commit puts each value back and drops its value events, not its others")
    func undoValues() throws {
        var state = Self.state()
        let brightness = try Self.id("Living Room/Lamp/Brightness", in: state)
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let before = try #require(state.graph.characteristics[brightness])
        var commit = try state.commit(
            .report(
                [
                    ProviderReport(
                        values: [Self.write(brightness, .int(10)), Self.write(brightness, .int(20))],
                        reachability: [(accessoryID: lamp, reachable: false)])
                ], owner: nil, readingBack: nil), nowMs: 9, origin: Self.client, keepingUndo: true)
        #expect(commit.valueRow(in: state.graph) == [SavedValue(characteristicID: brightness, value: .int(20))])
        state.undoValues(&commit)
        let after = try #require(state.graph.characteristics[brightness])
        #expect(
            (after.value, after.lastUpdatedMs, after.changeSeq) == (
                before.value, before.lastUpdatedMs, before.changeSeq
            ))
        #expect(commit.events.map(\.body) == [.reachability(accessoryID: lamp, reachable: false)])
    }

    @Test("undoing a layout commit puts back the graph and the versions")
    func undoLayout() throws {
        var state = Self.state()
        let lamp = try Self.id("Living Room/Lamp", in: state)
        let commit = try state.commit(.layout(.remove(id: lamp)), nowMs: 9, origin: Self.client, keepingUndo: true)
        #expect(state.graph.accessories[lamp] == nil)
        state.undoLayout(commit)
        #expect(state.graph.accessories[lamp] != nil)
        #expect((state.layoutVersion, state.graphVersion) == (0, 0))
    }
}
