internal import HomeModel
internal import HomeWire
internal import NIOCore

/// Where reads and writes of values go: a characteristic of a provider's accessory
/// is written through the provider (acknowledged once it confirms) and read fresh
/// from it on request; one of an in-process accessory (the simulator's) in the
/// daemon alone. Calls, scenes and triggers all write through here.
///
/// It never blocks: every request to a provider is a future with a deadline.
public struct ValueRouter: Sendable {
    let store: HomeStore
    let providers: ProviderHub
    /// The server's event loops: where work nobody's connection asked for (a
    /// triggered scene, a trigger's end) waits for its providers.
    let eventLoops: any EventLoopGroup

    /// Reads from the cache; `fresh` asks the providers of providers' characteristics
    /// (their answers become the cache's values, published as their changes).
    func read(
        _ characteristicIDs: [ObjectID], fresh: Bool, timeoutMs: UInt32?, on eventLoop: any EventLoop,
        connectionID: UInt64 = 0
    ) -> EventLoopFuture<ReadOutcome> {
        let cached = store.read(characteristicIDs)
        guard fresh else { return eventLoop.makeSucceededFuture(cached) }
        // The readable ones (those the cache could read) of providers' accessories.
        let graph = store.snapshot().graph
        var byProvider: [String: [ObjectID]] = [:]
        for read in cached.reads where read.error == nil {
            if let provider = remoteProvider(of: read.characteristicID, in: graph) {
                byProvider[provider, default: []].append(read.characteristicID)
            }
        }
        guard !byProvider.isEmpty else { return eventLoop.makeSucceededFuture(cached) }
        let store = self.store
        let asked = byProvider.sorted { $0.key < $1.key }
        let answers = asked.map { provider, ids in
            providers.send(
                .read(characteristicIDs: ids), to: provider, timeoutMs: timeoutMs, on: eventLoop, from: connectionID)
        }
        return EventLoopFuture.whenAllComplete(answers, on: eventLoop).map { results in
            var fresh: [ObjectID: CharacteristicRead] = [:]
            for ((provider, ids), result) in zip(asked, results) {
                let answered = Self.reads(for: ids, provider: provider, result: result)
                let values = answered.compactMap { read in
                    read.error == nil
                        ? read.value.map { CharacteristicWrite(characteristicID: read.characteristicID, value: $0) }
                        : nil
                }
                // A fresh value is also the cache's new value, published as the provider's.
                let applied = store.report(
                    values, reachability: [], provider: provider,
                    origin: Origin(kind: .provider, connectionID: 0, name: provider))
                let refused = Dictionary(applied.rejected.map { ($0.characteristicID, $0.error) }) { first, _ in first }
                for var read in answered {
                    if let error = refused[read.characteristicID] ?? nil {
                        read.value = nil
                        read.error = error
                    }
                    fresh[read.characteristicID] = read
                }
            }
            let now = store.read(characteristicIDs)
            let reads = now.reads.map { cachedRead -> CharacteristicRead in
                guard let read = fresh[cachedRead.characteristicID] else { return cachedRead }
                // The fresh value is now the cache's, stored in its format's kind: that is the answer.
                return read.error == nil ? cachedRead : read
            }
            return ReadOutcome(reads: reads, seq: now.seq)
        }
    }

    /// One read result per id from a provider's answer (or its failure).
    private static func reads(for ids: [ObjectID], provider: String, result: Result<CommandAnswer, any Error>)
        -> [CharacteristicRead]
    {
        switch result {
        case .failure(let error):
            let error = error as? HomeError ?? HomeError(.internal, "asking provider \"\(provider)\" failed")
            return ids.map { CharacteristicRead(characteristicID: $0, value: nil, lastUpdatedMs: 0, error: error) }
        case .success(let answer):
            let byID = Dictionary(answer.reads.map { ($0.characteristicID, $0) }) { first, _ in first }
            return ids.map { id in
                if let error = answer.error {
                    return CharacteristicRead(characteristicID: id, value: nil, lastUpdatedMs: 0, error: error)
                }
                guard var read = byID[id] else {
                    return CharacteristicRead(
                        characteristicID: id, value: nil, lastUpdatedMs: 0,
                        error: HomeError(.internal, "provider \"\(provider)\" answered without characteristic \(id)"))
                }
                if read.error == nil && read.value == nil {
                    read.error = HomeError(
                        .internal, "provider \"\(provider)\" answered characteristic \(id) with no value")
                }
                return read
            }
        }
    }

    /// Plans writes from one snapshot (`WritePlan`), then carries the plan out: the
    /// daemon's own characteristics (and those a provider declared optimistic) are
    /// applied at once in one commit; every provider is sent its part, and what it
    /// confirms is committed as it answers. An atomic batch must target one provider.
    func write(
        _ writes: [CharacteristicWrite], atomic: Bool = false, validateOnly: Bool = false, origin: Origin,
        timeoutMs: UInt32?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<WriteOutcome> {
        // The daemon's own characteristics alone (most writes of most homes): no
        // plan to carry out, one commit.
        if let outcome = store.writeIfDaemonOwned(
            writes, atomic: atomic, validateOnly: validateOnly, origin: origin,
            isRemote: { remoteProvider(of: $0) != nil })
        {
            return eventLoop.makeSucceededFuture(outcome)
        }
        let plan: WritePlan
        do throws(HomeError) {
            plan = try self.plan(writes, atomic: atomic, validateOnly: validateOnly)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return carryOut(plan, writes: writes, origin: origin, timeoutMs: timeoutMs, on: eventLoop)
    }

    /// Plans writes from a snapshot that ends with this call: a copy of the graph
    /// still alive when the plan is committed would make the commit copy the
    /// graph's tables.
    private func plan(_ writes: [CharacteristicWrite], atomic: Bool, validateOnly: Bool) throws(HomeError)
        -> WritePlan
    {
        let (graph, layoutVersion) = store.planningSnapshot()
        return try WritePlan(
            writes, atomic: atomic, validateOnly: validateOnly, in: graph, layoutVersion: layoutVersion,
            provider: remoteProvider(of:), optimistic: providers.optimistic, journalID: store.journalID)
    }

    /// Applies a plan's local part, sends each provider its part, and commits each
    /// confirmation when it comes.
    private func carryOut(
        _ plan: WritePlan, writes: [CharacteristicWrite], origin: Origin, timeoutMs: UInt32?,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<WriteOutcome> {
        let store = self.store
        // Conditional writes to providers are checked again under the lock and
        // claimed before anything is sent; the claims end once the batch is done.
        var plan = plan
        let conditional = plan.conditionalProviderItems
        let refused = store.claimConditions(conditional)
        let claimed = conditional.filter { refused[$0.position] == nil }.map(\.characteristicID)
        plan.refuse(refused, writes: writes)
        let outcome = carryOutClaimed(plan, writes: writes, origin: origin, timeoutMs: timeoutMs, on: eventLoop)
        guard !claimed.isEmpty else { return outcome }
        outcome.whenComplete { _ in store.releaseConditions(claimed) }
        return outcome
    }

    /// `carryOut` once the conditional writes to providers are claimed.
    private func carryOutClaimed(
        _ plan: WritePlan, writes: [CharacteristicWrite], origin: Origin, timeoutMs: UInt32?,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<WriteOutcome> {
        let store = self.store
        let local = store.commit(
            plan.local, plannedAt: plan.layoutVersion, atomic: plan.atomic, checkingConditions: true, origin: origin)
        guard !plan.providers.isEmpty else {
            return eventLoop.makeSucceededFuture(
                WriteOutcome(
                    results: plan.results(applying: local.results, writes: writes),
                    seq: plan.local.isEmpty ? store.lastSeq : local.seq))
        }
        let confirmations = plan.providers.map {
            part -> EventLoopFuture<(results: [(position: Int, result: WriteResult)], seq: UInt64)> in
            // The provider gets each value as the daemon stores it (normalized to the format).
            let values = part.items.map {
                CharacteristicWrite(characteristicID: $0.characteristicID, value: $0.checked.value)
            }
            let answer = providers.send(
                .write(values, atomic: plan.atomic), to: part.providerID, timeoutMs: timeoutMs, on: eventLoop,
                from: origin.connectionID)
            // Every item of this part optimistic: applied above, and the provider is told;
            // its answer is not waited for (the write is acknowledged at once).
            guard !part.confirmed.isEmpty else {
                return eventLoop.makeSucceededFuture((results: [], seq: 0))
            }
            // One promise, completed where the answer lands (this loop), whatever it says.
            let confirmation = eventLoop.makePromise(
                of: (results: [(position: Int, result: WriteResult)], seq: UInt64).self)
            answer.whenComplete { answer in
                let verdicts = WritePlan.verdicts(for: part, answer: answer, atomic: plan.atomic)
                let confirmed = part.confirmed.filter { verdicts[$0.characteristicID] == .some(nil) }
                var outcome = store.commit(
                    confirmed, plannedAt: plan.layoutVersion, atomic: plan.atomic, origin: origin)
                for item in part.confirmed {
                    if case .some(.some(let error)) = verdicts[item.characteristicID] {
                        outcome.results.append(
                            (item.position, WriteResult(characteristicID: item.characteristicID, error: error)))
                    }
                }
                confirmation.succeed(outcome)
            }
            return confirmation.futureResult
        }
        let localSeq = plan.local.isEmpty ? 0 : local.seq
        // Most writes go to one provider: no gathering then.
        let outcomes =
            confirmations.count == 1
            ? confirmations[0].map { [$0] } : EventLoopFuture.whenAllSucceed(confirmations, on: eventLoop)
        return outcomes.map { outcomes in
            // Each write has one result: applied here (the daemon's own, optimistic ones) or confirmed.
            var applied = local.results
            var seq = localSeq
            for outcome in outcomes {
                applied += outcome.results
                seq = max(seq, outcome.seq)
            }
            return WriteOutcome(
                results: plan.results(applying: applied, writes: writes), seq: seq == 0 ? store.lastSeq : seq)
        }
    }

    /// The provider that serves an accessory, when it is not served in-process.
    private func remoteProvider(of accessory: Accessory) -> String? {
        providers.inProcessProviders.contains(accessory.provider) ? nil : accessory.provider
    }

    /// The provider that serves a characteristic, when it is not served in-process.
    private func remoteProvider(of characteristicID: ObjectID, in graph: HomeGraph) -> String? {
        guard let characteristic = graph.characteristics[characteristicID],
            let accessory = graph.accessories[characteristic.accessoryID]
        else { return nil }
        return remoteProvider(of: accessory)
    }

    /// Runs a scene: its actions are written as one non-atomic batch (through the
    /// providers of their characteristics), then the action-set-executed event is
    /// published after the value events they caused.
    func executeActionSet(_ actionSetID: ObjectID, origin: Origin, timeoutMs: UInt32?, on eventLoop: any EventLoop)
        -> EventLoopFuture<WriteOutcome>
    {
        let writes: [CharacteristicWrite]
        let plan: WritePlan?
        do throws(HomeError) {
            (writes, plan) = try sceneWrites(actionSetID)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        guard let plan else {
            // All in the daemon: one commit, as a scene has always been.
            do throws(HomeError) {
                return eventLoop.makeSucceededFuture(try store.executeActionSet(actionSetID, origin: origin))
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
        }
        let store = self.store
        return carryOut(plan, writes: writes, origin: origin, timeoutMs: timeoutMs, on: eventLoop).map { outcome in
            let seq = store.recordActionSetExecuted(actionSetID, origin: origin)
            return WriteOutcome(results: outcome.results, seq: seq)
        }
    }

    /// A scene's actions as writes, planned from the snapshot they were read from;
    /// no plan when none of them goes through a provider.
    ///
    /// - Throws: NOT_FOUND when there is no such action set.
    private func sceneWrites(_ actionSetID: ObjectID) throws(HomeError) -> ([CharacteristicWrite], WritePlan?) {
        let (graph, layoutVersion) = store.planningSnapshot()
        guard let actionSet = graph.actionSets[actionSetID] else {
            throw HomeError(.notFound, "no action set with id \(actionSetID)")
        }
        guard actionSet.actions.contains(where: { remoteProvider(of: $0.characteristicID, in: graph) != nil }) else {
            return ([], nil)
        }
        let writes = actionSet.actions.map(\.write)
        // Not atomic: a scene's failed action is reported and the others still run.
        let plan = try WritePlan(
            writes, atomic: false, validateOnly: false, in: graph, layoutVersion: layoutVersion,
            provider: remoteProvider(of:), optimistic: providers.optimistic, journalID: store.journalID)
        return (writes, plan)
    }
}
