// The model's automation objects: triggers, what fires them and what they check.

public enum Recurrence: String, Sendable, CaseIterable, Hashable {
    case none, hourly, daily, weekly
}

public enum Comparison: String, Sendable, CaseIterable, Hashable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

public struct CharacteristicCondition: Hashable, Sendable {
    public var characteristicID: ObjectID
    public var comparison: Comparison
    public var value: CharacteristicValue

    public init(characteristicID: ObjectID, comparison: Comparison, value: CharacteristicValue) {
        self.characteristicID = characteristicID
        self.comparison = comparison
        self.value = value
    }
}

extension CharacteristicCondition {
    /// Whether it holds when the characteristic is `current` (no value: it does not).
    package func holds(for current: CharacteristicValue?) -> Bool {
        guard let current else { return false }
        switch comparison {
        case .equal: return current.sameValue(as: value)
        case .notEqual: return !current.sameValue(as: value)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let lhs = current.numericValue, let rhs = value.numericValue else { return false }
            switch comparison {
            case .less: return lhs < rhs
            case .lessOrEqual: return lhs <= rhs
            case .greater: return lhs > rhs
            default: return lhs >= rhs
            }
        }
    }
}

extension CharacteristicValue {
    /// Equal when identical, or when both are numbers of equal value (`.uint(1)`
    /// and `.int(1)`, `.bool(true)` and `.uint(1)`): the model normalizes what it
    /// stores, but a comparison should not depend on it.
    package func sameValue(as other: CharacteristicValue) -> Bool {
        if self == other { return true }
        guard let left = numericValue, let right = other.numericValue else { return false }
        return left == right
    }
}

public enum TriggerKind: Hashable, Sendable {
    /// Fires at `fireDateMs`, then per `recurrence`, reckoned in `timeZone` (an IANA name).
    case timer(fireDateMs: Int64, timeZone: String, recurrence: Recurrence)

    /// The fire dates a timer may have: 1970-01-01 to 9999-12-31 UTC, in
    /// milliseconds since the Unix epoch. Anything else is a mistake, and far enough
    /// from either end of Int64 that date arithmetic on it cannot overflow.
    package static let fireDateRange: ClosedRange<Int64> = 0...253_402_300_799_999
    /// Fires when the characteristic becomes `value`, or enters [rangeMin, rangeMax],
    /// and every condition holds.
    case event(
        characteristicID: ObjectID, value: CharacteristicValue?, rangeMin: Double?, rangeMax: Double?,
        conditions: [CharacteristicCondition])
    /// Fires each day at the sun's event plus `offsetMs` (negative: before), at the
    /// home's location; the day and its days of the week are reckoned in `timeZone`.
    case sun(SunEvent, offsetMs: Int64, timeZone: String)
}

public struct Trigger: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var homeID: ObjectID
    public var name: String
    public var isEnabled: Bool
    public var actionSetIDs: [ObjectID]
    public var kind: TriggerKind
    /// When it may fire (days, a window of the day); `.always` for no restriction.
    public var condition: TimeCondition
    /// An event trigger fires only once its event has held this long (0: at once);
    /// the wait starts again when the value leaves. Always 0 for the other kinds.
    public var holdMs: Int64
    /// Disables itself once it has fired (HomeKit's execute-once).
    public var executeOnce: Bool
    /// Whether and when it undoes what its scenes did.
    public var end: TriggerEnd
    /// A program it runs when it fires, after its scenes; nil: none.
    public var command: TriggerCommand?
    /// A timer or sun trigger's conditions on characteristics (an event trigger's
    /// are part of its event): all must hold when it fires.
    public var conditions: [CharacteristicCondition]

    public init(
        id: ObjectID, homeID: ObjectID, name: String, isEnabled: Bool = true, actionSetIDs: [ObjectID] = [],
        kind: TriggerKind, condition: TimeCondition = .always, holdMs: Int64 = 0, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) {
        self.conditions = conditions
        self.command = command
        self.executeOnce = executeOnce
        self.end = end
        self.id = id
        self.homeID = homeID
        self.name = name
        self.isEnabled = isEnabled
        self.actionSetIDs = actionSetIDs
        self.kind = kind
        self.condition = condition
        self.holdMs = holdMs
    }
}
