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
    /// How long the event must hold before the trigger fires (0: at once).
    var holdMs: Int64 = 0
    /// Whether its end waits for the event to end (so the engine is told when it does).
    var endsWithEvent = false

    /// The rule of an enabled event trigger; nil for a timer or a disabled trigger.
    init?(_ trigger: Trigger) {
        guard trigger.isEnabled,
            case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions) = trigger.kind
        else { return nil }
        self.init(
            triggerID: trigger.id, characteristicID: characteristicID, value: value, rangeMin: rangeMin,
            rangeMax: rangeMax, conditions: conditions)
        self.holdMs = trigger.holdMs
        self.endsWithEvent = trigger.end.whenEventEnds
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

    /// Whether `value` is what the trigger waits for (its value, in its range, or
    /// any value when it has neither): while it is, a hold goes on.
    func matches(_ value: CharacteristicValue) -> Bool {
        EventMatch.matches(value, value: self.value, rangeMin: rangeMin, rangeMax: rangeMax)
    }

    /// The first condition that does not hold, described, or nil when all hold.
    func failedCondition(in graph: HomeGraph) -> String? {
        Self.failedCondition(conditions, in: graph)
    }

    /// The first of `conditions` that does not hold in `graph`, described: "its
    /// condition Living Room/Lamp/Lightbulb/Brightness < 95 does not hold (it is 99%)".
    static func failedCondition(_ conditions: [CharacteristicCondition], in graph: HomeGraph) -> String? {
        conditions.first { !Self.holds($0, current: graph.characteristics[$0.characteristicID]?.value) }.map {
            "its condition \(described($0, in: graph)) does not hold (it is \(seen($0, in: graph)))"
        }
    }

    /// Each of `conditions` with the value it saw, for a firing's note: "Living
    /// Room/Lamp/Lightbulb/Brightness < 95 held (it was 30%)".
    static func heldConditions(_ conditions: [CharacteristicCondition], in graph: HomeGraph) -> [String] {
        conditions.map { "\(described($0, in: graph)) held (it was \(seen($0, in: graph)))" }
    }

    private static func described(_ condition: CharacteristicCondition, in graph: HomeGraph) -> String {
        let id = condition.characteristicID
        return "\(graph.path(of: id) ?? "characteristic \(id)") \(condition.comparison.rawValue) "
            + graph.shown(condition.value, of: id)
    }

    private static func seen(_ condition: CharacteristicCondition, in graph: HomeGraph) -> String {
        let id = condition.characteristicID
        return graph.characteristics[id]?.value.map { graph.shown($0, of: id) } ?? Characteristic.noValueYet
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
        condition.holds(for: current)
    }

    static func equal(_ lhs: CharacteristicValue, _ rhs: CharacteristicValue) -> Bool {
        lhs.sameValue(as: rhs)
    }
}
