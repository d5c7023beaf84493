internal import HomeModel
public import Logging
public import ServiceLifecycle

/// Folds the value log into the tables every `interval` and once more at shutdown
/// (see `HomeStore.foldValueLog`), so that the log stays short and a restart
/// replays little. Nothing depends on it for durability: every value is in the log
/// before it is acknowledged.
///
/// List it first in the `ServiceGroup`, so that it stops last and the file is left
/// folded after a graceful stop.
public struct ValueLogFolding: Service {
    let store: HomeStore
    let interval: Duration
    let logger: Logger

    public init(store: HomeStore, interval: Duration = .milliseconds(500), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let interval = self.interval
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            fold()
        }
        fold()
    }

    private func fold() {
        do throws(HomeError) {
            let count = try store.foldValueLog()
            if count > 0 { logger.trace("folded the value log", metadata: ["values": "\(count)"]) }
        } catch {
            logger.error("cannot fold the value log; will retry", metadata: ["error": "\(error.message)"])
        }
    }
}
