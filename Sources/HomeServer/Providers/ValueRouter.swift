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

    /// Validates writes and applies them: a provider's characteristic through its
    /// provider (acknowledged once it confirms, or at once when optimistic), the
    /// daemon's own at once. An atomic batch must target one provider.
    func write(_ request: WriteCharacteristicsRequest, origin: Origin, timeoutMs: UInt32?, on eventLoop: any EventLoop)
        -> EventLoopFuture<WriteOutcome>
    {
        let graph = store.snapshot().graph
        var byProvider: [String: [Int]] = [:]
        for (position, write) in request.writes.enumerated() {
            if let provider = remoteProvider(of: write.characteristicID, in: graph) {
                byProvider[provider, default: []].append(position)
            }
        }
        if byProvider.isEmpty || request.validateOnly {
            return eventLoop.makeSucceededFuture(
                store.write(request.writes, atomic: request.atomic, validateOnly: request.validateOnly, origin: origin))
        }
        let remote = Set(byProvider.values.joined())
        // Unknown ids are nobody's: they fail on their own (NOT_FOUND) in validation.
        let daemonOwn = request.writes.indices.contains {
            !remote.contains($0) && graph.characteristics[request.writes[$0].characteristicID] != nil
        }
        if request.atomic && (byProvider.count > 1 || daemonOwn) {
            let owners = byProvider.keys.sorted().map { "\"\($0)\"" } + (daemonOwn ? ["the daemon itself"] : [])
            return eventLoop.makeFailedFuture(
                HomeError(
                    .failedPrecondition,
                    "an atomic batch must write the characteristics of one provider, which applies all or "
                        + "none; this one spans \(owners.joined(separator: " and ")); nothing was written"))
        }

        // Everything is validated first: an invalid write never reaches a provider.
        let validation = store.write(request.writes, atomic: request.atomic, validateOnly: true, origin: origin)
        var results = validation.results
        if request.atomic && results.contains(where: { $0.error != nil }) {
            results = results.map { result in
                result.error != nil
                    ? result
                    : WriteResult(
                        characteristicID: result.characteristicID,
                        error: HomeError(.aborted, "not applied: another write of this atomic batch was invalid"))
            }
            return eventLoop.makeSucceededFuture(WriteOutcome(results: results, seq: validation.seq))
        }
        let isValid = results.map { $0.error == nil }

        // The daemon's own characteristics are written at once.
        let local = request.writes.indices.filter { !remote.contains($0) && isValid[$0] }
        apply(local, of: request.writes, origin: origin, into: &results)

        // Optimistic ones at once too; the provider hears of them all the same.
        var waiting: [(positions: [Int], answer: EventLoopFuture<CommandAnswer>)] = []
        for (provider, positions) in byProvider.sorted(by: { $0.key < $1.key }) {
            let valid = positions.filter { isValid[$0] }
            guard !valid.isEmpty else { continue }
            // An atomic batch waits for the provider's verdict on all of it: nothing optimistic.
            let optimistic = request.atomic ? [] : providers.optimistic(provider)
            let now = valid.filter { optimistic.contains(request.writes[$0].characteristicID) }
            apply(now, of: request.writes, origin: origin, into: &results)
            // The provider gets each value as the daemon stores it (normalized to the format).
            let writes = valid.map { position in
                let write = request.writes[position]
                let normalized =
                    (try? graph.checkWrite(write.value, to: write.characteristicID, enforceWritable: true))??.value
                return CharacteristicWrite(characteristicID: write.characteristicID, value: normalized ?? write.value)
            }
            let answer = providers.send(
                .write(writes, atomic: request.atomic), to: provider, timeoutMs: timeoutMs, on: eventLoop,
                from: origin.connectionID)
            let confirmed = valid.filter { !optimistic.contains(request.writes[$0].characteristicID) }
            if !confirmed.isEmpty { waiting.append((valid, answer)) }
        }
        guard !waiting.isEmpty else {
            return eventLoop.makeSucceededFuture(WriteOutcome(results: results, seq: store.lastSeq))
        }
        let store = self.store
        let optimisticByPosition = Set(
            byProvider.flatMap { provider, positions in
                let optimistic = request.atomic ? [] : providers.optimistic(provider)
                return positions.filter { optimistic.contains(request.writes[$0].characteristicID) }
            })
        let resultsSoFar = results
        let asked = waiting.map(\.positions)
        return EventLoopFuture.whenAllComplete(waiting.map(\.answer), on: eventLoop).map { answers in
            // What the providers confirmed is applied, and acknowledged with its event's number.
            var results = resultsSoFar
            var confirmed: [Int] = []
            for (positions, result) in zip(asked, answers) {
                for position in positions where !optimisticByPosition.contains(position) {
                    let id = request.writes[position].characteristicID
                    switch Self.confirmation(of: id, result: result) {
                    case nil: confirmed.append(position)
                    case let error?: results[position] = WriteResult(characteristicID: id, error: error)
                    }
                }
            }
            // All or nothing: a provider that confirmed only part of an atomic batch gets none of it applied.
            if request.atomic && confirmed.count < asked.joined().count {
                for position in confirmed {
                    results[position] = WriteResult(
                        characteristicID: request.writes[position].characteristicID,
                        error: HomeError(
                            .aborted, "not applied: the provider refused another write of this atomic batch"))
                }
                return WriteOutcome(results: results, seq: store.lastSeq)
            }
            let writes = confirmed.map { request.writes[$0] }
            let outcome = store.write(writes, origin: origin)
            for (position, result) in zip(confirmed, outcome.results) { results[position] = result }
            return WriteOutcome(results: results, seq: outcome.seq)
        }
    }

    /// Applies the writes at these positions in the daemon, filling their results.
    private func apply(
        _ positions: [Int], of writes: [CharacteristicWrite], origin: Origin, into results: inout [WriteResult]
    ) {
        guard !positions.isEmpty else { return }
        let outcome = store.write(positions.map { writes[$0] }, origin: origin)
        for (position, result) in zip(positions, outcome.results) { results[position] = result }
    }

    /// nil when the provider confirmed the write of this characteristic; else why not.
    private static func confirmation(of id: ObjectID, result: Result<CommandAnswer, any Error>) -> HomeError? {
        switch result {
        case .failure(let error as HomeError): return error
        case .failure: return HomeError(.internal, "the provider's answer could not be read")
        case .success(let answer):
            if let error = answer.error { return error }
            guard let item = answer.writes.first(where: { $0.characteristicID == id }) else {
                return HomeError(.internal, "the provider answered without a result for characteristic \(id)")
            }
            return item.error
        }
    }

    /// The provider that serves a characteristic, when it is not served in-process.
    private func remoteProvider(of characteristicID: ObjectID, in graph: HomeGraph) -> String? {
        guard let characteristic = graph.characteristics[characteristicID],
            let accessory = graph.accessories[characteristic.accessoryID],
            !providers.inProcessProviders.contains(accessory.provider)
        else { return nil }
        return accessory.provider
    }

    /// Runs a scene: its actions are written as one non-atomic batch (through the
    /// providers of their characteristics), then the action-set-executed event is
    /// published after the value events they caused.
    func executeActionSet(_ actionSetID: ObjectID, origin: Origin, timeoutMs: UInt32?, on eventLoop: any EventLoop)
        -> EventLoopFuture<WriteOutcome>
    {
        let graph = store.snapshot().graph
        guard let actionSet = graph.actionSets[actionSetID] else {
            return eventLoop.makeFailedFuture(HomeError(.notFound, "no action set with id \(actionSetID)"))
        }
        let throughProviders = actionSet.actions.contains { remoteProvider(of: $0.characteristicID, in: graph) != nil }
        guard throughProviders else {
            // All in the daemon: one commit, as a scene has always been.
            do throws(HomeError) {
                return eventLoop.makeSucceededFuture(try store.executeActionSet(actionSetID, origin: origin))
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
        }
        let writes = actionSet.actions.map {
            CharacteristicWrite(characteristicID: $0.characteristicID, value: $0.value)
        }
        let store = self.store
        return write(WriteCharacteristicsRequest(writes: writes), origin: origin, timeoutMs: timeoutMs, on: eventLoop)
            .map { outcome in
                let seq = store.recordActionSetExecuted(actionSetID, origin: origin)
                return WriteOutcome(results: outcome.results, seq: seq)
            }
    }
}
