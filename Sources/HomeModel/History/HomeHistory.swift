/// Where the daemon keeps its journal beyond memory (SQLite in `homed`, see
/// HomeStorage): every committed event, so that history can be asked for and a
/// client resuming across a restart gets the events it missed.
///
/// The store appends each commit's events under its lock, after they are numbered
/// and before anyone hears of them, with the commit's values (`CommitLog`); reads
/// and purges run outside the lock, each step serialized with the appends by the
/// storage itself.
package protocol HomeHistory: Sendable {
    /// The journal the last run kept: its id and the last sequence number stored,
    /// or nil when none is stored (a new file, or history was off).
    func storedJournal() throws(HomeError) -> StoredJournal?

    /// Records `id` as the journal this run appends to; a different id than the
    /// stored one also forgets the stored events (their numbers are another journal's).
    func beginJournal(id: String) throws(HomeError)

    /// Stored events in sequence order (newest first when asked), one page.
    func events(_ query: HistoryQuery) throws(HomeError) -> HistoryPage

    /// The sequence number of the first stored event at or after `timeMs`, or nil
    /// when every stored event is older.
    func firstSeq(atOrAfter timeMs: Int64) throws(HomeError) -> UInt64?

    /// The first sequence number stored (nil: nothing is).
    func oldestStoredSeq() throws(HomeError) -> UInt64?

    /// The last sequence number folded into the rollups (0: none).
    func rollupWatermark() throws(HomeError) -> UInt64

    /// Folds points into the stored rollups (merging with the slices they share)
    /// and moves the watermark to `throughSeq`, in one transaction.
    func applyRollups(_ points: [RollupPoint], throughSeq: UInt64) throws(HomeError)

    /// One characteristic's rollups of one width, oldest first, for slices that
    /// start in [sinceMs, untilMs).
    func rollups(characteristicID: ObjectID, widthMs: Int64, sinceMs: Int64, untilMs: Int64, limit: Int)
        throws(HomeError) -> [RollupPoint]

    /// Deletes at most `limit` rollups of slices that start before `beforeMs`.
    func purgeRollups(before beforeMs: Int64, limit: Int) throws(HomeError) -> Int

    /// Deletes at most `limit` commits whose events all expired by `nowMs`.
    ///
    /// - Returns: how many commits it deleted (fewer than `limit`: nothing more is due).
    func purgeEvents(expiredBy nowMs: Int64, limit: Int) throws(HomeError) -> Int
}

/// What a previous run left of its journal.
package struct StoredJournal: Sendable, Hashable {
    package var id: String
    package var lastSeq: UInt64

    package init(id: String, lastSeq: UInt64) {
        self.id = id
        self.lastSeq = lastSeq
    }
}

/// One page of stored events, as the storage reads them: in sequence order, by
/// sequence number and time. Filtering by what the events are about is the
/// caller's (it knows the home).
package struct HistoryQuery: Sendable, Hashable {
    /// Only events after this sequence number (0: from the first).
    package var afterSeq: UInt64
    /// Only events before this sequence number (nil: up to the last).
    package var beforeSeq: UInt64?
    /// Only events at or after this time (ms since the epoch; nil: any).
    package var sinceMs: Int64?
    /// Only events before this time (nil: any).
    package var untilMs: Int64?
    /// Newest first: the page ends at `beforeSeq` and walks back.
    package var newestFirst: Bool
    /// Stored commits read at most for this page (a commit holds one or more events).
    package var commitLimit: Int
    /// Only commits about one of these ids (an event's characteristic, service or
    /// accessory; a layout change's object, home or parent; a scene's or trigger's
    /// id; the trigger of an automation's change or note); empty: every commit. It narrows what is read: a commit about X may
    /// still hold events about others, which the caller filters out.
    package var subjects: [ObjectID]

    package init(
        afterSeq: UInt64 = 0, beforeSeq: UInt64? = nil, sinceMs: Int64? = nil, untilMs: Int64? = nil,
        newestFirst: Bool = false, commitLimit: Int = 512, subjects: [ObjectID] = []
    ) {
        self.subjects = subjects
        self.afterSeq = afterSeq
        self.beforeSeq = beforeSeq
        self.sinceMs = sinceMs
        self.untilMs = untilMs
        self.newestFirst = newestFirst
        self.commitLimit = commitLimit
    }
}

extension HomeEvent {
    /// The ids a stored commit is found by (see `HistoryQuery.subjects`); what an
    /// automation did (its scenes' changes, its notes) is also found by its trigger,
    /// for the trigger's trace and for what a restart reads back.
    package var subjects: [ObjectID] {
        let own: [ObjectID]
        switch body {
        case .value(let change): own = [change.characteristicID, change.serviceID, change.accessoryID]
        case .reachability(let accessoryID, _): own = [accessoryID]
        case .layout(let change): own = [change.objectID, change.homeID, change.parentID].filter { $0 != 0 }
        case .primaryHome(let id), .actionSetExecuted(let id), .triggerFired(let id): own = [id]
        case .audit: own = []
        }
        guard origin.kind == .automation, let trigger = origin.triggerChain.last, !own.contains(trigger) else {
            return own
        }
        return own + [trigger]
    }
}

/// Events read from the stored journal.
package struct HistoryPage: Sendable {
    /// In the order the query asked for.
    package var events: [HomeEvent]
    /// True when the commit limit stopped the read: more may follow.
    package var truncated: Bool

    package init(events: [HomeEvent], truncated: Bool) {
        self.events = events
        self.truncated = truncated
    }
}
