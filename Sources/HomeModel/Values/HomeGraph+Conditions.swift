extension HomeGraph {
    /// Checks a conditional write's expectation against the characteristic as the
    /// graph holds it now. The daemon calls it under the store's lock, in the commit
    /// that applies the write, so nothing can change the value in between.
    ///
    /// - Parameters:
    ///   - journalID: the running daemon's journal; a condition's `seq` from another
    ///     journal never holds.
    /// - Throws: `.failedPrecondition` naming the characteristic, its current value
    ///   and the seq of its last change when the condition does not hold;
    ///   `.invalidArgument` when the expected value does not suit the format.
    package func checkCondition(_ condition: WriteCondition, for id: ObjectID, journalID: String) throws(HomeError) {
        let characteristic = try requireCharacteristic(id)
        let label = "characteristic \(id) (\(characteristic.type.name))"
        let current = characteristic.value.map { "\($0.shortDescription)" } ?? "no value yet"
        let now = "\(current), last changed at seq \(characteristic.changeSeq)"
        if let seq = condition.seq {
            if !condition.journalID.isEmpty && condition.journalID != journalID {
                throw HomeError(
                    .failedPrecondition,
                    "\(label): the condition's seq \(seq) is from journal \(condition.journalID), and the daemon's "
                        + "journal is now \(journalID) (it restarted): read the value again; it is \(now); "
                        + "nothing written")
            }
            if seq != characteristic.changeSeq {
                throw HomeError(
                    .failedPrecondition,
                    "\(label) is \(now), not at seq \(seq) as the write expected; nothing written")
            }
        }
        if let expected = condition.value {
            guard let normalized = characteristic.normalized(expected) else {
                throw HomeError(
                    .invalidArgument,
                    "\(label): the condition's value, \(expected.phrase), does not suit its format "
                        + "\(characteristic.metadata.format)")
            }
            if normalized != characteristic.value {
                throw HomeError(
                    .failedPrecondition,
                    "\(label) is \(now), not \(normalized.shortDescription) as the write expected; nothing written")
            }
        }
    }

    /// Records the sequence number of the event that changed a characteristic's value.
    package mutating func markChanged(at index: CharacteristicIndex, seq: UInt64) {
        characteristics.values[index].changeSeq = seq
    }

    /// The sequence number of a characteristic's last change, read in place.
    package func changeSeq(at index: CharacteristicIndex) -> UInt64 {
        characteristics.values[index].changeSeq
    }
}
