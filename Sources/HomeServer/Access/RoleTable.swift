public import HomeModel

/// The roles in force: looked up at every call, so that a reload (SIGHUP) applies
/// to connections already open.
public final class RoleTable: Sendable {
    private let policy: Locked<RolePolicy>

    public init(_ policy: RolePolicy) {
        self.policy = Locked(policy)
    }

    public var current: RolePolicy { policy.withLock { $0 } }

    public func replace(with policy: RolePolicy) {
        self.policy.withLock { $0 = policy }
    }

    public func role(of peer: Peer) -> Role? {
        policy.withLock { $0.role(of: peer) }
    }
}
