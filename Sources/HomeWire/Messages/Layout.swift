public import HomeModel

// Swift values for `rpc ChangeLayout` (LayoutRequest / LayoutResponse in
// Protos/home_v1.proto, which documents every operation).

/// The request of `ChangeLayout`: one operation.
public struct LayoutRequest: Hashable, Sendable {
    public var operation: LayoutOperation

    public init(_ operation: LayoutOperation) {
        self.operation = operation
    }
}

/// The answer to `ChangeLayout`: the events the change published, in order and
/// numbered, and the id of what it created.
public struct LayoutResponse: Hashable, Sendable {
    /// Layout events (and a primary-home event when the primary home changed);
    /// empty when nothing changed.
    public var events: [HomeEvent]
    /// The daemon's sequence number once the change took effect.
    public var seq: UInt64
    /// For an `add…` operation, the new object's id; 0 otherwise.
    public var createdID: ObjectID

    public init(events: [HomeEvent], seq: UInt64, createdID: ObjectID = 0) {
        self.events = events
        self.seq = seq
        self.createdID = createdID
    }
}
