internal import HomeModel
public import Logging
public import ServiceLifecycle

/// The stored history's upkeep, every `interval` (a minute): the events stored
/// since the last time folded into the 5-minute and hourly rollups, then expired
/// events and rollups deleted. Each step is 16 commits with a pause
/// between steps, so that a writer waits for one short step at most, never for the
/// whole of it.
public struct HistoryMaintenance: Service {
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
            await maintain()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    private func maintain() async {
        let pause: () async -> Void = { try? await Task.sleep(for: .milliseconds(5)) }
        do throws(HomeError) {
            let folded = try store.foldRollups()
            let purged = try await store.purgeHistory(nowMs: store.wallClockMs(), pause: pause)
            if folded + purged > 0 {
                logger.debug(
                    "history upkeep", metadata: ["rolled up": "\(folded) events", "purged": "\(purged) commits"])
            }
        } catch {
            logger.error("cannot keep the history up; will retry", metadata: ["error": "\(error.message)"])
        }
    }
}
