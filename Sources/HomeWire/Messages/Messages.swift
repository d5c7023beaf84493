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
