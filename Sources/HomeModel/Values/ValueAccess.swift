// Reads and writes of characteristic values as the daemon's store takes and
// returns them: one item per characteristic, each with its own outcome.

public struct CharacteristicWrite: Hashable, Sendable {
    public var characteristicID: ObjectID
    public var value: CharacteristicValue
    /// What must hold for the write to be applied (a client's write only; nil: none).
    public var condition: WriteCondition?
    public init(characteristicID: ObjectID, value: CharacteristicValue, condition: WriteCondition? = nil) {
        self.characteristicID = characteristicID
        self.value = value
        self.condition = condition
    }
}

/// A conditional write's expectation of the characteristic as it is when the write
/// is applied: its value, the sequence number of the event that last changed it, or
/// both. When one does not hold the write fails with FAILED_PRECONDITION and
/// nothing is written: two automations that read, decide and write cannot both act
/// on the same reading.
public struct WriteCondition: Hashable, Sendable {
    /// The value the characteristic must hold (compared as stored, after the
    /// characteristic's format has normalised it: `1` is `true` for a bool).
    public var value: CharacteristicValue?
    /// The characteristic's `changeSeq` the writer read: the seq of a read, or of
    /// the value event it saw last for it. 0: not changed since the daemon started.
    public var seq: UInt64?
    /// The journal `seq` is from; "" for the daemon's current one. A sequence
    /// number means nothing in another journal (a restarted daemon numbers anew).
    public var journalID: String

    public init(value: CharacteristicValue? = nil, seq: UInt64? = nil, journalID: String = "") {
        self.value = value
        self.seq = seq
        self.journalID = journalID
    }

    /// Whether it asks for anything at all.
    public var isEmpty: Bool { value == nil && seq == nil }
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
    /// The sequence number of the event that last changed the value (`Characteristic.changeSeq`):
    /// what a conditional write expects. 0 when not changed since the daemon started.
    public var changeSeq: UInt64
    public init(
        characteristicID: ObjectID, value: CharacteristicValue?, lastUpdatedMs: Int64, error: HomeError? = nil,
        changeSeq: UInt64 = 0
    ) {
        self.characteristicID = characteristicID
        self.value = value
        self.lastUpdatedMs = lastUpdatedMs
        self.error = error
        self.changeSeq = changeSeq
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
