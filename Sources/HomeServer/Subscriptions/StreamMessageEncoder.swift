internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// Encodes a subscription's items as messages of its call: consecutive events
/// share one `SubscribeResponse`, markers and snapshot pages go one per message,
/// and no message is larger than the call's writer takes in one frame.
struct StreamMessageEncoder {
    let journalID: String
    /// `SubscribeResponse { journal_id }` packed once: the head of every message of
    /// events the publisher packed.
    private let journalField: ByteBuffer

    /// Events per message at most.
    static let maxEventsPerMessage = 256

    /// - Parameter journalField: `SubscribeResponse.journalField(journalID)`, made
    ///   once for every stream of the daemon rather than once per subscription.
    init(journalID: String, journalField: ByteBuffer? = nil) {
        self.journalID = journalID
        self.journalField = journalField ?? SubscribeResponse.journalField(journalID)
    }

    /// Writes the messages for `items`. A run of events or a snapshot page too large
    /// for a frame is split; a single event that alone is too large is an error
    /// naming it (the stream must end: the event cannot be delivered).
    ///
    /// - Parameter resumeAfter: added to every message of events (see
    ///   `SubscriptionState.nextBatch`).
    func encode(_ items: [SinkItem], resumeAfter: UInt64?, to writer: some StreamCallWriter) throws(HomeError) {
        var queue = items[...]
        var maxRun = Self.maxEventsPerMessage
        var payload = ByteBuffer()
        while let first = queue.first {
            payload.clear()
            var taken = 1
            switch first {
            case .event:
                taken = encodeEvents(queue, maxRun: maxRun, resumeAfter: resumeAfter, into: &payload)
            case .marker(let marker):
                SubscribeResponse.encode(journalID: journalID, events: [], marker: marker, into: &payload)
            case .snapshotPage(let page):
                SubscribeResponse.encode(
                    journalID: journalID, events: [], snapshot: page[...], marker: nil, into: &payload)
            }
            if !writer.fits(payloadBytes: payload.readableBytes) {
                if case .snapshotPage(let page) = first, page.count > 1 {
                    let half = page.count / 2
                    queue =
                        [.snapshotPage(Array(page[..<half])), .snapshotPage(Array(page[half...]))] + queue.dropFirst()
                    continue
                }
                if taken > 1 {
                    maxRun = taken / 2
                    continue
                }
                let what: String =
                    if case .event(let queued) = first { "event \(queued.event.seq)" } else { "a message" }
                throw HomeError(
                    .resourceExhausted,
                    "\(what) takes \(payload.readableBytes) bytes, more than a frame of the size this "
                        + "connection negotiated holds; subscribe on a connection with a larger max_frame_size")
            }
            try writer.write(payload)
            queue = queue.dropFirst(taken)
            maxRun = Self.maxEventsPerMessage
        }
    }

    /// Encodes the run of events at the head of `items` (at most `maxRun`) as one
    /// message's payload; returns how many it took.
    private func encodeEvents(
        _ items: ArraySlice<SinkItem>, maxRun: Int, resumeAfter: UInt64?,
        into payload: inout ByteBuffer
    ) -> Int {
        // The run is read in place: copying its events out first cost a retain per
        // event on the busiest path, a lone fast subscriber.
        var end = items.startIndex
        var anyShared = false
        while end < items.endIndex, end - items.startIndex < maxRun, case .event(let queued) = items[end] {
            if case .shared = queued { anyShared = true }
            end += 1
        }
        let run = items[items.startIndex..<end]
        if anyShared {
            // Events the publisher packed once for every subscriber (and any of this
            // subscriber's own, packed one by one), after the journal id: protobuf
            // defines a message as the concatenation of its fields.
            payload.writeImmutableBuffer(journalField)
            for item in run {
                switch item {
                case .event(.shared(let published)): payload.writeImmutableBuffer(published.encoded.bytes)
                case .event(.own(let event)): payload.writeImmutableBuffer(EncodedEvent(event).bytes)
                case .marker, .snapshotPage: break
                }
            }
            if let resumeAfter { payload.writeImmutableBuffer(SubscribeResponse.resumeField(resumeAfter)) }
        } else {
            // A lone subscriber's events, packed as a batch.
            let first = run.startIndex
            SubscribeResponse.encode(
                journalID: journalID, eventCount: run.count,
                event: { offset in
                    guard case .event(let queued) = run[first + offset] else {
                        preconditionFailure("the run holds only events")
                    }
                    return queued.event
                }, marker: nil, resumeAfter: resumeAfter, into: &payload)
        }
        return run.count
    }
}
