internal import HomeModel

/// Something in the daemon that sees every event as the store publishes it (the
/// automation engine), as opposed to a subscriber, which sees them later on its
/// connection's event loop.
///
/// Both methods run under the store's lock, in publication order, with the graph
/// the event applies to: they must be quick, must never wait, and must never call
/// back into the store (its lock is not reentrant). Hand anything slow to a task.
protocol HomeEventObserver: AnyObject, Sendable {
    /// Called once, when the observer is added, with the graph at that moment.
    func start(with graph: HomeGraph)

    /// Called for every published event, after it was numbered.
    func observe(_ event: HomeEvent, in graph: HomeGraph)
}

extension HomeStore {
    /// Adds an observer. It sees the graph and then every event after it, with no
    /// gap between the two.
    func addObserver(_ observer: any HomeEventObserver) {
        withState { state in
            observer.start(with: state.graph)
            state.observers[ObjectIdentifier(observer)] = observer
        }
    }

    /// Removes an observer; once this returns, it sees nothing more.
    func removeObserver(_ observer: any HomeEventObserver) {
        withState { state in
            state.observers[ObjectIdentifier(observer)] = nil
        }
    }
}
