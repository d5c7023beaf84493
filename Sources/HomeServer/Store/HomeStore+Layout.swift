package import HomeConfig
package import HomeModel

extension HomeStore {
    /// Applies a layout operation atomically: the graph applies it to a copy, the
    /// copy is made durable, then installed, then its events are published.
    ///
    /// - Throws: the model's error, unchanged (ALREADY_EXISTS, NOT_FOUND naming the
    ///   id, INVALID_ARGUMENT, FAILED_PRECONDITION), or persistence's; either way
    ///   nothing changed and nothing was published. A trigger's program is the
    ///   caller's to check (that it can be run): the file system is no
    ///   part of the model.
    @discardableResult
    package func changeLayout(_ operation: LayoutOperation, origin: Origin) throws(HomeError) -> LayoutOutcome {
        let committed = try commit(.layout(operation), origin: origin)
        guard case .layout(let applied, let createdID) = committed.result else { preconditionFailure("a layout") }
        let events = applied.enumerated().map { position, body in
            HomeEvent(seq: committed.firstSeq + UInt64(position), timeMs: committed.timeMs, origin: origin, body: body)
        }
        return LayoutOutcome(events: events, seq: committed.lastSeq, createdID: createdID)
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
        var plan: ImportPlan?
        let committed = try commit(
            .replaceLayout { graph, nowMs throws(HomeError) -> PlannedLayout in
                let planned = try ImportPlan(file: file, graph: graph, nowMs: nowMs)
                guard Set(planned.programs.keys).isSubset(of: checkedPrograms) else {
                    throw HomeError(.aborted, "the home changed while the file was being checked: import it again")
                }
                plan = planned
                return PlannedLayout(graph: planned.graph, events: planned.events)
            }, origin: origin)
        guard let plan else { preconditionFailure("an import's plan") }
        return (plan, committed.lastSeq)
    }
}
