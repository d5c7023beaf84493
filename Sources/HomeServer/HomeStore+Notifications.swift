import HomeModel
import HomeWire

extension HomeStore {
    /// Widens or narrows an open subscription between two events.
    ///
    /// - Returns: the sequence number after which the new filter applies.
    func modify(_ sink: SubscriptionSink, add: SubscriptionFilter, remove: SubscriptionFilter) throws(HomeError) -> UInt64 {
        try withState { state throws(HomeError) -> UInt64 in
            try SubscriptionScope.validate(add, in: state.graph)
            try SubscriptionScope.validate(remove, in: state.graph)
            sink.updateScope { scope in
                scope.remove(remove)
                scope.add(add)
            }
            return state.journal.lastSeq
        }
    }

    /// Records an accessory's reachability (a provider connected or went away),
    /// publishing a reachability event when it changed.
    ///
    /// - Returns: the event's sequence number, or nil when nothing changed.
    @discardableResult
    public func setReachable(_ reachable: Bool, accessoryID: ObjectID, origin: Origin) throws(HomeError) -> UInt64? {
        try publishing(origin: origin) { graph throws(HomeError) -> [HomeEvent.Body] in
            try graph.setReachable(reachable, accessoryID: accessoryID)
                ? [.reachability(accessoryID: accessoryID, reachable: reachable)] : []
        }.last?.seq
    }

    /// Runs a scene: applies each action's write (a failed one is reported and the
    /// others still run, as HomeKit does), then publishes the action-set-executed
    /// event after the value events it caused.
    public func executeActionSet(_ actionSetID: ObjectID, origin: Origin) throws(HomeError) -> ExecuteActionSetResponse {
        let now = currentTimeMs()
        var results: [WriteResult] = []
        let events = try publishing(origin: origin) { graph throws(HomeError) -> [HomeEvent.Body] in
            guard let actionSet = graph.actionSets[actionSetID] else {
                throw HomeError(.notFound, "no action set with id \(actionSetID)")
            }
            var bodies: [HomeEvent.Body] = []
            for action in actionSet.actions {
                do throws(HomeError) {
                    let value = try graph.validateWrite(action.value, to: action.characteristicID, enforceWritable: true)
                    if let changed = graph.storeValidated(value, to: action.characteristicID, nowMs: now),
                       let characteristic = graph.characteristics[action.characteristicID] {
                        bodies.append(.value(ValueChange(accessoryID: characteristic.accessoryID, serviceID: characteristic.serviceID,
                                                         characteristicID: characteristic.id, value: changed)))
                        results.append(WriteResult(characteristicID: action.characteristicID))
                    } else {
                        results.append(WriteResult(characteristicID: action.characteristicID))
                    }
                } catch {
                    results.append(WriteResult(characteristicID: action.characteristicID, error: error))
                }
            }
            bodies.append(.actionSetExecuted(actionSetID))
            return bodies
        }
        // Each successful write's result carries the sequence number of its event.
        var valueSeqs: [ObjectID: UInt64] = [:]
        for event in events {
            if case .value(let change) = event.body { valueSeqs[change.characteristicID] = event.seq }
        }
        results = results.map { result in
            var result = result
            if result.error == nil { result.seq = valueSeqs[result.characteristicID] ?? 0 }
            return result
        }
        return ExecuteActionSetResponse(results: results, seq: events.last?.seq ?? 0)
    }

    /// Statistics of every subscription, grouped by connection id.
    func subscriptionStatistics() -> [UInt64: [SubscriptionStatistics]] {
        withState { state in
            Dictionary(grouping: state.sinks.values.map(\.statistics), by: \.connectionID)
        }
    }
}
