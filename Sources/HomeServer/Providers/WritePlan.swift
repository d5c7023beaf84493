internal import HomeModel
internal import HomeWire

/// A batch of writes decided from one snapshot of the home before anything is
/// applied or sent: which are refused and why, which the daemon applies at once,
/// and what each provider is asked to confirm. No I/O; `ValueRouter` carries it out.
///
/// Every write is validated and normalised here, once: what a provider is sent is
/// the value as the daemon will store it, and its confirmation is committed as
/// checked here unless the layout changed in between (`HomeStore.commit(_:plannedAt:origin:)`).
struct WritePlan {
    /// One valid write, with its place in the batch.
    struct Item {
        let position: Int
        let characteristicID: ObjectID
        /// As the client asked: checked again if the layout changes before it is committed.
        let requested: CharacteristicValue
        let checked: CheckedWrite
    }

    /// What goes to one provider: every valid write of its characteristics.
    struct ProviderPart {
        let providerID: String
        let items: [Item]
        /// Applied at once as well, since the provider declared them optimistic: they
        /// are not waited for.
        let optimistic: Set<ObjectID>
        /// The ones whose result is the provider's confirmation.
        var confirmed: [Item] { items.filter { !optimistic.contains($0.characteristicID) } }
    }

    /// The result of each write that is decided already (refused, or validated
    /// only); nil for the ones that are applied or sent.
    private(set) var results: [WriteResult?]
    /// Applied by the daemon at once: its own characteristics and optimistic ones.
    private(set) var local: [Item] = []
    /// Sent to providers, sorted by provider id.
    private(set) var providers: [ProviderPart] = []
    let atomic: Bool
    /// The layout the plan was made from (`HomeStore`'s layout version).
    let layoutVersion: UInt64

    /// Plans a batch.
    ///
    /// - Parameters:
    ///   - provider: the provider that serves an accessory, nil for the daemon's own.
    ///   - optimistic: the characteristics a provider declared optimistic.
    /// - Throws: FAILED_PRECONDITION for an atomic batch that spans several
    ///   providers, or a provider and the daemon: no one could apply it all or none.
    init(
        _ writes: [CharacteristicWrite], atomic: Bool, validateOnly: Bool, in graph: HomeGraph, layoutVersion: UInt64,
        provider: (Accessory) -> String?, optimistic: (String) -> Set<ObjectID>
    ) throws(HomeError) {
        self.atomic = atomic
        self.layoutVersion = layoutVersion
        // Whose each write is; unknown ids are nobody's and fail on their own in validation.
        let owners: [String?] = writes.map { write in
            graph.characteristics[write.characteristicID].flatMap { characteristic in
                graph.accessories[characteristic.accessoryID].flatMap(provider)
            }
        }
        if atomic {
            let remote = Set(owners.compactMap { $0 })
            let daemonOwn = writes.indices.contains {
                owners[$0] == nil && graph.characteristics[writes[$0].characteristicID] != nil
            }
            if remote.count > 1 || (!remote.isEmpty && daemonOwn) {
                let names = remote.sorted().map { "\"\($0)\"" } + (daemonOwn ? ["the daemon itself"] : [])
                throw HomeError(
                    .failedPrecondition,
                    "an atomic batch must write the characteristics of one provider, which applies all or "
                        + "none; this one spans \(names.joined(separator: " and ")); nothing was written")
            }
        }
        let checked = writes.map { HomeStore.check($0, in: graph, enforceWritable: true) }
        results = zip(writes, checked).map { write, outcome in
            if case .failure(let error) = outcome {
                WriteResult(characteristicID: write.characteristicID, error: error)
            } else {
                nil
            }
        }
        let anyInvalid = results.contains { $0 != nil }
        if validateOnly || (atomic && anyInvalid) {
            let verdict: HomeError? =
                validateOnly ? nil : HomeError(.aborted, "not applied: another write of this atomic batch was invalid")
            results = results.enumerated().map { position, result in
                result ?? WriteResult(characteristicID: writes[position].characteristicID, error: verdict)
            }
            return
        }
        var byProvider: [String: [Item]] = [:]
        for (position, outcome) in checked.enumerated() {
            guard case .success(let checkedWrite) = outcome else { continue }
            let item = Item(
                position: position, characteristicID: writes[position].characteristicID,
                requested: writes[position].value, checked: checkedWrite)
            if let owner = owners[position] { byProvider[owner, default: []].append(item) } else { local.append(item) }
        }
        for (providerID, items) in byProvider.sorted(by: { $0.key < $1.key }) {
            // An atomic batch waits for the provider's verdict on all of it: nothing optimistic.
            let declared = atomic ? [] : optimistic(providerID)
            let part = ProviderPart(
                providerID: providerID, items: items,
                optimistic: Set(items.map(\.characteristicID)).intersection(declared))
            local += items.filter { part.optimistic.contains($0.characteristicID) }
            providers.append(part)
        }
        local.sort { $0.position < $1.position }
    }

    /// The results once the local writes and the providers' parts are known: the
    /// decided ones, then `applied` by position.
    func results(applying applied: [Int: WriteResult], writes: [CharacteristicWrite]) -> [WriteResult] {
        results.enumerated().map { position, decided in
            decided ?? applied[position]
                ?? WriteResult(
                    characteristicID: writes[position].characteristicID,
                    error: HomeError(.internal, "write \(position) of the batch was neither applied nor refused"))
        }
    }

    /// What a provider's answer means for each write it was to confirm: nil when
    /// confirmed, else why not. In an atomic batch, anything short of confirming
    /// all of it fails all of it.
    static func verdicts(for part: ProviderPart, answer: Result<CommandAnswer, any Error>, atomic: Bool)
        -> [ObjectID: HomeError?]
    {
        var verdicts: [ObjectID: HomeError?] = [:]
        for item in part.confirmed {
            verdicts[item.characteristicID] = confirmation(of: item.characteristicID, answer: answer)
        }
        if atomic && verdicts.values.contains(where: { $0 != nil }) {
            for (id, verdict) in verdicts where verdict == nil {
                verdicts[id] = HomeError(
                    .aborted, "not applied: the provider refused another write of this atomic batch")
            }
        }
        return verdicts
    }

    /// nil when the provider confirmed the write of this characteristic; else why not.
    private static func confirmation(of id: ObjectID, answer: Result<CommandAnswer, any Error>) -> HomeError? {
        switch answer {
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
}
