import HomeModel
import Synchronization
import Testing

@testable import HomeServer

/// Persistence that records what it is given and refuses value appends, or
/// layout saves, on demand.
final class RecordingPersistence: HomePersistence {
    let refuseAppends = Atomic<Bool>(false)
    let refuseLayouts = Atomic<Bool>(false)
    let appended = Mutex<[[SavedValue]]>([])
    let folded = Mutex<[[ObjectID]]>([])

    func append(_ record: CommitRecord) throws(HomeError) {
        if let layout = record.layout {
            if refuseLayouts.load(ordering: .relaxed) {
                throw HomeError(.resourceExhausted, "database x: saving the layout failed: database or disk is full")
            }
            folded.withLock { $0.append(layout.unfolded.map(\.id).sorted()) }
            return
        }
        if refuseAppends.load(ordering: .relaxed) {
            throw HomeError(.resourceExhausted, "database x: logging values failed: database or disk is full")
        }
        appended.withLock { $0.append(record.values) }
    }

    func foldValueLog(into characteristics: [Characteristic]) throws(HomeError) {
        folded.withLock { $0.append(characteristics.map(\.id).sorted()) }
    }
}

@Suite("the store and the value log")
struct ValueLogFailureTests {
    @Test("each characteristic a commit changed is logged once, with its last value, before it is published")
    func loggedOnce() throws {
        let persistence = RecordingPersistence()
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: persistence)
        let graph = store.snapshot().graph
        let brightness = try graph.resolve(path: "Living Room/Lamp/Brightness")
        let on = try graph.resolve(path: "Living Room/Lamp/On")
        let outcome = store.write(
            [
                CharacteristicWrite(characteristicID: brightness, value: .int(1)),
                CharacteristicWrite(characteristicID: on, value: .bool(false)),
                CharacteristicWrite(characteristicID: brightness, value: .int(2)),
            ], origin: .daemon)
        #expect(outcome.results.allSatisfy { $0.error == nil })
        let logged = persistence.appended.withLock { $0 }
        #expect(logged.count == 1)
        #expect(
            Set(logged.first ?? []) == [
                SavedValue(characteristicID: brightness, value: .int(2)),
                SavedValue(characteristicID: on, value: .bool(false)),
            ])
        // The fold saves what was logged since the last one, then nothing more.
        #expect(try store.foldValueLog() == 2)
        #expect(persistence.folded.withLock { $0 } == [[on, brightness].sorted()])
        #expect(try store.foldValueLog() == 0)
    }

    @Test("a value the log refuses is not applied, not published, and each write says why")
    func refused() throws {
        let persistence = RecordingPersistence()
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: persistence)
        let before = store.snapshot()
        let brightness = try before.graph.resolve(path: "Living Room/Lamp/Brightness")
        persistence.refuseAppends.store(true, ordering: .relaxed)
        let outcome = store.write(
            [
                CharacteristicWrite(characteristicID: brightness, value: .int(1)),
                CharacteristicWrite(characteristicID: 999_999, value: .int(1)),
            ], origin: .daemon)
        #expect(
            outcome.results[0].error
                == HomeError(
                    .resourceExhausted,
                    "not applied: the value could not be saved: database x: logging values failed: database or disk is full"
                ))
        #expect(outcome.results[1].error?.code == .notFound)
        let after = store.snapshot()
        #expect(after.seq == before.seq)
        #expect(after.graph.characteristics[brightness] == before.graph.characteristics[brightness])
        // Once the log takes values again, the write goes through.
        persistence.refuseAppends.store(false, ordering: .relaxed)
        #expect(
            store.write([CharacteristicWrite(characteristicID: brightness, value: .int(1))], origin: .daemon)
                .results[0].error == nil)
        #expect(store.snapshot().seq == before.seq + 1)
    }

    @Test("a layout change the log refuses is taken back whole: graph, versions and values marked, nothing published")
    func refusedLayout() throws {
        let persistence = RecordingPersistence()
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: persistence)
        let before = store.snapshot()
        let lamp = try before.graph.resolve(path: "Living Room/Lamp")
        let brightness = try before.graph.resolve(path: "Living Room/Lamp/Brightness")
        _ = store.write([CharacteristicWrite(characteristicID: brightness, value: .int(3))], origin: .daemon)
        let versions = store.withState { ($0.core.layoutVersion, $0.core.graphVersion) }
        persistence.refuseLayouts.store(true, ordering: .relaxed)
        let error = #expect(throws: HomeError.self) {
            try store.changeLayout(.rename(id: lamp, name: "Reading Lamp"), origin: .daemon)
        }
        #expect(error?.message.contains("saving the layout failed") == true)
        #expect(store.snapshot().graph.accessories[lamp]?.name == "Lamp")
        #expect(store.snapshot().seq == before.seq + 1, "only the write before it was published")
        #expect(store.withState { ($0.core.layoutVersion, $0.core.graphVersion) } == versions)
        #expect(persistence.folded.withLock { $0 }.isEmpty)
        // Once the layout can be saved again, the value logged since is folded with it.
        persistence.refuseLayouts.store(false, ordering: .relaxed)
        try store.changeLayout(.rename(id: lamp, name: "Reading Lamp"), origin: .daemon)
        #expect(persistence.folded.withLock { $0 }.last?.contains(brightness) == true)
        #expect(store.withState { $0.core.unfoldedValueIDs }.isEmpty)
    }

    @Test("calls' writes applied together are one log row, each call's outcome its own, each seeing those before it")
    func appliedTogether() throws {
        let persistence = RecordingPersistence()
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: persistence)
        let before = store.snapshot()
        let brightness = try before.graph.resolve(path: "Living Room/Lamp/Brightness")
        let on = try before.graph.resolve(path: "Living Room/Lamp/On")
        let outcomes = store.applyOwnWrites(
            [
                .init(
                    writes: [.init(characteristicID: brightness, value: .int(10))], atomic: false, validateOnly: false),
                // Atomic with an invalid write: nothing of it applied.
                .init(
                    writes: [
                        .init(characteristicID: on, value: .bool(false)),
                        .init(characteristicID: 999_999, value: .int(1)),
                    ],
                    atomic: true, validateOnly: false),
                // Conditional on the first call's value: it holds.
                .init(
                    writes: [
                        .init(characteristicID: brightness, value: .int(20), condition: WriteCondition(value: .int(10)))
                    ],
                    atomic: false, validateOnly: false),
            ], origin: .daemon, owners: StubOwners.none)
        #expect(outcomes.count == 3)
        #expect(outcomes[0].results.map(\.error) == [nil])
        #expect(outcomes[1].results.map { $0.error?.code } == [.aborted, .notFound])
        #expect(outcomes[2].results.map(\.error) == [nil])
        #expect(persistence.appended.withLock { $0 } == [[SavedValue(characteristicID: brightness, value: .int(20))]])
        let after = store.snapshot()
        #expect(after.graph.characteristics[brightness]?.value == .int(20))
        #expect(after.graph.characteristics[on]?.value == before.graph.characteristics[on]?.value)
        // Two value events, and every outcome's seq covers them.
        #expect(after.seq == before.seq + 2)
        #expect(outcomes.allSatisfy { $0.seq == after.seq })
    }

    @Test("calls applied together that the log refuses all fail, nothing applied or published")
    func refusedTogether() throws {
        let persistence = RecordingPersistence()
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: persistence)
        let before = store.snapshot()
        let brightness = try before.graph.resolve(path: "Living Room/Lamp/Brightness")
        let on = try before.graph.resolve(path: "Living Room/Lamp/On")
        persistence.refuseAppends.store(true, ordering: .relaxed)
        let outcomes = store.applyOwnWrites(
            [
                .init(
                    writes: [.init(characteristicID: brightness, value: .int(10))], atomic: false, validateOnly: false),
                .init(writes: [.init(characteristicID: on, value: .bool(false))], atomic: false, validateOnly: false),
            ], origin: .daemon, owners: StubOwners.none)
        #expect(outcomes.flatMap(\.results).allSatisfy { $0.error?.code == .resourceExhausted })
        let after = store.snapshot()
        #expect(after.seq == before.seq)
        #expect(after.graph.characteristics[brightness] == before.graph.characteristics[brightness])
        #expect(after.graph.characteristics[on] == before.graph.characteristics[on])
    }

    @Test("reports applied together: each refused or applied as alone; if the log refuses them, every value of each")
    func reportsTogether() throws {
        let persistence = RecordingPersistence()
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: persistence)
        let before = store.snapshot()
        let brightness = try before.graph.resolve(path: "Living Room/Lamp/Brightness")
        let on = try before.graph.resolve(path: "Living Room/Lamp/On")
        let origin = Origin(kind: .provider, connectionID: 1, name: DemoHome.provider)
        let reports: [(values: [CharacteristicWrite], reachability: [(accessoryID: ObjectID, reachable: Bool)])] = [
            ([CharacteristicWrite(characteristicID: brightness, value: .int(30))], []),
            ([CharacteristicWrite(characteristicID: on, value: .string("yes"))], []),
            ([CharacteristicWrite(characteristicID: brightness, value: .int(31))], []),
        ]
        let outcomes = store.report(together: reports, provider: DemoHome.provider, origin: origin)
        #expect(outcomes.map { $0.rejected.map { $0.error?.code } } == [[], [.invalidArgument], []])
        #expect(persistence.appended.withLock { $0 } == [[SavedValue(characteristicID: brightness, value: .int(31))]])
        #expect(store.snapshot().graph.characteristics[brightness]?.value == .int(31))

        persistence.refuseAppends.store(true, ordering: .relaxed)
        let seq = store.lastSeq
        let refused = store.report(together: reports, provider: DemoHome.provider, origin: origin)
        #expect(
            refused.map { $0.rejected.map { $0.error?.code } } == [
                [.resourceExhausted], [.invalidArgument], [.resourceExhausted],
            ])
        #expect(store.lastSeq == seq)
        #expect(store.snapshot().graph.characteristics[brightness]?.value == .int(31))
    }

    @Test("calls applied together stop at the first with a provider's characteristic")
    func stopsAtAProvidersWrite() throws {
        let store = HomeStore(graph: DemoHome.make(nowMs: 0), persistence: RecordingPersistence())
        let graph = store.snapshot().graph
        let brightness = try graph.resolve(path: "Living Room/Lamp/Brightness")
        let coffee = try graph.resolve(path: "Kitchen/Coffee Maker/On")
        let lamp = try #require(graph.characteristics[brightness]?.accessoryID)
        let outcomes = store.applyOwnWrites(
            [
                .init(
                    writes: [.init(characteristicID: coffee, value: .bool(true))], atomic: false, validateOnly: false),
                .init(
                    writes: [.init(characteristicID: brightness, value: .int(5))], atomic: false, validateOnly: false),
                .init(
                    writes: [.init(characteristicID: coffee, value: .bool(false))], atomic: false, validateOnly: false),
            ], origin: .daemon, owners: StubOwners { $0.id == lamp ? "lamp-provider" : nil })
        // The lamp is a provider's: the calls from it on are left to the caller.
        #expect(outcomes.map { $0.results.map(\.error) } == [[nil]])
        let after = store.snapshot().graph
        #expect(after.characteristics[coffee]?.value == .bool(true))
        #expect(after.characteristics[brightness]?.value == graph.characteristics[brightness]?.value)
    }
}
