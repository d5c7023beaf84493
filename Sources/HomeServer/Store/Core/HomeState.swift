internal import HomeModel

/// The daemon's state as a value: the graph, the journal, the versions that tell a
/// change planned on one state whether it still holds, and the conditional writes
/// in flight. No I/O and no lock: `HomeStore` keeps one under its lock; every
/// change is a `StoreChange` that `commit` decides and installs
/// (HomeState+Commit.swift), and the store makes durable and heard.
struct HomeState {
    var graph: HomeGraph
    var journal: Journal
    /// Changes whenever the graph's layout does (never for values or
    /// reachability): subscription filters cache their verdicts per layout.
    var layoutVersion: UInt64 = 0
    /// Changes with every commit, values included: a change planned on a
    /// snapshot outside the lock may be installed only while it is unchanged.
    var graphVersion: UInt64 = 0
    /// Characteristics with a conditional write sent to their provider and not
    /// yet answered (`Transaction.claim`).
    var conditionalWritesInFlight: Set<ObjectID> = []
    /// Characteristics whose values the value log holds and the tables do not yet
    /// (changed since the log was last folded): what the next fold or layout save
    /// writes into their rows. Empty when nothing is persisted.
    var unfoldedValueIDs: Set<ObjectID> = []
    /// Characteristics a device value was kept in another form than reported for
    /// (rounded to the step, clamped to the format), ever this run: a report's
    /// result names each one the first time only, so that it is said once.
    var adjustedValueIDs: Set<ObjectID> = []

    init(graph: HomeGraph, journal: Journal) {
        self.graph = graph
        self.journal = journal
    }

    /// Begins a change. A `.values` change edits the graph itself, moved into the
    /// transaction (moved, not copied, so that editing it in place copies none of
    /// its tables); a `.layout` change edits a copy. The claims move in with it.
    ///
    /// - Parameter keepingUndo: note each stored value's previous state, so that
    ///   the change can be taken back if it cannot be made durable.
    mutating func begin(_ kind: CommitKind, nowMs: Int64, keepingUndo: Bool) -> Transaction {
        let firstSeq = journal.lastSeq + 1
        var transaction: Transaction
        switch kind {
        case .values:
            transaction = Transaction(
                kind: kind, graph: HomeGraph(), before: nil, firstSeq: firstSeq, nowMs: nowMs,
                layoutVersion: layoutVersion, graphVersion: graphVersion)
            if keepingUndo { transaction.undo = [] }
            swap(&transaction.graph, &graph)
        case .layout:
            transaction = Transaction(
                kind: kind, graph: graph, before: graph, firstSeq: firstSeq, nowMs: nowMs,
                layoutVersion: layoutVersion, graphVersion: graphVersion)
        }
        swap(&transaction.claims, &conditionalWritesInFlight)
        transaction.claimsBefore = transaction.claims
        return transaction
    }

    /// Takes back what a change that threw had taken: the state is as it was, its
    /// claims included (a `.values` change throws only before it edits the graph;
    /// a `.layout` change's copy is dropped).
    mutating func abandon(_ transaction: inout Transaction) {
        conditionalWritesInFlight = transaction.claimsBefore
        if transaction.kind == .values { swap(&transaction.graph, &graph) }
    }

    /// Installs a change: its graph and claims in place, the versions moved on.
    /// Its events are journaled once it is durable (`StateCommit`).
    mutating func install(_ transaction: inout Transaction) {
        swap(&transaction.claims, &conditionalWritesInFlight)
        swap(&transaction.graph, &graph)
        if transaction.kind == .layout { layoutVersion &+= 1 }
        graphVersion &+= 1
    }
}

/// How a change reaches the graph.
enum CommitKind {
    /// Values and reachability: applied to the graph in place.
    case values
    /// Layout: applied to a copy, which is installed only if the change (and
    /// the save it makes) succeeds; bumps the layout version.
    case layout
}

/// A change under way: the graph it edits and the events it will publish.
struct Transaction {
    let kind: CommitKind
    var graph: HomeGraph
    /// For a layout commit, the graph as it was (what persistence has stored).
    let before: HomeGraph?
    /// The sequence number the first emitted event gets: nothing else publishes
    /// while a commit holds the lock, so its events' numbers are known ahead.
    let firstSeq: UInt64
    /// The commit's time: its events' time, and the time of the values it stores.
    let nowMs: Int64
    /// The layout `graph` has when the change begins (`HomeState.layoutVersion`).
    let layoutVersion: UInt64
    /// The store's graph version when the commit began (see `HomeState.graphVersion`).
    let graphVersion: UInt64
    private(set) var events: [PendingEvent] = []
    /// The state's conditional writes in flight, moved in for the change to claim
    /// and release (`HomeState.conditionalWritesInFlight`).
    var claims: Set<ObjectID> = []
    /// The claims as they were when the change began, put back if it throws (a
    /// second reference: the first claim a change makes copies the set, which
    /// holds only the conditional writes in flight).
    fileprivate(set) var claimsBefore: Set<ObjectID> = []
    /// For a `.values` commit with persistence: each stored value's previous
    /// state, in order, so that the commit can be undone if the value log
    /// refuses it. Nil when nothing is persisted.
    var undo: [ValueUndo]?

    struct ValueUndo {
        var index: HomeGraph.CharacteristicIndex
        var characteristicID: ObjectID
        var value: CharacteristicValue?
        var lastUpdatedMs: Int64
        var changeSeq: UInt64
    }

    struct PendingEvent {
        var body: HomeEvent.Body
        /// Where a value event's characteristic is in the graph's table, when
        /// the change has it at hand (saves a lookup per event).
        var subject: HomeGraph.CharacteristicIndex?
        /// False for occurrences (a doorbell press), never merged; nil: look it up.
        var mergeable: Bool?
    }

    /// Records an event to publish once the change commits.
    ///
    /// - Returns: the sequence number it will have.
    @discardableResult
    mutating func emit(
        _ body: HomeEvent.Body, subject: HomeGraph.CharacteristicIndex? = nil,
        mergeable: Bool? = nil
    ) -> UInt64 {
        events.append(PendingEvent(body: body, subject: subject, mergeable: mergeable))
        return firstSeq + UInt64(events.count - 1)
    }
}
