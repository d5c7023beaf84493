public import HomeModel

// Swift values for the calls that steer and report on subscriptions:
// ModifySubscription and GetStats.

public struct ModifySubscriptionRequest: Hashable, Sendable {
    /// The subscription's call id on this connection.
    public var callID: UInt64
    public var add: SubscriptionFilter
    public var remove: SubscriptionFilter

    public init(
        callID: UInt64, add: SubscriptionFilter = SubscriptionFilter(),
        remove: SubscriptionFilter = SubscriptionFilter()
    ) {
        self.callID = callID
        self.add = add
        self.remove = remove
    }
}

public struct ConnectionStats: Hashable, Sendable {
    public var connectionID: UInt64
    public var clientName: String
    public var openCalls: UInt32
    public var subscriptions: [SubscriptionStats]
    /// Bytes written to the socket and not yet taken by the client.
    public var pendingBytes: UInt64
    /// The connection's peer, as the kernel said when it connected.
    public var uid: UInt32
    public var pid: Int32
    /// Its role now (nil: none, every call refused).
    public var role: Role?

    public init(
        connectionID: UInt64, clientName: String, openCalls: UInt32, subscriptions: [SubscriptionStats],
        pendingBytes: UInt64, uid: UInt32 = 0, pid: Int32 = 0, role: Role? = nil
    ) {
        self.connectionID = connectionID
        self.clientName = clientName
        self.openCalls = openCalls
        self.subscriptions = subscriptions
        self.pendingBytes = pendingBytes
        self.uid = uid
        self.pid = pid
        self.role = role
    }
}

public struct GetStatsResponse: Hashable, Sendable {
    public var connections: [ConnectionStats]
    public var seq: UInt64
    public init(connections: [ConnectionStats], seq: UInt64) {
        self.connections = connections
        self.seq = seq
    }
}

extension GetStatusResponse {
    /// The caller's role (`callerRole`), nil when it has none or the number is unknown.
    public var role: Role? {
        get { Role(wireNumber: callerRole) }
        set { callerRole = newValue?.wireNumber ?? 0 }
    }
}
