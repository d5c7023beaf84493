import HomeModel
import NIOCore

/// The daemon's event journal: assigns sequence numbers and keeps the most recent
/// events so that a client resuming from a sequence number gets exactly what it
/// missed. Not thread-safe; lives inside `HomeStore`'s lock.
struct Journal {
    /// Identifies this journal; sequence numbers mean nothing across journal ids.
    let id: String
    /// How many events are kept for resume.
    let capacity: Int
    private(set) var lastSeq: UInt64 = 0
    private var events = CircularBuffer<HomeEvent>()

    init(id: String, capacity: Int) {
        self.id = id
        self.capacity = max(capacity, 1)
    }

    /// Assigns the next sequence number to `event` and records it.
    mutating func append(_ event: inout HomeEvent) {
        lastSeq += 1
        event.seq = lastSeq
        if events.count == capacity { events.removeFirst() }
        events.append(event)
    }

    /// The events after `seq`, or nil when some of them are no longer held.
    func events(after seq: UInt64) -> ArraySlice<HomeEvent>? {
        if seq >= lastSeq { return seq == lastSeq ? [] : nil }
        guard let first = events.first, first.seq <= seq + 1 else { return nil }
        let offset = Int(seq + 1 - first.seq)
        return ArraySlice(events[events.index(events.startIndex, offsetBy: offset)...])
    }

    /// A fresh journal id: random, so that a restarted daemon's sequence numbers are
    /// never mistaken for the old one's.
    static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
