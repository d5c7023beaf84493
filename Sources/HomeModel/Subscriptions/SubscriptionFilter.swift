// What a subscription selects and how its stream speaks: the filter, the
// slow-consumer policy and the stream's markers.

public struct SubscriptionFilter: Hashable, Sendable {
    public var homeIDs: [ObjectID] = []
    public var roomIDs: [ObjectID] = []
    public var zoneIDs: [ObjectID] = []
    public var accessoryIDs: [ObjectID] = []
    public var serviceIDs: [ObjectID] = []
    public var characteristicIDs: [ObjectID] = []
    /// HAP UUIDs or catalog names.
    public var serviceTypes: [String] = []
    public var characteristicTypes: [String] = []
    /// Empty = every kind.
    public var kinds: [EventKind] = []

    public init(
        homeIDs: [ObjectID] = [], roomIDs: [ObjectID] = [], zoneIDs: [ObjectID] = [],
        accessoryIDs: [ObjectID] = [], serviceIDs: [ObjectID] = [], characteristicIDs: [ObjectID] = [],
        serviceTypes: [String] = [], characteristicTypes: [String] = [], kinds: [EventKind] = []
    ) {
        self.homeIDs = homeIDs
        self.roomIDs = roomIDs
        self.zoneIDs = zoneIDs
        self.accessoryIDs = accessoryIDs
        self.serviceIDs = serviceIDs
        self.characteristicIDs = characteristicIDs
        self.serviceTypes = serviceTypes
        self.characteristicTypes = characteristicTypes
        self.kinds = kinds
    }
}

/// What a subscription wants done when its queue is full.
public enum SlowConsumerPolicy: String, Sendable, CaseIterable, Hashable {
    /// Latest value per characteristic wins (with a merged count); past that, resync.
    case coalesce
    /// Drop, then a gap marker naming the lost sequence range.
    case gap
    /// Close the subscription with RESOURCE_EXHAUSTED.
    case disconnect
}

public struct StreamMarker: Hashable, Sendable {
    public enum Kind: String, Sendable, CaseIterable, Hashable {
        case none
        /// The subscription is live; events after `seq` follow.
        case subscribed
        /// The snapshot is complete; changes after `seq` follow.
        case snapshotEnd = "snapshot-end"
        /// Events were lost for this subscriber; a fresh snapshot follows.
        case resync
        /// Events `gapFrom...gapTo` were dropped.
        case gap
        case heartbeat
    }

    public var kind: Kind
    public var seq: UInt64
    public var gapFrom: UInt64
    public var gapTo: UInt64
    public var reason: String

    public init(kind: Kind, seq: UInt64, gapFrom: UInt64 = 0, gapTo: UInt64 = 0, reason: String = "") {
        self.kind = kind
        self.seq = seq
        self.gapFrom = gapFrom
        self.gapTo = gapTo
        self.reason = reason
    }
}
