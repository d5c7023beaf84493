internal import HomeModel

/// A batch of writes decided from one snapshot of the home before anything is
/// applied or sent: which are refused and why, which the daemon applies at once,
/// and what each provider is asked to confirm. No I/O: `HomeState.plan` makes it
/// under the store's lock and the caller sends its provider parts.
///
/// Every write is validated and normalised here, once: what a provider is sent is
/// the value as the daemon will store it, and its confirmation is committed as
/// checked here unless the layout changed in between (`StoreChange.confirm`).
struct WritePlan {
    /// One valid write, with its place in the batch.
    struct Item {
        let position: Int
        let characteristicID: ObjectID
        /// As the client asked: checked again if the layout changes before it is committed.
        let requested: CharacteristicValue
        let checked: CheckedWrite
        /// The client's condition, if any: checked against the plan's snapshot, and
        /// again under the store's lock before the write is applied or sent.
        var condition: WriteCondition? = nil
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
    ///   - journalID: the daemon's journal, to check conditional writes against
    ///     the snapshot (nil: conditions are not checked, as for a scene's actions).
    /// - Throws: FAILED_PRECONDITION for an atomic batch that spans several
    ///   providers, or a provider and the daemon: no one could apply it all or none.
    init(
        _ writes: [CharacteristicWrite], atomic: Bool, validateOnly: Bool, in graph: HomeGraph, layoutVersion: UInt64,
        provider: (Accessory) -> String?, optimistic: (String) -> Set<ObjectID>, journalID: String? = nil
    ) throws(HomeError) {
        self.atomic = atomic
        self.layoutVersion = layoutVersion
        results = Array(repeating: nil, count: writes.count)
        // One pass: each write validated (unknown ids fail on their own with
        // NOT_FOUND) and given its owner. A batch mostly writes a few accessories
        // many times: the last accessory's owner is remembered.
        var checked: [(position: Int, checked: CheckedWrite, owner: String?)] = []
        checked.reserveCapacity(writes.count)
        var remote = Set<String>()
        var daemonOwn = false
        var last: (accessoryID: ObjectID, owner: String?)?
        func owner(ofAccessory accessoryID: ObjectID) -> String? {
            if let last, last.accessoryID == accessoryID { return last.owner }
            let owner = graph.accessories[accessoryID].flatMap(provider)
            last = (accessoryID, owner)
            return owner
        }
        for (position, write) in writes.enumerated() {
            let accessoryID: ObjectID?
            switch HomeState.check(write, in: graph, enforceWritable: true, journalID: journalID) {
            case .success(let valid):
                accessoryID = valid.accessoryID
                checked.append((position, valid, owner(ofAccessory: valid.accessoryID)))
            case .failure(let error):
                accessoryID = graph.characteristics[write.characteristicID]?.accessoryID
                results[position] = WriteResult(characteristicID: write.characteristicID, error: error)
            }
            // Unknown ids are nobody's; an invalid write still counts for its owner.
            guard let accessoryID else { continue }
            if let owner = owner(ofAccessory: accessoryID) { remote.insert(owner) } else { daemonOwn = true }
        }
        if atomic && (remote.count > 1 || (!remote.isEmpty && daemonOwn)) {
            let names = remote.sorted().map { "\"\($0)\"" } + (daemonOwn ? ["the daemon itself"] : [])
            throw HomeError(
                .failedPrecondition,
                "an atomic batch must write the characteristics of one provider, which applies all or "
                    + "none; this one spans \(names.joined(separator: " and ")); nothing was written")
        }
        let anyInvalid = checked.count < writes.count
        if validateOnly || (atomic && anyInvalid) {
            let verdict: HomeError? =
                validateOnly ? nil : HomeError(.aborted, "not applied: another write of this atomic batch was invalid")
            for item in checked {
                results[item.position] = WriteResult(
                    characteristicID: writes[item.position].characteristicID, error: verdict)
            }
            return
        }
        var byProvider: [String: [Item]] = [:]
        local.reserveCapacity(remote.isEmpty ? checked.count : 0)
        for (position, checkedWrite, owner) in checked {
            let item = Item(
                position: position, characteristicID: writes[position].characteristicID,
                requested: writes[position].value, checked: checkedWrite, condition: writes[position].condition)
            if let owner { byProvider[owner, default: []].append(item) } else { local.append(item) }
        }
        var anyOptimistic = false
        for (providerID, items) in byProvider.sorted(by: { $0.key < $1.key }) {
            // An atomic batch waits for the provider's verdict on all of it: nothing optimistic.
            let declared = atomic ? [] : optimistic(providerID)
            let part = ProviderPart(
                providerID: providerID, items: items,
                optimistic: declared.isEmpty ? [] : Set(items.map(\.characteristicID)).intersection(declared))
            if !part.optimistic.isEmpty {
                local += items.filter { part.optimistic.contains($0.characteristicID) }
                anyOptimistic = true
            }
            providers.append(part)
        }
        // Applied in the batch's order, as one commit applies a batch.
        if anyOptimistic { local.sort { $0.position < $1.position } }
    }

    /// The conditional writes whose result is a provider's confirmation: each is
    /// claimed under the store's lock before it is sent (`Transaction.claim`). An
    /// optimistic one is applied at once, its condition checked then.
    var conditionalProviderItems: [Item] {
        providers.flatMap { part in part.confirmed.filter { $0.condition != nil } }
    }

    /// Takes out writes whose condition no longer held when they were claimed: they
    /// fail with their error and are neither applied nor sent. In an atomic batch
    /// nothing is applied or sent then, and the others fail with ABORTED.
    mutating func refuse(_ refused: [Int: HomeError], writes: [CharacteristicWrite]) {
        guard !refused.isEmpty else { return }
        let everything = local + providers.flatMap(\.items)
        if atomic {
            for item in everything {
                results[item.position] = WriteResult(
                    characteristicID: item.characteristicID,
                    error: refused[item.position]
                        ?? HomeError(
                            .aborted, "not applied: the condition of another write of this atomic batch did not hold"))
            }
            local = []
            providers = []
            return
        }
        for (position, error) in refused {
            results[position] = WriteResult(characteristicID: writes[position].characteristicID, error: error)
        }
        local.removeAll { refused[$0.position] != nil }
        providers = providers.compactMap { part in
            let items = part.items.filter { refused[$0.position] == nil }
            return items.isEmpty
                ? nil : ProviderPart(providerID: part.providerID, items: items, optimistic: part.optimistic)
        }
    }

    /// The results once what was applied or confirmed is known: the decided ones,
    /// then `applied` (results by position).
    func results(applying applied: [(position: Int, result: WriteResult)], writes: [CharacteristicWrite])
        -> [WriteResult]
    {
        var all = results
        for (position, result) in applied { all[position] = result }
        return all.enumerated().map { position, result in
            result
                ?? WriteResult(
                    characteristicID: writes[position].characteristicID,
                    error: HomeError(.internal, "write \(position) of the batch was neither applied nor refused"))
        }
    }
}
