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

    static func bigValue(_ bytes: Int) -> HomeEvent {
        HomeEvent(
            timeMs: 0, origin: .daemon,
            body: .value(
                ValueChange(
                    accessoryID: 1, serviceID: 2, characteristicID: 3,
                    value: .data([UInt8](repeating: 7, count: bytes)))))
    }

    @Test("large values are held within the byte capacity; a resume past what was freed is refused, never a gap")
    func byteBound() {
        // A million bytes at most: 150 values of 64 KiB (9.8 MB) must not all stay.
        var journal = Journal(id: "j", capacity: 100_000, byteCapacity: 1_000_000)
        for _ in 0..<150 {
            var event = Self.bigValue(65_536)
            journal.append(&event)
        }
        let eventSize = Self.bigValue(65_536).approximateSize
        // At most the capacity, plus the chunk being filled: an eighth of it and one event.
        #expect(journal.heldBytes <= 1_000_000 + 1_000_000 / 8 + eventSize)
        #expect(journal.heldBytes >= 1_000_000 - 1_000_000 / 8 - eventSize, "it holds what it may")
        let first = journal.firstHeldSeq
        #expect(first > 1 && first < 150)
        #expect(journal.events(after: 0) == nil, "the first events were freed")
        #expect(journal.events(after: first - 2) == nil)
        let held = journal.events(after: first - 1)
        #expect(held?.map(\.seq) == Array(first...150), "from the first held on: every event, in order")
        #expect(journal.unheldReason(after: 0).contains("within 1000000 bytes of them; it holds \(first) to 150"))
    }

    @Test("small events are bounded by count alone: a hundred thousand fit in the default byte capacity")
    func smallEventsByCount() {
        var journal = Journal(id: "j", capacity: 100_000)
        for _ in 0..<100_000 {
            var event = HomeEvent(
                timeMs: 0, origin: Origin(kind: .client, connectionID: 7, name: "homectl"),
                body: .value(ValueChange(accessoryID: 1, serviceID: 2, characteristicID: 3, value: .float(21.5))))
            journal.append(&event)
        }
        #expect(journal.firstHeldSeq == 1)
        #expect(journal.events(after: 0)?.count == 100_000)
    }

    @Test("an event larger than the whole byte capacity is still held until the next ones push it out")
    func eventLargerThanCapacity() {
        var journal = Journal(id: "j", capacity: 100, byteCapacity: 10_000)
        var big = Self.bigValue(50_000)
        journal.append(&big)
        #expect(journal.events(after: 0)?.map(\.seq) == [1])
        var next = Self.bigValue(50_000)
        journal.append(&next)
        #expect(journal.events(after: 0) == nil)
        #expect(journal.events(after: 1)?.map(\.seq) == [2])
    }

    @Test("journal ids are fresh each time")
    func ids() {
        #expect(Journal.makeID() != Journal.makeID())
        #expect(Journal.makeID().count == 32)
    }
}
