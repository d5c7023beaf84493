import HomeModel
import Synchronization
import Testing

@testable import HomeServer

/// Persistence that records what it is given and refuses value appends on demand.
final class RecordingPersistence: HomePersistence {
    let refuseAppends = Atomic<Bool>(false)
    let appended = Mutex<[[SavedValue]]>([])
    let folded = Mutex<[[ObjectID]]>([])

    func saveLayout(from old: HomeGraph, to new: HomeGraph, values: [Characteristic]) throws(HomeError) {
        folded.withLock { $0.append(values.map(\.id).sorted()) }
    }

    func append(_ record: CommitRecord) throws(HomeError) {
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
}
