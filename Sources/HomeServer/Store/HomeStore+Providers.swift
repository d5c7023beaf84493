public import HomeModel
internal import Logging

extension HomeStore {
    /// What a registration did, once durable and published.
    public struct RegistrationOutcome: Sendable {
        package var registration: ProviderRegistration
        /// The graph right after it (for the response's accessories).
        public var graph: HomeGraph
        public var seq: UInt64
    }

    /// Registers a provider's accessories (see `HomeGraph.register`): the layout
    /// change is made durable and published first; then, as the provider's own
    /// report, the values it gave for characteristics that existed already, and
    /// the registered accessories' reachability.
    ///
    /// - Throws: the model's error naming the item at fault, or persistence's;
    ///   either way nothing changed.
    public func register(
        _ accessories: [ProvidedAccessory], removing removeKeys: [String], provider: String,
        homeID: ObjectID?, origin: Origin
    ) throws(HomeError) -> RegistrationOutcome {
        try register(accessories, removing: removeKeys, provider: provider, homeID: homeID, origin: origin) {}
    }

    /// How many times a registration is planned on a snapshot before it is made
    /// under the lock instead: a graph that changes faster than a plan is made
    /// must not keep a provider waiting for ever.
    static let registrationPlans = 3

    /// `register`, with `willCommit` run between planning and installing each plan
    /// (tests change the graph there to make a plan stale).
    ///
    /// Registering a thousand accessories takes tens of milliseconds: made under
    /// the lock, it stalled every reader and writer that long. So it is planned on
    /// a snapshot (the graph is a value), and installed in one short step only if
    /// no commit came in between; otherwise it is planned again on a new snapshot.
    /// A model error found on a snapshot is the answer: the call failed as of a
    /// state the graph was in during the call, and nothing changed.
    func register(
        _ accessories: [ProvidedAccessory], removing removeKeys: [String], provider: String,
        homeID: ObjectID?, origin: Origin, willCommit: () -> Void
    ) throws(HomeError) -> RegistrationOutcome {
        let (committed, registration) = try installRegistration(
            accessories, removing: removeKeys, provider: provider, homeID: homeID, origin: origin,
            willCommit: willCommit)
        var reachability: [(ObjectID, Bool)] = []
        for (accessory, id) in zip(accessories, registration.accessoryIDs) {
            reachability.append((id, !accessory.isUnreachable))
        }
        let applied = apply(registration.reportedValues, reachability: reachability, origin: origin)
        return RegistrationOutcome(
            registration: registration, graph: snapshot().graph, seq: max(committed.lastSeq, applied.seq))
    }

    /// A registration installed: planned on a snapshot and installed if no commit
    /// came in between, up to `registrationPlans` times; then made under the lock.
    private func installRegistration(
        _ accessories: [ProvidedAccessory], removing removeKeys: [String], provider: String,
        homeID: ObjectID?, origin: Origin, willCommit: () -> Void
    ) throws(HomeError) -> (Committed, ProviderRegistration) {
        for _ in 0..<Self.registrationPlans {
            let (snapshot, version) = withState { ($0.core.graph, $0.core.graphVersion) }
            var planned = snapshot
            let registration = try planned.register(
                accessories, removing: removeKeys, provider: provider, homeID: homeID, nowMs: wallClockMs())
            willCommit()
            let committed = try commit(
                .installRegistration(planned: planned, registration, plannedAtVersion: version), origin: origin)
            if case .registered(let installed?) = committed.result { return (committed, installed) }
        }
        let request = RegistrationRequest(
            accessories: accessories, removing: removeKeys, provider: provider, homeID: homeID)
        let committed = try commit(.register(request), origin: origin)
        guard case .registered(let made?) = committed.result else {
            preconditionFailure("a registration made under the lock is never stale")
        }
        return (committed, made)
    }

    /// A provider's own report: values its devices hold and its accessories'
    /// reachability. A value for a characteristic that is not the provider's is
    /// refused (PERMISSION_DENIED), an invalid one too (INVALID_ARGUMENT); the
    /// others are applied, read-only characteristics included.
    public func report(
        _ values: [CharacteristicWrite], reachability: [(accessoryID: ObjectID, reachable: Bool)],
        provider: String, origin: Origin
    ) -> (seq: UInt64, rejected: [WriteResult]) {
        let applied = apply(
            values, reachability: reachability.map { ($0.accessoryID, $0.reachable) }, origin: origin, owner: provider)
        return (applied.seq, applied.rejected)
    }

    /// Reports one provider sent together (pipelined `ReportValues` calls), in one
    /// commit and one transaction, in order: each one's outcome is what `report`
    /// would give it alone, but if the commit cannot be saved, every value of
    /// every report is refused with the save's error.
    func report(
        together reports: [(values: [CharacteristicWrite], reachability: [(accessoryID: ObjectID, reachable: Bool)])],
        provider: String, origin: Origin
    ) -> [(seq: UInt64, rejected: [WriteResult])] {
        let committed = commitAlways(
            .report(
                reports.map { ProviderReport(values: $0.values, reachability: $0.reachability) }, owner: provider,
                readingBack: nil),
            origin: origin)
        guard case .reports(let refused, let adjusted, _) = committed.result else { preconditionFailure("reports") }
        noteAdjusted(adjusted, provider: provider)
        return zip(reports, refused).map { report, rejected in
            guard let saveFailure = committed.saveFailure else { return (committed.lastSeq, rejected) }
            return (committed.lastSeq, Self.refusedAll(report.values, rejected: rejected, saveFailure))
        }
    }

    /// A provider's answer to a fresh read, applied as its report, and the ids read
    /// back from the cache in the same lock (its values stored in their format's kind).
    func reportFresh(_ values: [CharacteristicWrite], provider: String, readingBack ids: [ObjectID]?)
        -> (rejected: [WriteResult], readBack: ReadOutcome?)
    {
        let applied = apply(
            values, reachability: [], origin: Origin(kind: .provider, connectionID: 0, name: provider), owner: provider,
            readingBack: ids)
        return (applied.rejected, applied.readBack ?? ids.map { read($0) })
    }

    /// Applies values (read-only ones included) and reachability in one commit;
    /// with an `owner`, only what belongs to that provider's accessories (checked in
    /// the commit, on the lookup the write makes anyway).
    ///
    /// - Parameter readingBack: ids to read once the commit applied, in its lock;
    ///   not read (nil) when the commit's values could not be saved.
    private func apply(
        _ values: [CharacteristicWrite], reachability: [(ObjectID, Bool)], origin: Origin, owner: String? = nil,
        readingBack: [ObjectID]? = nil
    ) -> (seq: UInt64, rejected: [WriteResult], readBack: ReadOutcome?) {
        if values.isEmpty && reachability.isEmpty {
            return (publishedSeq.value, [], readingBack.map { read($0) })
        }
        let committed = commitAlways(
            .report(
                [ProviderReport(values: values, reachability: reachability.map { ($0.0, $0.1) })], owner: owner,
                readingBack: readingBack),
            origin: origin)
        guard case .reports(let refused, let adjusted, let readBack) = committed.result else {
            preconditionFailure("a report's result")
        }
        noteAdjusted(adjusted, provider: owner)
        if let saveFailure = committed.saveFailure {
            // Nothing of it was applied but reachability: every value is refused.
            return (committed.lastSeq, Self.refusedAll(values, rejected: refused[0], saveFailure), nil)
        }
        return (committed.lastSeq, refused[0], readBack.map { ReadOutcome(reads: $0, seq: committed.lastSeq) })
    }

    /// Says in the log which device values were kept in another form than
    /// reported (rounded to the characteristic's step, or clamped to what its
    /// format holds): once per characteristic for the daemon's lifetime (the state
    /// names each once), so that a sensor that always reports 51.92 % against a
    /// step of 1 says so once, not at every reading.
    private func noteAdjusted(_ adjustments: [AdjustedValue], provider: String?) {
        for adjustment in adjustments {
            logger.notice(
                "characteristic \(adjustment.characteristicID): the device reported \(adjustment.reported.shortDescription); kept \(adjustment.kept.shortDescription) (on the characteristic's step, within what its format holds); said once per characteristic",
                metadata: provider.map { ["provider": "\($0)"] } ?? [:])
        }
    }

    /// The results of a report whose values could not be saved: each value not
    /// refused already is refused with the save's error.
    private static func refusedAll(
        _ values: [CharacteristicWrite], rejected: [WriteResult], _ saveFailure: HomeError
    ) -> [WriteResult] {
        let refused = HomeError(saveFailure.code, "not applied: the value could not be saved: \(saveFailure.message)")
        let rejectedIDs = Set(rejected.map(\.characteristicID))
        return rejected
            + values.filter { !rejectedIDs.contains($0.characteristicID) }.map {
                WriteResult(characteristicID: $0.characteristicID, error: refused)
            }
    }

    /// Sets the reachability of every accessory of a provider (it connected, or
    /// went away), publishing an event for each that changed.
    public func setProviderReachable(_ reachable: Bool, provider: String, origin: Origin) {
        let ids = snapshot().graph.accessories.values.filter { $0.provider == provider }.map(\.id)
        _ = apply([], reachability: ids.sorted().map { ($0, reachable) }, origin: origin)
    }

    /// Every accessory of a provider other than `inProcess` ones, by provider.
    public func providerAccessories(excluding inProcess: Set<String>) -> [String: [ObjectID]] {
        var byProvider: [String: [ObjectID]] = [:]
        for accessory in snapshot().graph.accessories.values where !inProcess.contains(accessory.provider) {
            byProvider[accessory.provider, default: []].append(accessory.id)
        }
        return byProvider.mapValues { $0.sorted() }
    }
}
