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
}
