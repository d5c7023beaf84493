package import HomeConfig
package import HomeModel

extension HomeStore {
    /// Applies a layout operation atomically: the graph applies it to a copy, the
    /// copy is made durable, then installed, then its events are published.
    ///
    /// - Throws: the model's error, unchanged (ALREADY_EXISTS, NOT_FOUND naming the
    ///   id, INVALID_ARGUMENT, FAILED_PRECONDITION), or persistence's; either way
    ///   nothing changed and nothing was published. A trigger's program is the
    ///   caller's to check (`CommandRunner.checkExecutable`): the file system is no
    ///   part of the model.
    @discardableResult
    package func changeLayout(_ operation: LayoutOperation, origin: Origin) throws(HomeError) -> LayoutOutcome {
        let committed = try commit(.layout, origin: origin) {
            transaction throws(HomeError) -> (events: [HomeEvent.Body], createdID: ObjectID) in
            let applied = try transaction.graph.apply(operation, nowMs: transaction.nowMs)
            for event in applied.events {
                // A value the operation set (a renamed accessory's Name) is saved with the layout.
                if case .value(let change) = event { writtenValues?.mark(change.characteristicID) }
                transaction.emit(event)
            }
            try saveLayout(of: transaction)
            return applied
        }
        let events = committed.result.events.enumerated().map { position, body in
            HomeEvent(seq: committed.firstSeq + UInt64(position), timeMs: committed.timeMs, origin: origin, body: body)
        }
        return LayoutOutcome(events: events, seq: committed.lastSeq, createdID: committed.result.createdID)
    }

    /// Applies a layout file in one layout commit: planned against the graph as it
    /// is under the lock (`ImportPlan`, the model's own rules), installed whole, made
    /// durable, then published; or, on any error, nothing at all.
    ///
    /// - Parameter checkedPrograms: the trigger programs the caller checked, outside
    ///   the lock, on a plan of its own: a plan here that adds a trigger running any
    ///   other is refused (the home changed in between).
    /// - Returns: the plan carried out, and the daemon's sequence number after it.
    package func importLayout(_ file: LayoutFile, checkedPrograms: Set<String>, origin: Origin) throws(HomeError)
        -> (plan: ImportPlan, seq: UInt64)
    {
        let committed = try commit(.layout, origin: origin) { transaction throws(HomeError) -> ImportPlan in
            let plan = try ImportPlan(file: file, graph: transaction.graph, nowMs: transaction.nowMs)
            guard Set(plan.programs.keys).isSubset(of: checkedPrograms) else {
                throw HomeError(.aborted, "the home changed while the file was being checked: import it again")
            }
            transaction.graph = plan.graph
            for event in plan.events {
                if case .value(let change) = event { writtenValues?.mark(change.characteristicID) }
                transaction.emit(event)
            }
            try saveLayout(of: transaction)
            return plan
        }
        return (committed.result, committed.lastSeq)
    }
}
