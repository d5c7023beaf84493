internal import HomeClient
internal import HomeModel

/// One simulated accessory: the values its device holds, by the provider's
/// references, and what its behaviours remember between ticks.
struct SimulatedDevice: Sendable {
    let key: String
    /// The first characteristic of each type name, as behaviours address them.
    let refs: [String: CharacteristicRef]
    var values: [CharacteristicRef: CharacteristicValue]
    var behaviours: [BehaviourKind]
    /// Set while the accessory is unreachable: the tick it comes back at.
    var offlineUntilTick: Int?
    var memory: [String: Int] = [:]
    /// Occurrences (button presses) of this tick: reported even when the value repeats.
    var occurrences: [CharacteristicRef: CharacteristicValue] = [:]

    func values(of type: String) -> CharacteristicValue? {
        refs[type].flatMap { values[$0] }
    }

    func number(_ type: String) -> Double? {
        values(of: type)?.numericValue
    }

    mutating func set(_ type: String, _ value: CharacteristicValue) {
        guard let ref = refs[type] else { return }
        values[ref] = value
    }

    /// A single press of its programmable switch (a doorbell rings).
    mutating func press() {
        guard let ref = refs["ProgrammableSwitchEvent"] else { return }
        occurrences[ref] = .uint(0)
    }
}
