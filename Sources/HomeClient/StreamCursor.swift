public import HomeModel
@_spi(Wire) public import HomeWire

/// Where a subscription stands, for resuming it after a disconnect with exactly
/// what was missed, nothing twice and no value older than one already delivered.
///
/// Feed it every stream message and deliver only the events `accept` returns;
/// to resume, subscribe again with `sinceSeq: resumeSeq` and `journalID: journalID`.
///
/// Usually the resume point is the highest sequence number received. A
/// subscription with a minimum interval is the exception: a value it holds back
/// goes out after events with higher sequence numbers, so while one is held the
/// daemon names a lower resume point (`SubscribeResponse.resumeAfter`). A resume
/// from there replays events above it that were delivered already, and older
/// values of a characteristic whose later value was delivered; the cursor
/// remembers both and drops them.
public struct StreamCursor: Sendable, Hashable {
    public private(set) var journalID: String
    /// The `sinceSeq` to resubscribe with; nil until the stream said where it stands.
    public private(set) var resumeSeq: UInt64?
    /// The highest sequence number the stream reached (events and position markers).
    public private(set) var highestSeq: UInt64?
    /// Above `resumeSeq`: the events delivered, and per characteristic the latest
    /// value delivered. Empty unless a value is held back, and never more than what
    /// arrived while one was.
    private var deliveredAbove: Set<UInt64> = []
    private var latestValueAbove: [ObjectID: UInt64] = [:]

    /// - Parameters: where an earlier stream stopped, to resume from (nil: start fresh).
    public init(journalID: String = "", resumeSeq: UInt64? = nil) {
        self.journalID = journalID
        self.resumeSeq = resumeSeq
        self.highestSeq = resumeSeq
    }

    /// Takes in one stream message; returns its events that were not delivered before.
    public mutating func accept(_ message: SubscribeResponse) -> [HomeEvent] {
        if message.journalID != journalID {
            // Sequence numbers of another journal mean nothing here.
            journalID = message.journalID
            forgetUpTo(nil)
        }
        // How far the daemon says this message brings the stream, all delivered.
        var reached: UInt64?
        if let marker = message.marker {
            switch marker.kind {
            case .resync:
                // A fresh start: a snapshot at this sequence number follows.
                forgetUpTo(nil)
                resumeSeq = marker.seq
                highestSeq = marker.seq
            case .subscribed, .snapshotEnd, .heartbeat:
                // Nothing is held back when the daemon sends these.
                reached = marker.seq
            default:
                break
            }
        }
        let fresh =
            deliveredAbove.isEmpty && latestValueAbove.isEmpty
            ? message.events : message.events.filter { !wasDelivered($0) }
        for event in message.events { reached = max(reached ?? 0, event.seq) }
        if let reached { highestSeq = max(highestSeq ?? 0, reached) }
        if let resumeAfter = message.resumeAfter {
            // A value is held back below some of these events: remember what was
            // delivered above the resume point, so a replay does not repeat it.
            for event in fresh where event.seq > resumeAfter {
                deliveredAbove.insert(event.seq)
                if case .value(let change) = event.body {
                    latestValueAbove[change.characteristicID] = max(
                        latestValueAbove[change.characteristicID] ?? 0, event.seq)
                }
            }
            resumeSeq = resumeAfter
            forgetUpTo(resumeAfter)
        } else if let reached {
            resumeSeq = max(resumeSeq ?? 0, reached)
            forgetUpTo(resumeSeq)
        }
        return fresh
    }

    /// Whether a replayed event was delivered before: the same event, or an older
    /// value of a characteristic whose later value was. (Occurrences, such as
    /// doorbell presses, are never held back, so they are delivered in order and
    /// only the same event can repeat.)
    private func wasDelivered(_ event: HomeEvent) -> Bool {
        if deliveredAbove.contains(event.seq) { return true }
        if case .value(let change) = event.body, let latest = latestValueAbove[change.characteristicID] {
            return event.seq <= latest
        }
        return false
    }

    /// Drops what a resume from `seq` can no longer replay: entries at or below
    /// it (nil: everything).
    private mutating func forgetUpTo(_ seq: UInt64?) {
        guard let seq else {
            deliveredAbove = []
            latestValueAbove = [:]
            return
        }
        if !deliveredAbove.isEmpty { deliveredAbove = deliveredAbove.filter { $0 > seq } }
        if !latestValueAbove.isEmpty { latestValueAbove = latestValueAbove.filter { $0.value > seq } }
    }
}
