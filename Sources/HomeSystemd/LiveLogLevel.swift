public import Logging
internal import Synchronization

/// The daemon's log level, which every handler it made reads at each message: a
/// reload (SIGHUP) that changes it applies to every logger at once, those already
/// made included.
public final class LiveLogLevel: Sendable {
    private let index: Atomic<Int>

    public init(_ level: Logger.Level) {
        index = Atomic(Self.levels.firstIndex(of: level)!)
    }

    public var level: Logger.Level {
        get { Self.levels[index.load(ordering: .relaxed)] }
        set { index.store(Self.levels.firstIndex(of: newValue)!, ordering: .relaxed) }
    }

    private static let levels = Logger.Level.allCases
}

/// A handler at the daemon's `LiveLogLevel`, unless its own logger sets a level
/// (swift-log's handlers are values: that level is this logger's alone).
struct LiveLevelLogHandler: LogHandler {
    var inner: any LogHandler
    let live: LiveLogLevel
    private var ownLevel: Logger.Level?

    init(_ inner: any LogHandler, live: LiveLogLevel) {
        self.inner = inner
        self.live = live
    }

    var logLevel: Logger.Level {
        get { ownLevel ?? live.level }
        set { ownLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        inner.log(event: event)
    }
}
