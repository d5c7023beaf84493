public import HomeModel
public import Logging
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// The daemon's state: the home graph, the event journal and the subscriptions,
/// behind one lock, with an API in the model's terms (writes in, outcomes and
/// sequence numbers out; layout operations applied by `HomeGraph`).
///
/// Every change goes through `commit`, so "apply, number, fan out" is atomic: a
/// subscriber's snapshot and its stream of changes never overlap or leave a gap.
/// Besides in-memory work, the lock covers the saves that must be ordered with the
/// changes they save, so that nothing is published before it is durable and no
/// change slips between a save and the log it empties: a layout commit's save
/// (which folds the value log too), a value commit's append to the value log, and
/// a fold of the log. In-process observers (the automation engine) see each event
/// under it as well. A provider's registration, the largest change, is planned on a
/// snapshot outside the lock and only installed under it. An event that several
/// subscribers queue is packed once, under
/// the lock; every other encoding and every socket write happen later on each
/// subscriber's event loop, so a publisher never waits for a subscriber.
public final class HomeStore: Sendable {
    public let journalID: String
    /// The last sequence number published, readable without the lock.
    let publishedSeq = PublishedSequence()
    let startedAtMs: Int64
    let persistence: (any HomePersistence)?
    /// Characteristics changed since the value log was last folded; nil without persistence.
    let writtenValues: WrittenValues?
    /// Device values kept in another form than reported, logged once each.
    let adjustedDeviceValues: AdjustedDeviceValues
    /// Where every event is kept beyond memory (see HomeStore+History.swift).
    let history: StoredHistory?
    /// Set once a write to the stored history failed: nothing more is stored this run.
    let historyFailed: Locked<Bool>
    /// Held while events are folded into the rollups (see HomeStore+History.swift).
    let rollupFolding = Locked(())
    let logger: Logger

    struct State {
        var graph: HomeGraph
        var journal: Journal
        /// The open subscriptions and in-process observers, offered every event.
        var fanout = Fanout()
        /// Changes whenever the graph's layout does (never for values or
        /// reachability): subscription filters cache their verdicts per layout.
        var layoutVersion: UInt64 = 0
        /// Changes with every commit, values included: a change planned on a
        /// snapshot outside the lock may be installed only while it is unchanged.
        var graphVersion: UInt64 = 0
        /// Characteristics with a conditional write sent to their provider and not
        /// yet answered (`Transaction.claim`).
        var conditionalWritesInFlight: Set<ObjectID> = []
    }

    private let state: Locked<State>
    #if DEBUG
        /// How many times the lock was taken: tests pin how many a call takes.
        let lockAcquisitions = Atomic<Int>(0)
    #endif

    /// Takes the lock: every access to `state` goes through here.
    private func locked<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        #if DEBUG
            lockAcquisitions.add(1, ordering: .relaxed)
        #endif
        return try state.withLock { state throws(E) -> R in try body(&state) }
    }

    /// - Parameters:
    ///   - graph: the initial home graph.
    ///   - journalCapacity: how many recent events are held for resuming clients.
    ///   - journalByteCapacity: how many bytes of events (their strings and data
    ///     counted) the journal holds at most, whatever `journalCapacity` says.
    ///   - persistence: where changes are made durable before they are
    ///     acknowledged or published; nil keeps everything in memory.
    ///   - logger: where the store says what it did on its own (a device value it
    ///     rounded to the step, once per characteristic).
    ///   - history: where every committed event is kept beyond memory; with it the
    ///     journal continues across restarts. Nil: the journal lives in memory and
    ///     a restart begins a new one.
    package init(
        graph: HomeGraph, journalCapacity: Int = 100_000, journalByteCapacity: Int = 32 * 1024 * 1024,
        persistence: (any HomePersistence)?, history: StoredHistory? = nil,
        logger: Logger = Logger(label: "homed")
    ) {
        // Events are stored with the values of their commit, in one call to the commit
        // log: a history is kept only where values are.
        precondition(history == nil || persistence != nil, "a stored history needs the persistence that logs commits")
        let start = Self.startJournal(in: history, logger: logger)
        let journal = Journal(
            id: start.id, capacity: journalCapacity, byteCapacity: journalByteCapacity,
            lastStoredSeq: start.lastSeq)
        self.journalID = journal.id
        self.history = start.kept ? history : nil
        self.historyFailed = Locked(false)
        self.logger = logger
        self.startedAtMs = currentTimeMs()
        self.persistence = persistence
        self.writtenValues = persistence == nil ? nil : WrittenValues()
        self.adjustedDeviceValues = AdjustedDeviceValues(logger: logger)
        self.state = Locked(State(graph: graph, journal: journal))
    }

    /// A store that keeps everything in memory (the storage seams are the
    /// package's own: `homed` passes its SQLite file, HomeTesting a test's).
    public convenience init(
        graph: HomeGraph, journalCapacity: Int = 100_000, journalByteCapacity: Int = 32 * 1024 * 1024,
        logger: Logger = Logger(label: "homed")
    ) {
        self.init(
            graph: graph, journalCapacity: journalCapacity, journalByteCapacity: journalByteCapacity,
            persistence: nil, history: nil, logger: logger)
    }

    /// Runs `body` under the lock (for the store's extensions in other files).
    func withState<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        try locked(body)
    }

    /// A consistent copy of the graph and the sequence number it reflects (cheap:
    /// the graph's tables are copy-on-write).
    public func snapshot() -> (graph: HomeGraph, seq: UInt64) {
        locked { ($0.graph, $0.journal.lastSeq) }
    }

    public var lastSeq: UInt64 { locked { $0.journal.lastSeq } }

    public var subscriptionCount: Int { locked { $0.fanout.subscriptionCount } }

    public var statistics: (homes: Int, accessories: Int, characteristics: Int) {
        locked { ($0.graph.homes.count, $0.graph.accessories.count, $0.graph.characteristics.count) }
    }

    // MARK: The commit primitive

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
        var graph: HomeGraph
        /// For a layout commit, the graph as it was (what persistence has stored).
        let before: HomeGraph?
        /// The sequence number the first emitted event gets: nothing else publishes
        /// while a commit holds the lock, so its events' numbers are known ahead.
        let firstSeq: UInt64
        /// The commit's time: its events' time, and the time of the values it stores.
        let nowMs: Int64
        /// The layout `graph` has when the change begins (`State.layoutVersion`).
        let layoutVersion: UInt64
        /// The store's graph version when the commit began (see `State.graphVersion`).
        let graphVersion: UInt64
        fileprivate(set) var events: [PendingEvent] = []
        /// The store's conditional writes in flight, moved in for the change to claim
        /// and release (`State.conditionalWritesInFlight`).
        var claims: Set<ObjectID> = []
        /// For a `.values` commit with persistence: each stored value's previous
        /// state, in order, so that the commit can be undone if the value log
        /// refuses it. Nil when nothing is persisted.
        var undo: [ValueUndo]?

        /// The commit's events as the journal numbers them.
        func numberedEvents(firstSeq: UInt64, origin: Origin) -> [HomeEvent] {
            events.enumerated().map { index, pending in
                HomeEvent(seq: firstSeq + UInt64(index), timeMs: nowMs, origin: origin, body: pending.body)
            }
        }

        /// Forgets the value events of a commit whose values could not be saved.
        mutating func dropValueEvents() {
            events.removeAll { if case .value = $0.body { true } else { false } }
        }

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

    /// What a commit returns: the change's own result and where its events landed.
    struct Committed<Result> {
        var result: Result
        /// Why the commit's value changes were undone: the value log refused them
        /// (a full disk). Its value events were not published; the caller reports
        /// every write it applied as failed with this error.
        var saveFailure: HomeError?
        /// The sequence number the commit's first event got (if it had any).
        var firstSeq: UInt64
        /// The daemon's sequence number once the commit took effect.
        var lastSeq: UInt64
        var timeMs: Int64
    }

    /// The one way the graph changes: under the lock, `change` edits the graph and
    /// emits events; then the events are made durable, numbered, journaled and
    /// handed to the fan-out (observers and subscribers); once the lock is released,
    /// the event loops whose subscribers have something to send are woken.
    ///
    /// If `change` throws, nothing is published; for a `.layout` commit the graph
    /// is also left exactly as it was (a `.values` change must throw only before it
    /// edits anything).
    func commit<Result, Failure: Error>(
        _ kind: CommitKind, origin: Origin,
        _ change: (inout Transaction) throws(Failure) -> Result
    ) throws(Failure) -> Committed<Result> {
        let now = currentTimeMs()
        var wake = Fanout.Wake()
        let committed = try locked { state throws(Failure) -> Committed<Result> in
            var transaction: Transaction
            let firstSeq = state.journal.lastSeq + 1
            switch kind {
            case .values:
                // Moved out and back rather than copied, so that editing it in place
                // does not copy its tables.
                transaction = Transaction(
                    graph: HomeGraph(), before: nil, firstSeq: firstSeq, nowMs: now,
                    layoutVersion: state.layoutVersion, graphVersion: state.graphVersion)
                if persistence != nil { transaction.undo = [] }
                swap(&transaction.graph, &state.graph)
            case .layout:
                transaction = Transaction(
                    graph: state.graph, before: state.graph, firstSeq: firstSeq, nowMs: now,
                    layoutVersion: state.layoutVersion, graphVersion: state.graphVersion)
            }
            swap(&transaction.claims, &state.conditionalWritesInFlight)
            let result: Result
            do throws(Failure) {
                result = try change(&transaction)
            } catch {
                swap(&transaction.claims, &state.conditionalWritesInFlight)
                if kind == .values { swap(&transaction.graph, &state.graph) }
                throw error
            }
            swap(&transaction.claims, &state.conditionalWritesInFlight)
            // Values and events are durable before anyone hears of them.
            let saveFailure = makeDurable(&transaction, firstSeq: firstSeq, origin: origin)
            swap(&transaction.graph, &state.graph)
            if kind == .layout { state.layoutVersion &+= 1 }
            state.graphVersion &+= 1
            // The graph now stands after every event of this commit.
            let graphSeq = state.journal.lastSeq + UInt64(transaction.events.count)
            for (index, pending) in transaction.events.enumerated() {
                var event = HomeEvent(
                    seq: firstSeq + UInt64(index), timeMs: now, origin: origin, body: pending.body)
                state.journal.append(&event)
                state.fanout.publish(
                    event, in: state.graph, graphSeq: graphSeq, layoutVersion: state.layoutVersion,
                    mergeable: pending.mergeable, subject: pending.subject, wake: &wake)
            }
            publishedSeq.publish(state.journal.lastSeq)
            return Committed(
                result: result, saveFailure: saveFailure, firstSeq: firstSeq, lastSeq: state.journal.lastSeq,
                timeMs: now)
        }
        wake.wake()
        return committed
    }
}

func currentTimeMs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}
