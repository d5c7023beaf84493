package import HomeModel

/// The roles in force: looked up at every call, so that a reload (SIGHUP) applies
/// to connections already open.
package final class RoleTable: Sendable {
    private let policy: Locked<RolePolicy>

    package init(_ policy: RolePolicy) {
        self.policy = Locked(policy)
    }

    package var current: RolePolicy { policy.withLock { $0 } }

    package func replace(with policy: RolePolicy) {
        self.policy.withLock { $0 = policy }
    }

    package func role(of peer: Peer) -> Role? {
        policy.withLock { $0.role(of: peer) }
    }
}
