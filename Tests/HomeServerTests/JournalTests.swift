import HomeModel
import Testing

@testable import HomeServer

@Suite("the event journal")
struct JournalTests {
    static func filled(capacity: Int, events: Int) -> Journal {
        var journal = Journal(id: "j", capacity: capacity)
        for _ in 0..<events {
            var event = HomeEvent(timeMs: 0, origin: .daemon, body: .primaryHome(1))
            journal.append(&event)
        }
        return journal
    }

    @Test("it numbers events from 1 and replays exactly the ones after a sequence number")
    func replayFromAnyPoint() {
        let journal = Self.filled(capacity: 100, events: 10)
        #expect(journal.lastSeq == 10)
        #expect(journal.events(after: 0)?.map(\.seq) == Array(1...10))
        #expect(journal.events(after: 7)?.map(\.seq) == [8, 9, 10])
        #expect(journal.events(after: 10)?.isEmpty == true)
        #expect(journal.events(after: 11) == nil, "never issued")
        #expect(journal.events(after: .max) == nil)
    }

    @Test("it holds exactly the last `capacity` events, across chunk boundaries")
    func window() {
        // 10 000 events with capacity 9 000: chunks of 4 096, the oldest freed whole.
        let journal = Self.filled(capacity: 9_000, events: 10_000)
        let held = journal.events(after: 1_000)
        #expect(held?.count == 9_000 && held?.first?.seq == 1_001 && held?.last?.seq == 10_000)
        #expect(held.map { zip($0, $0.dropFirst()).allSatisfy { $0.seq + 1 == $1.seq } } == true, "in order, no gap")
        #expect(journal.events(after: 999) == nil, "event 1 000 fell out of the window")
        #expect(journal.events(after: 4_095)?.first?.seq == 4_096)
        #expect(journal.events(after: 4_096)?.first?.seq == 4_097)
        #expect(journal.events(after: 9_999)?.map(\.seq) == [10_000])
    }

    @Test("a capacity of 1 holds the last event only")
    func capacityOne() {
        let journal = Self.filled(capacity: 1, events: 5)
        #expect(journal.events(after: 4)?.map(\.seq) == [5])
        #expect(journal.events(after: 3) == nil)
    }

    @Test("a capacity of 0 or less is taken as 1")
    func capacityZero() {
        let journal = Self.filled(capacity: 0, events: 3)
        #expect(journal.capacity == 1)
        #expect(journal.events(after: 2)?.map(\.seq) == [3])
    }

    @Test("sequence numbers increase by one; events after a held number come back exactly")
    func replay() {
        var journal = Journal(id: "j", capacity: 5)
        for _ in 1...8 {
            var event = HomeEvent(timeMs: 0, origin: .daemon, body: .primaryHome(1))
            journal.append(&event)
        }
        #expect(journal.lastSeq == 8)
        #expect(journal.events(after: 8)?.isEmpty == true)
        #expect(journal.events(after: 5).map { $0.map(\.seq) } == [6, 7, 8])
        #expect(journal.events(after: 3).map { $0.map(\.seq) } == [4, 5, 6, 7, 8])
        #expect(journal.events(after: 2) == nil, "event 3 is no longer held")
        #expect(journal.events(after: 9) == nil, "a number from the future is not ours")
    }

    @Test("journal ids are fresh each time")
    func ids() {
        #expect(Journal.makeID() != Journal.makeID())
        #expect(Journal.makeID().count == 32)
    }
}
