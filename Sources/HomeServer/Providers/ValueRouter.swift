internal import HomeModel
internal import HomeWire
internal import NIOCore
internal import Synchronization

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
        guard fresh else { return eventLoop.makeSucceededFuture(store.read(characteristicIDs)) }
        // The readable ones (those the cache could read) of providers' accessories.
        let (cached, byProvider) = store.read(characteristicIDs, groupedBy: providers.remoteProvider(of:))
        guard !byProvider.isEmpty else { return eventLoop.makeSucceededFuture(cached) }
        let store = self.store
        let asked = byProvider.sorted { $0.key < $1.key }
        let committed = FreshAnswers()
        // With one provider (the usual case) its commit reads every id back in its
        // lock; with several, they are read once all have answered.
        let readingBack = asked.count == 1 ? characteristicIDs : nil
        let answers = asked.map { provider, ids in
            // Committed where the answer lands, before the provider's AnswerCommand
            // is acknowledged: a report it sends after that lands after it.
            providers.send(
                .read(characteristicIDs: ids), to: provider, timeoutMs: timeoutMs, on: eventLoop, from: connectionID
            ) { result in
                let answered = Self.reads(for: ids, provider: provider, result: result)
                let values = answered.compactMap { read in
                    read.error == nil
                        ? read.value.map { CharacteristicWrite(characteristicID: read.characteristicID, value: $0) }
                        : nil
                }
                // A fresh value is also the cache's new value, published as the provider's.
                let applied = store.reportFresh(values, provider: provider, readingBack: readingBack)
                let refused = Dictionary(applied.rejected.map { ($0.characteristicID, $0.error) }) { first, _ in first }
                committed.note(
                    answered.map { read in
                        guard let error = refused[read.characteristicID] ?? nil else { return read }
                        var refusedRead = read
                        refusedRead.value = nil
                        refusedRead.error = error
                        return refusedRead
                    }, readBack: applied.readBack)
            }
        }
        return EventLoopFuture.whenAllComplete(answers, on: eventLoop).map { _ in
            let (fresh, readBack) = committed.taken
            let now = readBack ?? store.read(characteristicIDs)
            let reads = now.reads.map { cachedRead -> CharacteristicRead in
                guard let read = fresh[cachedRead.characteristicID] else { return cachedRead }
                // The fresh value is now the cache's, stored in its format's kind: that is the answer.
                return read.error == nil ? cachedRead : read
            }
            return ReadOutcome(reads: reads, seq: now.seq)
        }
    }

    /// One read result per id from a provider's answer (or its failure).
    private static func reads(for ids: [ObjectID], provider: String, result: Result<CommandAnswer, HomeError>)
        -> [CharacteristicRead]
    {
        switch result {
        case .failure(let error):
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

    /// Decides the batch in one commit (`HomeStore.planWrites`): the daemon's own
    /// characteristics (and those a provider declared optimistic) are applied
    /// there; every provider is then sent its part, and what it confirms is
    /// committed as it answers. An atomic batch must target one provider.
    func write(
        _ writes: [CharacteristicWrite], atomic: Bool = false, validateOnly: Bool = false, origin: Origin,
        timeoutMs: UInt32?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<WriteOutcome> {
        let planned: HomeStore.PlannedWrites
        do throws(HomeError) {
            planned = try store.planWrites(
                WriteBatch(writes: writes, atomic: atomic, validateOnly: validateOnly), origin: origin,
                owners: providers)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        switch planned {
        case .done(let outcome):
            return eventLoop.makeSucceededFuture(outcome)
        case .sending(let sent):
            return send(sent, writes: writes, origin: origin, timeoutMs: timeoutMs, on: eventLoop)
        }
    }

    /// One call's batch of writes, for `write(together:)`: the writes, who sent
    /// them, and what is left of the call's deadline.
    struct Batch {
        var writes: WriteBatch
        var origin: Origin
        var timeoutMs: UInt32?
    }

    /// Batches that came together, in order: those of the daemon's own
    /// characteristics (up to the first with a provider's) in one commit, the
    /// rest one by one as `write` does, so that each characteristic's writes still
    /// land in the order they came.
    func write(together batches: [Batch], on eventLoop: any EventLoop) -> [EventLoopFuture<WriteOutcome>] {
        let own = store.applyOwnWrites(batches.map(\.writes), origin: batches.first?.origin, owners: providers)
        return own.map { eventLoop.makeSucceededFuture($0) }
            + batches[own.count...].map {
                write(
                    $0.writes.writes, atomic: $0.writes.atomic, validateOnly: $0.writes.validateOnly,
                    origin: $0.origin, timeoutMs: $0.timeoutMs, on: eventLoop)
            }
    }

    /// Sends each provider its part of a decided batch and commits each
    /// confirmation (with the end of its claims) when it comes.
    private func send(
        _ sent: HomeStore.SentWrites, writes: [CharacteristicWrite], origin: Origin, timeoutMs: UInt32?,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<WriteOutcome> {
        let store = self.store
        let plan = sent.plan
        guard !plan.providers.isEmpty else {
            return eventLoop.makeSucceededFuture(
                WriteOutcome(
                    results: plan.results(applying: sent.applied, writes: writes),
                    seq: sent.appliedSeq == 0 ? store.publishedSeq.value : sent.appliedSeq))
        }
        let confirmations = plan.providers.map {
            part -> EventLoopFuture<(results: [(position: Int, result: WriteResult)], seq: UInt64)> in
            // The provider gets each value as the daemon stores it (normalized to the format).
            let values = part.items.map {
                CharacteristicWrite(characteristicID: $0.characteristicID, value: $0.checked.value)
            }
            let command = ProviderCommand.Kind.write(values, atomic: plan.atomic)
            // Every item of this part optimistic: applied already, and the provider is
            // told; its answer is not waited for (the write is acknowledged at once).
            guard !part.confirmed.isEmpty else {
                providers.send(
                    command, to: part.providerID, timeoutMs: timeoutMs, on: eventLoop, from: origin.connectionID)
                return eventLoop.makeSucceededFuture((results: [], seq: 0))
            }
            let claimed = part.confirmed.compactMap { $0.condition == nil ? nil : $0.characteristicID }
            let confirmation = eventLoop.makePromise(
                of: (results: [(position: Int, result: WriteResult)], seq: UInt64).self)
            // Committed where the answer lands, before the provider's AnswerCommand is
            // acknowledged: a report it sends after that (the device's own rounding)
            // comes after the confirmation, never under it.
            providers.send(
                command, to: part.providerID, timeoutMs: timeoutMs, on: eventLoop, from: origin.connectionID
            ) { answer in
                let verdicts = WritePlan.verdicts(for: part, answer: answer, atomic: plan.atomic)
                let confirmed = part.confirmed.filter { verdicts[$0.characteristicID] == .some(nil) }
                var outcome = store.commit(
                    Confirmation(
                        items: confirmed, plannedAt: plan.layoutVersion, atomic: plan.atomic, releasing: claimed),
                    origin: origin)
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
        // Most writes go to one provider: no gathering then.
        let outcomes =
            confirmations.count == 1
            ? confirmations[0].map { [$0] } : EventLoopFuture.whenAllSucceed(confirmations, on: eventLoop)
        return outcomes.map { outcomes in
            // Each write has one result: applied at once (the daemon's own, optimistic ones) or confirmed.
            var applied = sent.applied
            var seq = sent.appliedSeq
            for outcome in outcomes {
                applied += outcome.results
                seq = max(seq, outcome.seq)
            }
            return WriteOutcome(
                results: plan.results(applying: applied, writes: writes),
                seq: seq == 0 ? store.publishedSeq.value : seq)
        }
    }

    /// Runs a scene: decided in one commit (`HomeStore.planScene`); when some of
    /// its actions go through providers, the action-set-executed event is
    /// published after the value events their confirmations caused.
    func executeActionSet(_ actionSetID: ObjectID, origin: Origin, timeoutMs: UInt32?, on eventLoop: any EventLoop)
        -> EventLoopFuture<WriteOutcome>
    {
        let scene: (writes: [CharacteristicWrite], planned: HomeStore.PlannedWrites)
        do throws(HomeError) {
            scene = try store.planScene(actionSetID, origin: origin, owners: providers)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        switch scene.planned {
        case .done(let outcome):
            return eventLoop.makeSucceededFuture(outcome)
        case .sending(let sent):
            let store = self.store
            return send(sent, writes: scene.writes, origin: origin, timeoutMs: timeoutMs, on: eventLoop).map {
                outcome in
                WriteOutcome(
                    results: outcome.results, seq: store.recordActionSetExecuted(actionSetID, origin: origin))
            }
        }
    }
}

/// What the providers' answers to one fresh read committed, noted as each came
/// (on its provider's loop) and taken once all have.
private final class FreshAnswers: Sendable {
    private let state = Mutex<(reads: [ObjectID: CharacteristicRead], readBack: ReadOutcome?)>(([:], nil))

    func note(_ reads: [CharacteristicRead], readBack: ReadOutcome?) {
        state.withLock { state in
            for read in reads { state.reads[read.characteristicID] = read }
            if let readBack { state.readBack = readBack }
        }
    }

    var taken: (reads: [ObjectID: CharacteristicRead], readBack: ReadOutcome?) { state.withLock { $0 } }
}
