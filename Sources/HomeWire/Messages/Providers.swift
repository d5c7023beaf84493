public import HomeModel

// Swift values for the provider calls: OpenProvider's commands, RegisterAccessories,
// AnswerCommand and ReportValues. Field meanings are documented in Protos/home_v1.proto.

/// One command of the daemon to a provider, as the OpenProvider stream carries it.
public struct ProviderCommand: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// The stream's first message: the provider id is now this connection's.
        case opened(ProviderOpened)
        /// Read these characteristics from the devices.
        case read(characteristicIDs: [ObjectID])
        /// Apply these writes (validated by the daemon); all or none when atomic.
        case write([CharacteristicWrite], atomic: Bool)
        /// Liveness: answer with an empty answer.
        case ping
    }

    /// Answer with `CommandAnswer` carrying it (0 for `opened`, which needs no answer).
    public var requestID: UInt64
    /// How long the daemon waits for the answer.
    public var timeoutMs: UInt32
    public var kind: Kind

    public init(requestID: UInt64, timeoutMs: UInt32, kind: Kind) {
        self.requestID = requestID
        self.timeoutMs = timeoutMs
        self.kind = kind
    }
}

/// A provider's answer to one command.
public struct CommandAnswer: Hashable, Sendable {
    public var requestID: UInt64
    /// For a read: one per characteristic asked.
    public var reads: [CharacteristicRead]
    /// For a write: one per write.
    public var writes: [WriteResult]
    /// A failure of the whole command: every item gets it.
    public var error: HomeError?

    public init(
        requestID: UInt64, reads: [CharacteristicRead] = [], writes: [WriteResult] = [], error: HomeError? = nil
    ) {
        self.requestID = requestID
        self.reads = reads
        self.writes = writes
        self.error = error
    }
}

public struct RegisterAccessoriesRequest: Hashable, Sendable {
    /// The home new accessories go to; nil for the primary home.
    public var homeID: ObjectID?
    public var accessories: [ProvidedAccessory]
    public var removeKeys: [String]

    public init(homeID: ObjectID? = nil, accessories: [ProvidedAccessory], removeKeys: [String] = []) {
        self.homeID = homeID
        self.accessories = accessories
        self.removeKeys = removeKeys
    }
}

/// The registered accessories as the daemon now has them, in request order.
public struct RegisterAccessoriesResponse: Sendable {
    public var accessories: [Accessory]
    public var services: [ObjectID: AccessoryService]
    public var characteristics: [ObjectID: Characteristic]
    public var seq: UInt64

    public init(
        accessories: [Accessory], services: [ObjectID: AccessoryService],
        characteristics: [ObjectID: Characteristic], seq: UInt64
    ) {
        self.accessories = accessories
        self.services = services
        self.characteristics = characteristics
        self.seq = seq
    }
}
