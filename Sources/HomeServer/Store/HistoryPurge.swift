internal import HomeModel
public import Logging
public import ServiceLifecycle

/// Deletes expired events from the stored history every `interval` (a minute),
/// a few hundred commits per step with a pause between steps, so that a writer
/// waits for one short step at most, never for the whole purge.
public struct HistoryPurge: Service {
    let store: HomeStore
    let interval: Duration
    let logger: Logger

    public init(store: HomeStore, interval: Duration = .seconds(60), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let interval = self.interval
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await purge()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    private func purge() async {
        do throws(HomeError) {
            let purged = try await store.purgeHistory(nowMs: currentTimeMs()) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            if purged > 0 { logger.debug("purged expired history", metadata: ["commits": "\(purged)"]) }
        } catch {
            logger.error("cannot purge the history; will retry", metadata: ["error": "\(error.message)"])
        }
    }
}
