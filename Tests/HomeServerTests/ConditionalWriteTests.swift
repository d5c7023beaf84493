import HomeModel
import Testing

@testable import HomeServer

@Suite("conditional writes in the store")
struct ConditionalWriteTests {
    private let origin = Origin(kind: .client, connectionID: 2, name: "automation")

    private func lamp(_ store: HomeStore, _ name: String) -> ObjectID {
        (try? store.snapshot().graph.resolve(path: "Living Room/Lamp/\(name)")) ?? 0
    }

    @Test("a read gives the seq of the event that last changed the value; 0 before any change")
    func readsCarryChangeSeq() {
        let store = HomeStore(graph: DemoHome.make(nowMs: 0))
        let brightness = lamp(store, "Brightness")
        #expect(store.read([brightness]).reads[0].changeSeq == 0)
        let written = store.write([CharacteristicWrite(characteristicID: brightness, value: .int(40))], origin: origin)
        #expect(written.results[0].seq > 0)
        #expect(store.read([brightness]).reads[0].changeSeq == written.results[0].seq)
        _ = store.write([CharacteristicWrite(characteristicID: brightness, value: .int(40))], origin: origin)
        #expect(
            store.read([brightness]).reads[0].changeSeq == written.results[0].seq,
            "a write that changes nothing leaves the seq of the last change")
    }

    @Test("a condition that holds: written; one that no longer holds: FAILED_PRECONDITION, nothing written")
    func staleConditionFails() {
        let store = HomeStore(graph: DemoHome.make(nowMs: 0))
        let brightness = lamp(store, "Brightness")
        let read = store.read([brightness]).reads[0]
        let first = store.write(
            [
                CharacteristicWrite(
                    characteristicID: brightness, value: .int(50), condition: WriteCondition(seq: read.changeSeq))
            ], origin: origin)
        #expect(first.results[0].error == nil)
        let seqBefore = store.lastSeq
        // The second writer read the same value and seq as the first.
        let second = store.write(
            [
                CharacteristicWrite(
                    characteristicID: brightness, value: .int(60),
                    condition: WriteCondition(value: read.value, seq: read.changeSeq))
            ], origin: origin)
        #expect(second.results[0].error?.code == .failedPrecondition)
        #expect(second.results[0].error?.message.contains("is 50, last changed at seq \(first.results[0].seq)") == true)
        #expect(store.read([brightness]).reads[0].value == .int(50))
        #expect(store.lastSeq == seqBefore, "a refused write publishes nothing")
    }

    @Test("in an atomic batch a condition that does not hold fails the whole batch")
    func atomicBatch() {
        let store = HomeStore(graph: DemoHome.make(nowMs: 0))
        let brightness = lamp(store, "Brightness")
        let hue = lamp(store, "Hue")
        let before = store.snapshot()
        let outcome = store.write(
            [
                CharacteristicWrite(characteristicID: hue, value: .float(100)),
                CharacteristicWrite(
                    characteristicID: brightness, value: .int(10), condition: WriteCondition(value: .int(79))),
            ], atomic: true, origin: origin)
        #expect(outcome.results.map { $0.error?.code } == [.aborted, .failedPrecondition])
        #expect(store.snapshot().graph == before.graph)
        #expect(store.lastSeq == before.seq)
        // Not atomic: the other write is applied.
        let loose = store.write(
            [
                CharacteristicWrite(characteristicID: hue, value: .float(100)),
                CharacteristicWrite(
                    characteristicID: brightness, value: .int(10), condition: WriteCondition(value: .int(79))),
            ], origin: origin)
        #expect(loose.results.map { $0.error?.code } == [nil, .failedPrecondition])
    }

    @Test("a validate-only batch reports a condition that does not hold, and writes nothing")
    func validateOnly() {
        let store = HomeStore(graph: DemoHome.make(nowMs: 0))
        let brightness = lamp(store, "Brightness")
        let outcome = store.write(
            [CharacteristicWrite(characteristicID: brightness, value: .int(10), condition: WriteCondition(seq: 99))],
            validateOnly: true, origin: origin)
        #expect(outcome.results[0].error?.code == .failedPrecondition)
    }
}
