/// One commit as it is made durable: the values it stored (the value log's row:
/// each characteristic once, with its last value) and, when the daemon keeps a
/// history, its numbered events.
package struct CommitRecord: Sendable {
    /// Consecutive, of one time and origin; empty when no history is kept.
    package var events: [HomeEvent]
    /// Until when the history keeps the events (their retention).
    package var keepUntilMs: Int64
    package var values: [SavedValue]
    /// The commit's time: its events' and its values'.
    package var timeMs: Int64

    package init(events: [HomeEvent], keepUntilMs: Int64, values: [SavedValue], timeMs: Int64) {
        self.events = events
        self.keepUntilMs = keepUntilMs
        self.values = values
        self.timeMs = timeMs
    }

    package var isEmpty: Bool { events.isEmpty && values.isEmpty }
}

/// Where commits are made durable: the one call the store's commit makes to
/// storage (SQLite in `homed`, see HomeStorage), under its lock, after a change is
/// decided and before anyone hears of it.
package protocol CommitLog: Sendable {
    /// Makes a commit durable in one transaction: its values and its events, both
    /// or neither. When it returns they survive the process's death; if it throws,
    /// nothing was written.
    func append(_ record: CommitRecord) throws(HomeError)
}
