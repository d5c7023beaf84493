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
        return try characteristics.values[index].checkWrite(value, enforceWritable: enforceWritable)
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
        storeValidatedAt(value, to: id, nowMs: nowMs)?.value
    }

    /// As `storeValidated(_:to:nowMs:)`, and where the characteristic is in the
    /// table, so that publishing the change need not look it up again.
    public mutating func storeValidatedAt(_ value: CharacteristicValue, to id: ObjectID, nowMs: Int64)
        -> (value: CharacteristicValue, index: CharacteristicIndex)?
    {
        // In place through the table's index: this runs for every write. (The
        // optional subscript's modify accessor allocated a coroutine frame per call.)
        guard let index = characteristics.index(forKey: id),
              let stored = characteristics.values[index].store(value, nowMs: nowMs) else { return nil }
        return (stored, index)
    }
}

extension Characteristic {
    /// Stores a validated value; returns it if it changed (or is an occurrence), nil
    /// when the characteristic already held it.
    fileprivate mutating func store(_ newValue: CharacteristicValue, nowMs: Int64) -> CharacteristicValue? {
        if value == newValue && properties.readable && !isEventOnly { return nil }
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
}

extension Characteristic {
    fileprivate func checkWrite(_ value: CharacteristicValue, enforceWritable: Bool) throws(HomeError) -> CheckedWrite {
        CheckedWrite(value: try validate(value, enforceWritable: enforceWritable), accessoryID: accessoryID,
                     serviceID: serviceID, isOccurrence: isEventOnly)
    }
}
