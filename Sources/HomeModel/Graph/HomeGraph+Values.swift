extension HomeGraph {
    /// Checks a write without making it, so a batch can be checked whole before any
    /// of it is applied.
    ///
    /// - Returns: The value as it would be stored (normalized).
    /// - Throws: `.notFound` naming the id if it is not a characteristic (and what it
    ///   is instead); `.invalidArgument` as `Characteristic.validate(_:enforceWritable:)`.
    public func validateWrite(_ value: CharacteristicValue, to id: ObjectID, enforceWritable: Bool) throws(HomeError)
        -> CharacteristicValue
    {
        try requireCharacteristic(id).validate(value, enforceWritable: enforceWritable)
    }

    /// A write checked against its characteristic, read in place (the hot path of
    /// every write: copying a `Characteristic` out of the table costs more than the
    /// check itself).
    ///
    /// - Returns: nil when `id` is no characteristic (`validateWrite` says what it is).
    /// - Throws: `.invalidArgument` as `Characteristic.validate(_:enforceWritable:)`.
    public func checkWrite(_ value: CharacteristicValue, to id: ObjectID, enforceWritable: Bool) throws(HomeError)
        -> CheckedWrite?
    {
        guard let index = characteristics.index(forKey: id) else { return nil }
        return try characteristics.values[index].checkWrite(value, enforceWritable: enforceWritable, at: index)
    }

    /// Validates, normalizes and stores a characteristic's value.
    ///
    /// - Parameters:
    ///   - nowMs: The time of the write; becomes `lastUpdatedMs` if the value changed.
    ///   - enforceWritable: True for clients; false for providers and the simulator,
    ///     which report read-only state such as a current temperature.
    /// - Returns: The stored value if it changed, or nil if the characteristic held it
    ///   already. Event-only characteristics (a button press) and write-only ones
    ///   (Identify) report every write: each is an occurrence, and there is no state
    ///   to compare with.
    /// - Throws: as `validateWrite(_:to:enforceWritable:)`; nothing changes then.
    @discardableResult
    public mutating func writeValue(_ value: CharacteristicValue, to id: ObjectID, nowMs: Int64,
                                    enforceWritable: Bool) throws(HomeError) -> CharacteristicValue? {
        let characteristic = try requireCharacteristic(id)
        let stored = try characteristic.validate(value, enforceWritable: enforceWritable)
        if characteristic.value == stored && characteristic.properties.readable && !characteristic.isEventOnly {
            return nil
        }
        characteristics[id]?.value = stored
        characteristics[id]?.lastUpdatedMs = nowMs
        return stored
    }

    /// Records whether an accessory can be reached (its provider says so).
    ///
    /// - Returns: Whether that changed anything.
    @discardableResult
    public mutating func setReachable(_ reachable: Bool, accessoryID: ObjectID) throws(HomeError) -> Bool {
        let accessory = try requireAccessory(accessoryID)
        if accessory.isReachable == reachable { return false }
        accessories[accessoryID]?.isReachable = reachable
        return true
    }
}

extension HomeGraph {
    /// Stores a value `validateWrite(_:to:enforceWritable:)` returned, without
    /// validating it again: the daemon validates a whole batch first, then applies it.
    ///
    /// - Returns: as `writeValue(_:to:nowMs:enforceWritable:)`; nil also when `id`
    ///   is not a characteristic (it was validated, so that cannot happen).
    @discardableResult
    public mutating func storeValidated(_ value: CharacteristicValue, to id: ObjectID, nowMs: Int64) -> CharacteristicValue? {
        // In place through the table's index. (The optional subscript's modify
        // accessor allocated a coroutine frame per call.)
        guard let index = characteristics.index(forKey: id) else { return nil }
        return characteristics.values[index].store(value, isOccurrence: nil, nowMs: nowMs)
    }

    /// Stores a write `checkWrite(_:to:enforceWritable:)` passed, at the position
    /// it found (the table has not changed in between: only values were stored,
    /// and a position survives a copy-on-write copy of the table).
    ///
    /// - Returns: the stored value if it changed (or is an occurrence), nil when the
    ///   characteristic held it already.
    public mutating func store(_ checked: CheckedWrite, nowMs: Int64) -> CharacteristicValue? {
        characteristics.values[checked.index].store(checked.value, isOccurrence: checked.isOccurrence, nowMs: nowMs)
    }
}

extension Characteristic {
    /// Stores a validated value; returns it if it changed (or is an occurrence), nil
    /// when the characteristic already held it.
    ///
    /// - Parameter isOccurrence: whether the characteristic is event-only, when the
    ///   caller knows already (nil: look it up).
    fileprivate mutating func store(_ newValue: CharacteristicValue, isOccurrence: Bool?, nowMs: Int64) -> CharacteristicValue? {
        if value == newValue && properties.readable && !(isOccurrence ?? isEventOnly) { return nil }
        value = newValue
        lastUpdatedMs = nowMs
        return newValue
    }
}

/// A write that passed validation, with what publishing its change needs.
public struct CheckedWrite: Sendable {
    /// The value as it will be stored (normalized).
    public var value: CharacteristicValue
    public var accessoryID: ObjectID
    public var serviceID: ObjectID
    /// An occurrence (a button press): every write is an event, never merged.
    public var isOccurrence: Bool
    /// Where the characteristic is in the graph's table.
    public var index: HomeGraph.CharacteristicIndex
}

extension Characteristic {
    fileprivate func checkWrite(_ value: CharacteristicValue, enforceWritable: Bool,
                                at index: HomeGraph.CharacteristicIndex) throws(HomeError) -> CheckedWrite {
        CheckedWrite(value: try validate(value, enforceWritable: enforceWritable), accessoryID: accessoryID,
                     serviceID: serviceID, isOccurrence: isEventOnly, index: index)
    }
}
