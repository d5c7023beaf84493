internal import HomeModel

/// An enabled event trigger, as checked against each change of the characteristic
/// it watches. Pure: no store, no clock.
///
/// A trigger fires on a *transition*: when the characteristic becomes its value
/// (it was something else, or nothing), or enters its range (it was outside, or
/// had no value), never again while it stays there. With neither a value nor a
/// range, every change fires. An event characteristic (a doorbell press) has no
/// state to leave, so each of its occurrences that matches fires.
struct EventTriggerRule: Hashable, Sendable {
    var triggerID: ObjectID
    var characteristicID: ObjectID
    var value: CharacteristicValue?
    var rangeMin: Double?
    var rangeMax: Double?
    var conditions: [CharacteristicCondition]

    /// The rule of an enabled event trigger; nil for a timer or a disabled trigger.
    init?(_ trigger: Trigger) {
        guard trigger.isEnabled,
            case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions) = trigger.kind
        else { return nil }
        self.init(
            triggerID: trigger.id, characteristicID: characteristicID, value: value, rangeMin: rangeMin,
            rangeMax: rangeMax, conditions: conditions)
    }

    init(
        triggerID: ObjectID, characteristicID: ObjectID, value: CharacteristicValue? = nil, rangeMin: Double? = nil,
        rangeMax: Double? = nil, conditions: [CharacteristicCondition] = []
    ) {
        self.triggerID = triggerID
        self.characteristicID = characteristicID
        self.value = value
        self.rangeMin = rangeMin
        self.rangeMax = rangeMax
        self.conditions = conditions
    }

    /// Whether the watched characteristic changing from `old` to `new` is a moment
    /// this trigger fires at (conditions aside).
    ///
    /// - Parameter occurrence: the characteristic is an event characteristic, whose
    ///   every write is an occurrence rather than a state.
    func fires(from old: CharacteristicValue?, to new: CharacteristicValue, occurrence: Bool = false) -> Bool {
        if let value {
            guard Self.equal(new, value) else { return false }
            return occurrence || !(old.map { Self.equal($0, value) } ?? false)
        }
        if rangeMin == nil && rangeMax == nil { return true }
        guard isInRange(new) else { return false }
        return occurrence || !(old.map(isInRange) ?? false)
    }

    func isInRange(_ value: CharacteristicValue) -> Bool {
        guard let number = value.numericValue else { return false }
        return (rangeMin.map { number >= $0 } ?? true) && (rangeMax.map { number <= $0 } ?? true)
    }

    /// Whether every condition holds in `graph` (a characteristic that is gone or
    /// has no value fails its condition).
    func conditionsHold(in graph: HomeGraph) -> Bool {
        conditions.allSatisfy { condition in
            Self.holds(condition, current: graph.characteristics[condition.characteristicID]?.value)
        }
    }

    static func holds(_ condition: CharacteristicCondition, current: CharacteristicValue?) -> Bool {
        guard let current else { return false }
        switch condition.comparison {
        case .equal: return equal(current, condition.value)
        case .notEqual: return !equal(current, condition.value)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let lhs = current.numericValue, let rhs = condition.value.numericValue else { return false }
            switch condition.comparison {
            case .less: return lhs < rhs
            case .lessOrEqual: return lhs <= rhs
            case .greater: return lhs > rhs
            default: return lhs >= rhs
            }
        }
    }

    /// Values are equal when identical, or when both are numbers of equal value
    /// (`.uint(1)` and `.int(1)`, `.bool(true)` and `.uint(1)`): the model normalizes
    /// what it stores, but a comparison should not depend on it.
    static func equal(_ lhs: CharacteristicValue, _ rhs: CharacteristicValue) -> Bool {
        if lhs == rhs { return true }
        guard let left = lhs.numericValue, let right = rhs.numericValue else { return false }
        return left == right
    }
}
