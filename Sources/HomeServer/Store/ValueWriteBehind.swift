internal import HomeModel
public import Logging
public import ServiceLifecycle
internal import Synchronization

/// Saves last known values behind the writes, in batches: a write marks its
/// characteristic (one set insertion, under the store's lock it already holds), and
/// this service saves the marked ones every `interval` and once more at shutdown.
///
/// Values are not acknowledged-durable as layout changes are: a crash loses at most
/// the last `interval` of them. A graceful stop loses none: list this service first in
/// the `ServiceGroup`, so that it is stopped last — after the server and the
/// simulator, whose final writes it then saves.
public struct ValueWriteBehind: Service {
    let store: HomeStore
    let persistence: any LayoutPersistence
    let interval: Duration
    let logger: Logger

    /// - Parameters:
    ///   - store: A store made with the same `persistence`, which marks written characteristics.
    ///   - interval: How long a written value may wait to be saved.
    public init(
        store: HomeStore, persistence: any LayoutPersistence, interval: Duration = .milliseconds(500),
        logger: Logger
    ) {
        self.store = store
        self.persistence = persistence
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let interval = self.interval
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            flush()
        }
        flush()
    }

    /// Saves the values written since the last flush, in one transaction.
    ///
    /// - Returns: How many values were saved. If saving fails, the error is logged and
    ///   the characteristics stay marked, to be tried again at the next flush.
    @discardableResult
    public func flush() -> Int {
        guard let written = store.writtenValues else { return 0 }
        // Take the marks before reading the values: a write that lands in between is
        // marked again and saved next time, never lost.
        let ids = written.take()
        if ids.isEmpty { return 0 }
        let graph = store.snapshot().graph
        let characteristics = ids.compactMap { graph.characteristics[$0] }
        do {
            try persistence.saveValues(characteristics)
            logger.trace("saved values", metadata: ["count": "\(characteristics.count)"])
            return characteristics.count
        } catch {
            written.mark(ids)
            logger.error(
                "cannot save values; will retry",
                metadata: [
                    "count": "\(characteristics.count)", "error": "\(error.message)",
                ])
            return 0
        }
    }
}

/// The characteristics whose values changed since they were last saved.
final class WrittenValues: Sendable {
    private let ids = Mutex<Set<ObjectID>>([])

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
