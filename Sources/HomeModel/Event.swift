/// What caused a change.
public struct Origin: Hashable, Sendable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case unknown, client, provider, automation, simulator, daemon
    }

    public var kind: Kind
    /// The connection that made the change (clients and providers); 0 otherwise.
    public var connectionID: UInt64
    /// Client name, provider name, automation (trigger) name, "simulator".
    public var name: String
    /// The Unix user of the connection (clients and providers); nil otherwise.
    public var uid: UInt32?
    /// For an automation's change: the triggers whose scenes led to it, oldest
    /// first. It travels with the change itself — through a provider's
    /// confirmation too — so that the loop guard sees it wherever the change is
    /// committed. The daemon's own bookkeeping: never on the wire.
    package var triggerChain: [ObjectID]

    public init(kind: Kind, connectionID: UInt64 = 0, name: String = "", uid: UInt32? = nil) {
        self.kind = kind
        self.connectionID = connectionID
        self.name = name
        self.uid = uid
        self.triggerChain = []
    }

    /// An automation's origin: a trigger's name and the cascade that ran it.
    package static func automation(name: String, triggerChain: [ObjectID]) -> Origin {
        var origin = Origin(kind: .automation, name: name)
        origin.triggerChain = triggerChain
        return origin
    }

    public static let daemon = Origin(kind: .daemon, name: "homed")
    public static let simulator = Origin(kind: .simulator, name: "simulator")
}

public enum EventKind: String, Sendable, Hashable, CaseIterable {
    case valueChanged = "value"
    case reachabilityChanged = "reachability"
    case layoutChanged = "layout"
    case primaryHomeChanged = "primary-home"
    case actionSetExecuted = "action-set"
    case triggerFired = "trigger"
    /// Audit notes: only for those who ask for them by kind.
    case audit
}

/// What the daemon notes for the audit besides changes: a provider connected or
/// gone, a call refused for its role, a trigger fired or ended. Who did it is the
/// event's origin.
public struct AuditNote: Hashable, Sendable {
    /// `provider-connected`, `provider-disconnected`, `permission-denied`, `trigger-fired`, …
    public var action: String
    /// A sentence for people.
    public var detail: String
    /// Values the note is about, for programs: on the `trigger-fired` note of a
    /// trigger with an end, what its scenes' characteristics held just before the
    /// firing, which its end writes back. Journaled with the note, so that an end
    /// carried over a restart restores them whatever the history still keeps.
    public var values: [ObjectID: CharacteristicValue]

    public init(action: String, detail: String, values: [ObjectID: CharacteristicValue] = [:]) {
        self.action = action
        self.detail = detail
        self.values = values
    }
}

public enum ObjectKind: String, Sendable, Hashable, CaseIterable {
    case home, room, zone, accessory, service, characteristic
    case serviceGroup = "service-group"
    case actionSet = "action-set"
    case trigger
}

public struct LayoutChange: Hashable, Sendable {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case added, removed, updated, moved
    }

    public var action: Action
    public var object: ObjectKind
    public var objectID: ObjectID
    public var homeID: ObjectID
    /// The name after the change (before it, for a removal).
    public var name: String
    /// For a move: the new parent (the room an accessory moved to, …).
    public var parentID: ObjectID

    public init(
        action: Action, object: ObjectKind, objectID: ObjectID, homeID: ObjectID, name: String,
        parentID: ObjectID = 0
    ) {
        self.action = action
        self.object = object
        self.objectID = objectID
        self.homeID = homeID
        self.name = name
        self.parentID = parentID
    }
}

public struct ValueChange: Hashable, Sendable {
    public var accessoryID: ObjectID
    public var serviceID: ObjectID
    public var characteristicID: ObjectID
    public var value: CharacteristicValue
    /// Earlier changes of the same characteristic merged into this one by a
    /// coalescing subscriber queue.
    public var merged: UInt32

    public init(
        accessoryID: ObjectID, serviceID: ObjectID, characteristicID: ObjectID, value: CharacteristicValue,
        merged: UInt32 = 0
    ) {
        self.accessoryID = accessoryID
        self.serviceID = serviceID
        self.characteristicID = characteristicID
        self.value = value
        self.merged = merged
    }
}

/// A change to the home, as the journal records it and subscribers receive it.
public struct HomeEvent: Hashable, Sendable {
    public enum Body: Hashable, Sendable {
        case value(ValueChange)
        case reachability(accessoryID: ObjectID, reachable: Bool)
        case layout(LayoutChange)
        case primaryHome(ObjectID)
        case actionSetExecuted(ObjectID)
        case triggerFired(ObjectID)
        case audit(AuditNote)
    }

    /// Daemon-wide, strictly increasing; assigned by the journal (0 until then).
    public var seq: UInt64
    public var timeMs: Int64
    public var origin: Origin
    public var body: Body

    public init(seq: UInt64 = 0, timeMs: Int64, origin: Origin, body: Body) {
        self.seq = seq
        self.timeMs = timeMs
        self.origin = origin
        self.body = body
    }

    public var kind: EventKind {
        switch body {
        case .value: return .valueChanged
        case .reachability: return .reachabilityChanged
        case .layout: return .layoutChanged
        case .primaryHome: return .primaryHomeChanged
        case .actionSetExecuted: return .actionSetExecuted
        case .triggerFired: return .triggerFired
        case .audit: return .audit
        }
    }
}

extension HomeEvent {
    /// Roughly the bytes the event holds in memory: its fixed layout plus its
    /// strings and data. What a subscriber's queue counts against its byte limit,
    /// so that a few events with large values cannot pin unbounded memory.
    package var approximateSize: Int {
        var size = MemoryLayout<HomeEvent>.stride + origin.name.utf8.count
        switch body {
        case .value(let change):
            switch change.value {
            case .string(let text): size += text.utf8.count
            case .data(let bytes): size += bytes.count
            case .bool, .int, .uint, .float: break
            }
        case .layout(let change):
            size += change.name.utf8.count
        case .audit(let note):
            size += note.action.utf8.count + note.detail.utf8.count
            size += note.values.count * MemoryLayout<(ObjectID, CharacteristicValue)>.stride
        case .reachability, .primaryHome, .actionSetExecuted, .triggerFired:
            break
        }
        return size
    }
}
