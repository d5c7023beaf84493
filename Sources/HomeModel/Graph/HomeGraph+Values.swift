extension HomeGraph {
    /// Checks a write without making it, so a batch can be checked whole before any
    /// of it is applied.
    ///
    /// - Returns: The value as it would be stored (normalized).
    /// - Throws: `.notFound` naming the id if it is not a characteristic (and what it
    ///   is instead); `.invalidArgument` as `Characteristic.validate(_:enforceWritable:)`.
    package func validateWrite(_ value: CharacteristicValue, to id: ObjectID, enforceWritable: Bool) throws(HomeError)
        -> CharacteristicValue
    {
        try requireCharacteristic(id).validate(value, enforceWritable: enforceWritable)
    }

    /// A write checked against its characteristic, read in place (the hot path of
    /// every write: copying a `Characteristic` out of the table costs more than the
    /// check itself).
    ///
    /// - Returns: nil when `id` is no characteristic (`validateWrite` says what it is).
    /// - Throws: `.invalidArgument` as `Characteristic.validate(_:enforceWritable:source:)`.
    package func checkWrite(
        _ value: CharacteristicValue, to id: ObjectID, enforceWritable: Bool, source: ValueSource = .request
    ) throws(HomeError) -> CheckedWrite? {
        guard let index = characteristics.index(forKey: id) else { return nil }
        return try characteristics.values[index].checkWrite(
            value, enforceWritable: enforceWritable, source: source, at: index)
    }

    /// Records whether an accessory can be reached (its provider says so).
    ///
    /// - Returns: Whether that changed anything.
    @discardableResult
    package mutating func setReachable(_ reachable: Bool, accessoryID: ObjectID) throws(HomeError) -> Bool {
        let accessory = try requireAccessory(accessoryID)
        if accessory.isReachable == reachable { return false }
        accessories[accessoryID]?.isReachable = reachable
        return true
    }
}

extension HomeGraph {
    /// Stores a write `checkWrite` passed, without checking it again: the daemon
    /// checks a whole batch first, then applies it.
    ///
    /// - Returns: the stored value if it changed (or is an occurrence), nil when the
    ///   characteristic held it already.
    package mutating func store(_ checked: CheckedWrite, nowMs: Int64) -> CharacteristicValue? {
        characteristics.values[checked.index].store(checked.value, isOccurrence: checked.isOccurrence, nowMs: nowMs)
    }

    /// `store`, also giving the value and time the characteristic held before
    /// (read in place, without copying the characteristic), for undoing it.
    package mutating func storeKeepingPrevious(_ checked: CheckedWrite, nowMs: Int64) -> (
        changed: CharacteristicValue?, previousValue: CharacteristicValue?, previousUpdatedMs: Int64,
        previousChangeSeq: UInt64
    ) {
        let previousValue = characteristics.values[checked.index].value
        let previousUpdatedMs = characteristics.values[checked.index].lastUpdatedMs
        let previousChangeSeq = characteristics.values[checked.index].changeSeq
        let changed = characteristics.values[checked.index].store(
            checked.value, isOccurrence: checked.isOccurrence, nowMs: nowMs)
        return (changed, previousValue, previousUpdatedMs, previousChangeSeq)
    }

    /// Puts back a value as it was before `store` (a change that could not be saved).
    package mutating func restoreValue(
        _ value: CharacteristicValue?, lastUpdatedMs: Int64, changeSeq: UInt64, at index: CharacteristicIndex
    ) {
        characteristics.values[index].value = value
        characteristics.values[index].lastUpdatedMs = lastUpdatedMs
        characteristics.values[index].changeSeq = changeSeq
    }
}

extension Characteristic {
    /// Stores a validated value; returns it if it changed (or is an occurrence), nil
    /// when the characteristic already held it.
    ///
    /// - Parameter isOccurrence: whether the characteristic is event-only, when the
    ///   caller knows already (nil: look it up).
    fileprivate mutating func store(_ newValue: CharacteristicValue, isOccurrence: Bool?, nowMs: Int64)
        -> CharacteristicValue?
    {
        if value == newValue && properties.readable && !(isOccurrence ?? isEventOnly) { return nil }
        value = newValue
        lastUpdatedMs = nowMs
        return newValue
    }
}

/// A write that passed validation, with what publishing its change needs.
package struct CheckedWrite: Sendable {
    /// The value as it will be stored (normalized).
    package var value: CharacteristicValue
    package var accessoryID: ObjectID
    package var serviceID: ObjectID
    /// An occurrence (a button press): every write is an event, never merged.
    package var isOccurrence: Bool
    /// Where the characteristic is in the graph's table.
    package var index: HomeGraph.CharacteristicIndex
}

extension Characteristic {
    fileprivate func checkWrite(
        _ value: CharacteristicValue, enforceWritable: Bool, source: ValueSource,
        at index: HomeGraph.CharacteristicIndex
    ) throws(HomeError) -> CheckedWrite {
        CheckedWrite(
            value: try validate(value, enforceWritable: enforceWritable, source: source), accessoryID: accessoryID,
            serviceID: serviceID, isOccurrence: isEventOnly, index: index)
    }
}
