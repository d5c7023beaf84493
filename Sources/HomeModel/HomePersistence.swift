/// Where the daemon keeps the home (SQLite in `homed`, see HomeStorage; nothing in
/// tests and `--in-memory`). The store calls it under its lock, so calls never
/// overlap and every call sees the graph as the store does.
///
/// Layout is made durable against power loss before it is acknowledged. Values are
/// appended to a log that survives the process's death before they are
/// acknowledged or published, and folded into the tables from time to time; what
/// is in the tables plus the log, replayed in order, is always the last state
/// acknowledged.
package protocol HomePersistence: CommitLog {
    /// Saves the current values of these characteristics (all those changed since
    /// the last fold) and empties the value log, in one transaction.
    func foldValueLog(into characteristics: [Characteristic]) throws(HomeError)

    /// Makes a consistent copy of what is stored in a new file beside it, while the
    /// daemon goes on saving, and returns the copy's path (the caller removes it).
    /// The one call made outside the store's lock: the copy is taken in small
    /// steps, each serialized with the saves by the persistence itself, so that a
    /// writer waits for one step at most, never for the whole copy.
    func backupToTemporaryFile() throws(HomeError) -> String
}

extension HomePersistence {
    package func backupToTemporaryFile() throws(HomeError) -> String {
        throw HomeError(.unimplemented, "this daemon's storage cannot make a backup")
    }
}

/// A characteristic's value as the value log records it.
package struct SavedValue: Sendable, Hashable {
    package var characteristicID: ObjectID
    package var value: CharacteristicValue?

    package init(characteristicID: ObjectID, value: CharacteristicValue?) {
        self.characteristicID = characteristicID
        self.value = value
    }
}
