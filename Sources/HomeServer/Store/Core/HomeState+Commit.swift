internal import HomeModel

/// What `HomeState.commit` decided and installed, for the store to make durable
/// (or take back with `HomeState.undoValues`/`undoLayout`) and then publish: the
/// events to number and journal, the value log's row, the layout before and
/// after, the result.
struct StateCommit {
    let kind: CommitKind
    let origin: Origin
    /// The number the first event gets once journaled.
    let firstSeq: UInt64
    /// The commit's time: its events' time, and the time of the values it stores.
    let nowMs: Int64
    /// Its events, in order, numbered from `firstSeq`.
    fileprivate(set) var events: [Transaction.PendingEvent]
    /// For a `.values` commit of a state kept durable, each stored value's
    /// previous state (what `undoValues` puts back); nil otherwise.
    let undo: [Transaction.ValueUndo]?
    /// For a `.layout` commit, the graph before it (what storage holds); the graph
    /// after it is the state's.
    let layoutBefore: HomeGraph?
    /// False when nothing changed (a registration's stale plan).
    let installed: Bool
    var result: ChangeResult
    fileprivate let claimsBefore: Set<ObjectID>
    fileprivate let versionsBefore: (layout: UInt64, graph: UInt64)

    /// Event `index` as the journal numbers it.
    func event(at index: Int) -> HomeEvent {
        HomeEvent(seq: firstSeq + UInt64(index), timeMs: nowMs, origin: origin, body: events[index].body)
    }

    /// Every event as the journal numbers it.
    var numberedEvents: [HomeEvent] { events.indices.map(event(at:)) }

    /// The value log's row: each characteristic the commit stored once, with its
    /// final value in `graph` (the state's, once installed).
    func valueRow(in graph: HomeGraph) -> [SavedValue] {
        guard let undo, !undo.isEmpty else { return [] }
        var seen = Set<HomeGraph.CharacteristicIndex>()
        var row: [SavedValue] = []
        row.reserveCapacity(undo.count)
        for entry in undo where undo.count == 1 || seen.insert(entry.index).inserted {
            row.append(
                SavedValue(
                    characteristicID: entry.characteristicID, value: graph.characteristics.values[entry.index].value))
        }
        return row
    }

    /// The characteristics a layout commit set values of (a renamed accessory's
    /// Name): saved with the layout.
    var layoutValueIDs: [ObjectID] {
        events.compactMap { if case .value(let change) = $0.body { change.characteristicID } else { nil } }
    }
}

extension HomeState {
    /// Decides a change and installs it: validated and applied to the graph, its
    /// claims taken or released, its events listed to be numbered from the
    /// journal's next number. Nothing is journaled: the store makes the commit
    /// durable first (or takes it back with `undoValues`/`undoLayout`), then
    /// journals and publishes its events (`StateCommit.event(at:)`).
    ///
    /// - Parameter keepingUndo: note each stored value's previous state, so that
    ///   the values can be taken back if the value log refuses them.
    /// - Throws: the change's refusal (an unknown id, an atomic batch across
    ///   providers, a layout the model refuses); the state is then as it was.
    mutating func commit(_ change: StoreChange, nowMs: Int64, origin: Origin, keepingUndo: Bool)
        throws(HomeError) -> StateCommit
    {
        var transaction = begin(change.kind, nowMs: nowMs, keepingUndo: keepingUndo)
        let versions = (layoutVersion, graphVersion)
        var result: ChangeResult
        do throws(HomeError) {
            result = try Self.decide(change, journalID: journal.id, in: &transaction)
        } catch {
            abandon(&transaction)
            throw error
        }
        if case .reports(let refused, var adjusted, let readBack) = result, !adjusted.isEmpty {
            adjusted.removeAll { !adjustedValueIDs.insert($0.characteristicID).inserted }
            result = .reports(refused, adjusted: adjusted, readBack: readBack)
        }
        var installed = true
        if case .registered(nil) = result {
            abandon(&transaction)
            installed = false
        } else {
            install(&transaction)
        }
        return StateCommit(
            kind: transaction.kind, origin: origin, firstSeq: transaction.firstSeq, nowMs: nowMs,
            events: installed ? transaction.events : [], undo: transaction.undo, layoutBefore: transaction.before,
            installed: installed, result: result, claimsBefore: transaction.claimsBefore, versionsBefore: versions)
    }

    /// Takes back a commit's values that could not be made durable: each value as
    /// it was, and its value events dropped (its other events, reachability and
    /// notes, still stand). Its claims stay as it left them.
    mutating func undoValues(_ commit: inout StateCommit) {
        guard let undo = commit.undo else { return }
        for entry in undo.reversed() {
            graph.restoreValue(
                entry.value, lastUpdatedMs: entry.lastUpdatedMs, changeSeq: entry.changeSeq, at: entry.index)
        }
        commit.events.removeAll { if case .value = $0.body { true } else { false } }
    }

    /// Takes back a layout commit that could not be saved: the graph, the claims
    /// and the versions as they were.
    mutating func undoLayout(_ commit: StateCommit) {
        guard let before = commit.layoutBefore else { return }
        graph = before
        conditionalWritesInFlight = commit.claimsBefore
        (layoutVersion, graphVersion) = commit.versionsBefore
    }

    /// What a change does to the transaction, and its result.
    private static func decide(_ change: StoreChange, journalID: String, in transaction: inout Transaction)
        throws(HomeError) -> ChangeResult
    {
        switch change {
        case .write(let batch, let enforceWritable):
            return .writes(apply(batch, enforceWritable: enforceWritable, journalID: journalID, in: &transaction))
        case .planWrites(let batch, let owners):
            return .planning(try plan(batch, owners: owners, journalID: journalID, in: &transaction))
        case .ownWrites(let batches, let owners):
            var applied: [[WriteResult]] = []
            for batch in batches {
                if anyRemote(batch.writes, in: transaction.graph, owners: owners) { break }
                applied.append(apply(batch, enforceWritable: true, journalID: journalID, in: &transaction))
            }
            return .batches(applied)
        case .planScene(let actionSetID, let owners):
            return try planScene(actionSetID, owners: owners, journalID: journalID, in: &transaction)
        case .runScene(let actionSetID):
            let writes = try sceneWrites(actionSetID, in: transaction.graph)
            return .writes(runScene(actionSetID, writes: writes, journalID: journalID, in: &transaction))
        case .confirm(let confirmation):
            transaction.claims.subtract(confirmation.releasing)
            return .writes(
                apply(
                    confirmation.items, sameLayout: transaction.layoutVersion == confirmation.plannedAt,
                    atomic: confirmation.atomic, checkingConditions: false, journalID: journalID, in: &transaction))
        case .report(let reports, let owner, let readingBack):
            var adjusted: [AdjustedValue] = []
            let refused = reports.map { report in
                applyReport(report, owner: owner, adjusted: &adjusted, in: &transaction)
            }
            return .reports(refused, adjusted: adjusted, readBack: readingBack.map { reads($0, in: transaction.graph) })
        case .reachability(let reachable, let accessoryID):
            guard try transaction.graph.setReachable(reachable, accessoryID: accessoryID) else {
                return .changed(false)
            }
            transaction.emit(.reachability(accessoryID: accessoryID, reachable: reachable))
            return .changed(true)
        case .markUnreachable(let accessoryIDs):
            for id in accessoryIDs.sorted() {
                guard (try? transaction.graph.setReachable(false, accessoryID: id)) != nil else { continue }
                transaction.emit(.reachability(accessoryID: id, reachable: false))
            }
            return .none
        case .note(let body):
            transaction.emit(body)
            return .none
        case .layout(let operation):
            let applied = try transaction.graph.apply(operation, nowMs: transaction.nowMs)
            for event in applied.events { transaction.emit(event) }
            return .layout(events: applied.events, createdID: applied.createdID)
        case .replaceLayout(let plan):
            let planned = try plan(transaction.graph, transaction.nowMs)
            transaction.graph = planned.graph
            for event in planned.events { transaction.emit(event) }
            return .replaced(planned)
        case .register(let request):
            let registration = try transaction.graph.register(
                request.accessories, removing: request.removing, provider: request.provider,
                homeID: request.homeID, nowMs: transaction.nowMs)
            for change in registration.changes { transaction.emit(.layout(change)) }
            return .registered(registration)
        case .installRegistration(let planned, let registration, let version):
            guard transaction.graphVersion == version else { return .registered(nil) }
            transaction.graph = planned
            for change in registration.changes { transaction.emit(.layout(change)) }
            return .registered(registration)
        }
    }
}
