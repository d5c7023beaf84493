/// The limits a reload (SIGHUP) may change while the daemon runs. Read at each use,
/// so a new value applies from the next subscription or provider call on, on
/// connections already open too; what was begun keeps the value it began with.
public final class LiveLimits: Sendable {
    public struct Values: Sendable, Equatable {
        /// Events a subscriber may have pending when it does not say.
        public var defaultQueueLimit: Int
        /// How long a read or write waits for a provider's answer when the call
        /// sets no `timeout_ms`.
        public var providerTimeoutMs: UInt32

        public init(defaultQueueLimit: Int = 1024, providerTimeoutMs: UInt32 = 5_000) {
            self.defaultQueueLimit = defaultQueueLimit
            self.providerTimeoutMs = providerTimeoutMs
        }
    }

    private let values: Locked<Values>

    public init(_ values: Values = Values()) {
        self.values = Locked(values)
    }

    public var current: Values { values.withLock { $0 } }

    public func replace(with values: Values) {
        self.values.withLock { $0 = values }
    }

    public var defaultQueueLimit: Int {
        get { current.defaultQueueLimit }
        set { values.withLock { $0.defaultQueueLimit = newValue } }
    }

    public var providerTimeoutMs: UInt32 {
        get { current.providerTimeoutMs }
        set { values.withLock { $0.providerTimeoutMs = newValue } }
    }
}
