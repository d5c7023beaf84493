public import HomeModel

extension HomeStore {
    /// Makes a layout commit durable (called by the change, under the lock, before
    /// it is installed), folding the value log into the tables at the same time.
    func saveLayout(of transaction: Transaction) throws(HomeError) {
        guard let persistence, let before = transaction.before, let writtenValues else { return }
        let ids = writtenValues.take()
        let values = ids.compactMap { transaction.graph.characteristics[$0] }
        do throws(HomeError) {
            try persistence.saveLayout(from: before, to: transaction.graph, values: values)
        } catch {
            writtenValues.mark(ids)
            throw error
        }
    }

    /// Folds the value log into the tables: saves the current value of every
    /// characteristic changed since the last fold and empties the log. Under the
    /// lock, so no change lands between the values read and the log emptied.
    ///
    /// - Returns: how many values were saved.
    /// - Throws: persistence's error; the log and the marks are kept for next time.
    @discardableResult
    public func foldValueLog() throws(HomeError) -> Int {
        guard let persistence, let writtenValues else { return 0 }
        return try withState { state throws(HomeError) -> Int in
            let ids = writtenValues.take()
            if ids.isEmpty { return 0 }
            let values = ids.compactMap { state.graph.characteristics[$0] }
            do throws(HomeError) {
                try persistence.foldValueLog(into: values)
            } catch {
                writtenValues.mark(ids)
                throw error
            }
            return values.count
        }
    }
}

/// The characteristics whose values changed since the value log was last folded.
final class WrittenValues: Sendable {
    private let ids = Locked<Set<ObjectID>>([])

    func mark(_ id: ObjectID) {
        ids.withLock { _ = $0.insert(id) }
    }

    func mark(_ more: Set<ObjectID>) {
        ids.withLock { $0.formUnion(more) }
    }

    /// The marked ids, unmarking them.
    func take() -> Set<ObjectID> {
        ids.withLock { ids in
            defer { ids = [] }
            return ids
        }
    }
}
