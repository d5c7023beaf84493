/// One commit as it is made durable: the values it stored (the value log's row:
/// each characteristic once, with its last value), or for a layout commit the
/// layout before and after it; and, when the daemon keeps a history, its numbered
/// events.
package struct CommitRecord: Sendable {
    /// Consecutive, of one time and origin; empty when no history is kept.
    package var events: [HomeEvent]
    /// Until when the history keeps the events (their retention).
    package var keepUntilMs: Int64
    package var values: [SavedValue]
    /// The commit's time: its events' and its values'.
    package var timeMs: Int64

    /// For a layout commit, what storage writes instead of a value log row.
    package var layout: LayoutSave?

    package init(
        events: [HomeEvent], keepUntilMs: Int64, values: [SavedValue], timeMs: Int64, layout: LayoutSave? = nil
    ) {
        self.events = events
        self.keepUntilMs = keepUntilMs
        self.values = values
        self.timeMs = timeMs
        self.layout = layout
    }

    package var isEmpty: Bool { events.isEmpty && values.isEmpty && layout == nil }
}

/// A layout commit as storage makes it durable: the rows where `after` differs
/// from `before` (what is stored now), and, in the same transaction, the current
/// values of `unfolded` (every characteristic the value log holds a change of)
/// saved into their rows and the value log emptied, so that a row written here is
/// never older than a logged change replayed over it.
package struct LayoutSave: Sendable {
    package var before: HomeGraph
    package var after: HomeGraph
    package var unfolded: [Characteristic]

    package init(before: HomeGraph, after: HomeGraph, unfolded: [Characteristic]) {
        self.before = before
        self.after = after
        self.unfolded = unfolded
    }
}

/// Where commits are made durable: the one call the store's commit makes to
/// storage (SQLite in `homed`, see HomeStorage), under its lock, after a change is
/// decided and before anyone hears of it.
package protocol CommitLog: Sendable {
    /// Makes a commit durable in one transaction: its values (or its layout, with
    /// the value log folded) and its events, all or nothing. When it returns they
    /// survive the process's death (a layout, power loss too); if it throws,
    /// nothing was written.
    func append(_ record: CommitRecord) throws(HomeError)
}
