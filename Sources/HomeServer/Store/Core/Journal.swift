internal import HomeModel
internal import NIOCore

/// The daemon's event journal: assigns sequence numbers and keeps the most recent
/// events so that a client resuming from a sequence number gets exactly what it
/// missed. Not thread-safe; lives inside `HomeStore`'s lock.
///
/// Events are kept in chunks, and appending never copies what is held: a full
/// chunk is sealed and a new one begun, and the oldest chunk is freed whole once
/// every event in it is older than the last `capacity`. (A ring that grew by
/// doubling copied everything it held, under the store's lock, at every power of
/// two: a stall every subscriber saw.)
///
/// The journal is bounded in bytes as well as in events: a provider reporting
/// large data values could otherwise pin `capacity` times the largest value. A
/// chunk is also sealed once its events hold an eighth of `byteCapacity`, and the
/// oldest chunks are freed while the sealed ones hold more than `byteCapacity`.
/// What is freed is gone for resuming clients, which then get a resync, never a
/// gap: so what the journal holds is at most `byteCapacity` plus one chunk (an
/// eighth of it, and one event).
struct Journal {
    /// What the daemon's journal holds by default: more than `capacity` events of
    /// small values need (a hundred thousand are some 15 MB), and a bound for large ones.
    static let defaultByteCapacity = 32 * 1024 * 1024

    /// Identifies this journal; sequence numbers mean nothing across journal ids.
    let id: String
    /// How many of the most recent events are held for resume.
    let capacity: Int
    /// How many bytes (`HomeEvent.approximateSize`) the sealed chunks may hold.
    let byteCapacity: Int
    private(set) var lastSeq: UInt64 = 0
    /// Sealed chunks, oldest first, each in sequence order.
    private var sealed = CircularBuffer<Chunk>()
    /// What the sealed chunks hold, in bytes.
    private var sealedBytes = 0
    /// The chunk being filled.
    private var current = Chunk()
    /// The storage of the last chunk freed, reused for the next: memory already
    /// touched costs no page faults, and no unmapping when it is let go.
    private var spare: [HomeEvent]?
    /// The last sequence number freed to keep within `byteCapacity` (0: none).
    private var droppedThrough: UInt64 = 0
    private let chunkSize: Int
    private let chunkBytes: Int

    private struct Chunk {
        var events: [HomeEvent] = []
        var bytes = 0
    }

    /// - Parameter lastStoredSeq: where a journal continued from a previous run
    ///   begins: its events up to there are in the stored history, not in memory.
    init(id: String, capacity: Int, byteCapacity: Int = Journal.defaultByteCapacity, lastStoredSeq: UInt64 = 0) {
        self.id = id
        self.lastSeq = lastStoredSeq
        self.droppedThrough = lastStoredSeq
        self.capacity = max(capacity, 1)
        self.byteCapacity = max(byteCapacity, 1)
        self.chunkSize = min(self.capacity, 4096)
        self.chunkBytes = max(self.byteCapacity / 8, 1)
        current.events.reserveCapacity(chunkSize)
    }

    /// The oldest sequence number held (events before it are gone).
    var firstHeldSeq: UInt64 {
        let byCount = lastSeq < UInt64(capacity) ? 1 : lastSeq - UInt64(capacity) + 1
        return max(byCount, droppedThrough + 1)
    }

    /// The bytes the held chunks hold (events of a chunk not yet freed included).
    var heldBytes: Int { sealedBytes + current.bytes }

    /// Assigns the next sequence number to `event` and records it.
    mutating func append(_ event: inout HomeEvent) {
        lastSeq += 1
        event.seq = lastSeq
        if current.events.count == chunkSize || current.bytes >= chunkBytes {
            seal()
        }
        current.events.append(event)
        current.bytes += event.approximateSize
    }

    private mutating func seal() {
        var next = Chunk(events: spare.take() ?? [])
        next.events.reserveCapacity(chunkSize)
        swap(&next, &current)
        sealedBytes += next.bytes
        sealed.append(next)
        // Free the oldest chunks once all of them have fallen out of the window, or
        // while the sealed ones hold more bytes than allowed.
        while let oldest = sealed.first, let newest = oldest.events.last {
            let outOfWindow = newest.seq < firstHeldSeq
            guard outOfWindow || sealedBytes > byteCapacity else { break }
            if !outOfWindow { droppedThrough = newest.seq }
            var freed = sealed.removeFirst()
            sealedBytes -= freed.bytes
            freed.events.removeAll(keepingCapacity: true)
            spare = freed.events
        }
    }

    /// The events after `seq`, or nil when some of them are no longer held (or
    /// `seq` was never issued).
    func events(after seq: UInt64) -> [HomeEvent]? {
        if seq >= lastSeq { return seq == lastSeq ? [] : nil }
        guard seq + 1 >= firstHeldSeq else { return nil }
        var missed: [HomeEvent] = []
        missed.reserveCapacity(Int(lastSeq - seq))
        for chunk in sealed where chunk.events.last.map({ $0.seq > seq }) ?? false {
            missed.append(contentsOf: chunk.events.lazy.filter { $0.seq > seq })
        }
        missed.append(contentsOf: current.events.lazy.filter { $0.seq > seq })
        return missed
    }

    /// Why the events after `seq` cannot be replayed, for a resync marker's reason.
    func unheldReason(after seq: UInt64) -> String {
        let mebibyte = 1024 * 1024
        let bytes =
            byteCapacity % mebibyte == 0 ? "\(byteCapacity / mebibyte) MiB" : "\(byteCapacity) bytes"
        return "events after \(seq) are no longer held (the journal keeps the last \(capacity) events, within "
            + "\(bytes) of them; it holds \(firstHeldSeq) to \(lastSeq))"
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
