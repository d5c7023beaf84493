public import HomeModel

// Swift values for the request and response messages of `service HomeService`.
// Field meanings are documented in Protos/home_v1.proto.

public struct GetHomeResponse: Sendable {
    public var graph: HomeGraph
    public var seq: UInt64
    public var journalID: String
    public init(graph: HomeGraph, seq: UInt64, journalID: String) {
        self.graph = graph
        self.seq = seq
        self.journalID = journalID
    }
}

public struct ReadCharacteristicsRequest: Hashable, Sendable {
    public var characteristicIDs: [ObjectID]
    public var fresh: Bool
    public init(characteristicIDs: [ObjectID], fresh: Bool = false) {
        self.characteristicIDs = characteristicIDs
        self.fresh = fresh
    }
}

public struct ReadCharacteristicsResponse: Hashable, Sendable {
    public var reads: [CharacteristicRead]
    public var seq: UInt64
    public init(reads: [CharacteristicRead], seq: UInt64) {
        self.reads = reads
        self.seq = seq
    }
}

public struct WriteCharacteristicsRequest: Hashable, Sendable {
    public var writes: [CharacteristicWrite]
    /// All or nothing: if any write is invalid, none is applied.
    public var atomic: Bool
    /// Validate only; apply nothing.
    public var validateOnly: Bool
    public init(writes: [CharacteristicWrite], atomic: Bool = false, validateOnly: Bool = false) {
        self.writes = writes
        self.atomic = atomic
        self.validateOnly = validateOnly
    }
}

public struct WriteCharacteristicsResponse: Hashable, Sendable {
    public var results: [WriteResult]
    /// The daemon's sequence number once every write of the call took effect.
    public var seq: UInt64
    public init(results: [WriteResult], seq: UInt64) {
        self.results = results
        self.seq = seq
    }
}

public struct SubscribeRequest: Hashable, Sendable {
    public var filter: SubscriptionFilter
    public var snapshot: Bool
    /// Resume after this sequence number of `journalID`.
    public var sinceSeq: UInt64?
    public var journalID: String
    public var excludeOwn: Bool
    public var policy: SlowConsumerPolicy
    /// 0 = the daemon's default.
    public var queueLimit: UInt32
    public var heartbeatMs: UInt32
    public var minIntervalMs: UInt32
    /// Start with the events from this time on (ms since the epoch), then live.
    public var sinceTimeMs: Int64?

    public init(
        filter: SubscriptionFilter = SubscriptionFilter(), snapshot: Bool = false, sinceSeq: UInt64? = nil,
        journalID: String = "", excludeOwn: Bool = false, policy: SlowConsumerPolicy = .coalesce,
        queueLimit: UInt32 = 0, heartbeatMs: UInt32 = 0, minIntervalMs: UInt32 = 0, sinceTimeMs: Int64? = nil
    ) {
        self.sinceTimeMs = sinceTimeMs
        self.filter = filter
        self.snapshot = snapshot
        self.sinceSeq = sinceSeq
        self.journalID = journalID
        self.excludeOwn = excludeOwn
        self.policy = policy
        self.queueLimit = queueLimit
        self.heartbeatMs = heartbeatMs
        self.minIntervalMs = minIntervalMs
    }
}

public struct SubscribeResponse: Hashable, Sendable {
    public var journalID: String
    public var events: [HomeEvent]
    public var snapshot: [Characteristic]
    public var marker: StreamMarker?
    /// Set while the subscription's minimum interval holds back a value: resume
    /// from here rather than from the highest sequence number seen (see
    /// `StreamCursor`, which keeps track of both).
    public var resumeAfter: UInt64?

    public init(
        journalID: String, events: [HomeEvent] = [], snapshot: [Characteristic] = [], marker: StreamMarker? = nil,
        resumeAfter: UInt64? = nil
    ) {
        self.journalID = journalID
        self.events = events
        self.snapshot = snapshot
        self.marker = marker
        self.resumeAfter = resumeAfter
    }
}

/// The accessories (with their services and characteristics) and rooms of the
/// asked homes.
public struct ListAccessoriesResponse: Sendable {
    public var accessories: [Accessory]
    public var rooms: [Room]
    public var services: [ObjectID: AccessoryService]
    public var characteristics: [ObjectID: Characteristic]

    public init(
        accessories: [Accessory], rooms: [Room], services: [ObjectID: AccessoryService],
        characteristics: [ObjectID: Characteristic]
    ) {
        self.accessories = accessories
        self.rooms = rooms
        self.services = services
        self.characteristics = characteristics
    }
}
