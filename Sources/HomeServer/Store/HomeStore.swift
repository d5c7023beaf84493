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
/// It is three parts and the commit that joins them: `HomeState` (the graph,
/// journal, versions and claims, as a value that decides every change), the
/// `Fanout` (subscribers and observers), both under the lock, and the
/// `DurableLog` (the commit log and the stored history; nil in memory).
///
/// Every change goes through `commit`, so "apply, number, fan out" is atomic: a
/// subscriber's snapshot and its stream of changes never overlap or leave a gap.
/// Besides in-memory work, the lock covers the saves that must be ordered with the
/// changes they save, so that nothing is published before it is durable and no
/// change slips between a save and the log it empties: a commit's one append to
/// the log (a layout's folds the value log too) and a fold of the log. In-process
/// observers (the automation engine) see each event under it as well. A
/// provider's registration, the largest change, is planned on a snapshot outside
/// the lock and only installed under it. An event that several subscribers queue
/// is packed once, under the lock; every other encoding and every socket write
/// happen later on each subscriber's event loop, so a publisher never waits for a
/// subscriber.
public final class HomeStore: Sendable {
    public let journalID: String
    /// The last sequence number published, readable without the lock.
    let publishedSeq = PublishedSequence()
    let startedAtMs: Int64
    /// What commits are stamped with (the system's clock, or a test's).
    let wallClockMs: @Sendable () -> Int64
    /// Where commits are made durable before they are heard of, with the stored
    /// history; nil keeps everything in memory.
    let log: DurableLog?
    let logger: Logger

    struct State {
        /// The graph, the journal, the versions and the claims: a value with no I/O.
        var core: HomeState
        /// The open subscriptions and in-process observers, offered every event.
        var fanout = Fanout()
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
    ///   - wallClockMs: the time each commit is stamped with, in milliseconds since
    ///     the epoch: the system's, or a test's (`FileAutomationClock`).
    package init(
        graph: HomeGraph, journalCapacity: Int = 100_000, journalByteCapacity: Int = 32 * 1024 * 1024,
        persistence: (any HomePersistence)?, history: StoredHistory? = nil,
        logger: Logger = Logger(label: "homed"), wallClockMs: @escaping @Sendable () -> Int64 = currentTimeMs
    ) {
        // Events are stored with the values of their commit, in one call to the commit
        // log: a history is kept only where values are.
        precondition(history == nil || persistence != nil, "a stored history needs the persistence that logs commits")
        let log = persistence.map { DurableLog(persistence: $0, history: history, logger: logger) }
        let start = log?.journalStart ?? (id: Journal.makeID(), lastSeq: 0)
        let journal = Journal(
            id: start.id, capacity: journalCapacity, byteCapacity: journalByteCapacity, lastStoredSeq: start.lastSeq)
        self.journalID = journal.id
        self.log = log
        self.logger = logger
        self.wallClockMs = wallClockMs
        self.startedAtMs = wallClockMs()
        self.state = Locked(State(core: HomeState(graph: graph, journal: journal)))
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
        locked { ($0.core.graph, $0.core.journal.lastSeq) }
    }

    public var lastSeq: UInt64 { locked { $0.core.journal.lastSeq } }

    public var subscriptionCount: Int { locked { $0.fanout.subscriptionCount } }

    public var statistics: (homes: Int, accessories: Int, characteristics: Int) {
        locked { ($0.core.graph.homes.count, $0.core.graph.accessories.count, $0.core.graph.characteristics.count) }
    }

    // MARK: The commit primitive

    /// What a commit returns: the change's own result and where its events landed.
    struct Committed {
        var result: ChangeResult
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

    /// The one way the state changes: under the lock, the state decides and
    /// installs the change (`HomeState.commit`, no I/O); the commit is made
    /// durable, or taken back if it cannot be; its events are numbered, journaled
    /// and handed to the fan-out (observers and subscribers); once the lock is
    /// released, the event loops whose subscribers have something to send are woken.
    ///
    /// - Throws: the change's refusal, or a layout's save failure; either way the
    ///   state is as it was and nothing was published.
    func commit(_ change: StoreChange, origin: Origin) throws(HomeError) -> Committed {
        let now = wallClockMs()
        var wake = Fanout.Wake()
        let committed = try locked { state throws(HomeError) -> Committed in
            var commit = try state.core.commit(change, nowMs: now, origin: origin, keepingUndo: log != nil)
            // Values and events are durable before anyone hears of them.
            let saveFailure = try log?.makeDurable(&commit, in: &state.core) ?? nil
            let graphSeq = state.core.journal.lastSeq + UInt64(commit.events.count)
            for index in commit.events.indices {
                var event = commit.event(at: index)
                state.core.journal.append(&event)
                let pending = commit.events[index]
                state.fanout.publish(
                    event, in: state.core.graph, graphSeq: graphSeq, layoutVersion: state.core.layoutVersion,
                    mergeable: pending.mergeable, subject: pending.subject, wake: &wake)
            }
            publishedSeq.publish(state.core.journal.lastSeq)
            return Committed(
                result: commit.result, saveFailure: saveFailure, firstSeq: commit.firstSeq,
                lastSeq: state.core.journal.lastSeq, timeMs: now)
        }
        wake.wake()
        return committed
    }

    /// `commit`, for a change the state never refuses (a batch's errors are its
    /// writes' results; a report's, its values').
    func commitAlways(_ change: StoreChange, origin: Origin) -> Committed {
        do throws(HomeError) {
            return try commit(change, origin: origin)
        } catch {
            preconditionFailure("a \(change.kind) change that cannot be refused was: \(error.message)")
        }
    }
}

func currentTimeMs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}
