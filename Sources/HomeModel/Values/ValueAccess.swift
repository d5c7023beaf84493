// Reads and writes of characteristic values as the daemon's store takes and
// returns them: one item per characteristic, each with its own outcome.

public struct CharacteristicWrite: Hashable, Sendable {
    public var characteristicID: ObjectID
    public var value: CharacteristicValue
    public init(characteristicID: ObjectID, value: CharacteristicValue) {
        self.characteristicID = characteristicID
        self.value = value
    }
}

public struct WriteResult: Hashable, Sendable {
    public var characteristicID: ObjectID
    public var error: HomeError?
    /// The sequence number of the value event this write produced; 0 if none.
    public var seq: UInt64
    /// For a provider's refused reachability report, the accessory it named
    /// (`characteristicID` is then 0); 0 otherwise.
    public var accessoryID: ObjectID
    public init(characteristicID: ObjectID, error: HomeError? = nil, seq: UInt64 = 0, accessoryID: ObjectID = 0) {
        self.characteristicID = characteristicID
        self.error = error
        self.seq = seq
        self.accessoryID = accessoryID
    }
}

public struct CharacteristicRead: Hashable, Sendable {
    public var characteristicID: ObjectID
    public var value: CharacteristicValue?
    public var lastUpdatedMs: Int64
    /// Why this one read failed; nil when it succeeded.
    public var error: HomeError?
    public init(characteristicID: ObjectID, value: CharacteristicValue?, lastUpdatedMs: Int64, error: HomeError? = nil)
    {
        self.characteristicID = characteristicID
        self.value = value
        self.lastUpdatedMs = lastUpdatedMs
        self.error = error
    }
}

/// The outcome of a batch of writes: each write's own result, in the order asked,
/// and the daemon's sequence number once every one of them took effect.
public struct WriteOutcome: Hashable, Sendable {
    public var results: [WriteResult]
    public var seq: UInt64

    public init(results: [WriteResult], seq: UInt64) {
        self.results = results
        self.seq = seq
    }
}

/// The outcome of a batch of reads: each read's own result, in the order asked,
/// and the sequence number the values stand at.
public struct ReadOutcome: Hashable, Sendable {
    public var reads: [CharacteristicRead]
    public var seq: UInt64

    public init(reads: [CharacteristicRead], seq: UInt64) {
        self.reads = reads
        self.seq = seq
    }
}
