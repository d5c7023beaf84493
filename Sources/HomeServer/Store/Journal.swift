internal import HomeModel
internal import NIOCore

/// The daemon's event journal: assigns sequence numbers and keeps the most recent
/// events so that a client resuming from a sequence number gets exactly what it
/// missed. Not thread-safe; lives inside `HomeStore`'s lock.
///
/// Events are kept in chunks of a fixed size, and appending never copies what is
/// held: a full chunk is sealed and a new one begun, and the oldest chunk is freed
/// whole once every event in it is older than the last `capacity`. (A ring that grew
/// by doubling copied everything it held, under the store's lock, at every power of
/// two: a stall every subscriber saw.)
struct Journal {
    /// Identifies this journal; sequence numbers mean nothing across journal ids.
    let id: String
    /// How many of the most recent events are held for resume.
    let capacity: Int
    private(set) var lastSeq: UInt64 = 0
    /// Sealed chunks, oldest first, each `chunkSize` events in sequence order.
    private var sealed = CircularBuffer<[HomeEvent]>()
    /// The chunk being filled.
    private var current: [HomeEvent] = []
    /// The storage of the last chunk freed, reused for the next: memory already
    /// touched costs no page faults, and no unmapping when it is let go.
    private var spare: [HomeEvent]?
    private let chunkSize: Int

    init(id: String, capacity: Int) {
        self.id = id
        self.capacity = max(capacity, 1)
        self.chunkSize = min(self.capacity, 4096)
        current.reserveCapacity(chunkSize)
    }

    /// The oldest sequence number held (events before it are gone).
    private var firstHeldSeq: UInt64 {
        lastSeq < UInt64(capacity) ? 1 : lastSeq - UInt64(capacity) + 1
    }

    /// Assigns the next sequence number to `event` and records it.
    mutating func append(_ event: inout HomeEvent) {
        lastSeq += 1
        event.seq = lastSeq
        if current.count == chunkSize {
            var next = spare.take() ?? []
            next.reserveCapacity(chunkSize)
            swap(&next, &current)
            sealed.append(next)
            // Free the oldest chunk once all of it has fallen out of the window.
            if let oldest = sealed.first, let newest = oldest.last, newest.seq < firstHeldSeq {
                var freed = sealed.removeFirst()
                freed.removeAll(keepingCapacity: true)
                spare = freed
            }
        }
        current.append(event)
    }

    /// The events after `seq`, or nil when some of them are no longer held (or
    /// `seq` was never issued).
    func events(after seq: UInt64) -> [HomeEvent]? {
        if seq >= lastSeq { return seq == lastSeq ? [] : nil }
        guard seq + 1 >= firstHeldSeq else { return nil }
        var missed: [HomeEvent] = []
        missed.reserveCapacity(Int(lastSeq - seq))
        for chunk in sealed where chunk.last.map({ $0.seq > seq }) ?? false {
            missed.append(contentsOf: chunk.lazy.filter { $0.seq > seq })
        }
        missed.append(contentsOf: current.lazy.filter { $0.seq > seq })
        return missed
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
