public import HomeModel

// Swift values for ReadHistory's messages; field meanings are documented in
// Protos/home_v1.proto.

public struct ReadHistoryRequest: Hashable, Sendable {
    public var filter: SubscriptionFilter
    /// Events after this sequence number; 0: from the oldest kept.
    public var afterSeq: UInt64
    /// Events before this sequence number; 0: up to the newest.
    public var beforeSeq: UInt64
    /// Events at or after this time (ms since the epoch); 0: no bound.
    public var sinceMs: Int64
    /// Events before this time; 0: no bound.
    public var untilMs: Int64
    /// 0: the daemon's default page (1000).
    public var limit: UInt32
    public var newestFirst: Bool
    /// Rollups of this width instead of events (300 000 or 3 600 000); 0: events.
    public var rollupMs: Int64

    public init(
        filter: SubscriptionFilter = SubscriptionFilter(), afterSeq: UInt64 = 0, beforeSeq: UInt64 = 0,
        sinceMs: Int64 = 0, untilMs: Int64 = 0, limit: UInt32 = 0, newestFirst: Bool = false, rollupMs: Int64 = 0
    ) {
        self.rollupMs = rollupMs
        self.filter = filter
        self.afterSeq = afterSeq
        self.beforeSeq = beforeSeq
        self.sinceMs = sinceMs
        self.untilMs = untilMs
        self.limit = limit
        self.newestFirst = newestFirst
    }
}

public struct ReadHistoryResponse: Hashable, Sendable {
    public var journalID: String
    public var events: [HomeEvent]
    /// The next page's `afterSeq` (newest first: its `beforeSeq`); 0: no more.
    public var nextSeq: UInt64
    /// The oldest sequence number kept.
    public var oldestSeq: UInt64
    /// With `rollupMs`: the slices, oldest first.
    public var rollups: [RollupPoint]

    public init(
        journalID: String, events: [HomeEvent], nextSeq: UInt64, oldestSeq: UInt64, rollups: [RollupPoint] = []
    ) {
        self.rollups = rollups
        self.journalID = journalID
        self.events = events
        self.nextSeq = nextSeq
        self.oldestSeq = oldestSeq
    }
}
