public import HomeModel
public import NIOCore

extension Proto.SubscriptionFilter {
    init(_ filter: SubscriptionFilter) {
        self.init(
            homeIDs: filter.homeIDs, roomIDs: filter.roomIDs, zoneIDs: filter.zoneIDs,
            accessoryIDs: filter.accessoryIDs, serviceIDs: filter.serviceIDs,
            characteristicIDs: filter.characteristicIDs, serviceTypes: filter.serviceTypes,
            characteristicTypes: filter.characteristicTypes, kinds: filter.kinds.map(\.wireNumber))
    }
}

extension SubscriptionFilter {
    /// A filter a client sent; an absent one matches everything.
    ///
    /// - Throws: `.invalidArgument` for an event kind the schema does not define.
    init(_ wire: Proto.SubscriptionFilter?) throws(HomeError) {
        self.init()
        guard let wire else { return }
        homeIDs = wire.homeIDs
        roomIDs = wire.roomIDs
        zoneIDs = wire.zoneIDs
        accessoryIDs = wire.accessoryIDs
        serviceIDs = wire.serviceIDs
        characteristicIDs = wire.characteristicIDs
        serviceTypes = wire.serviceTypes
        characteristicTypes = wire.characteristicTypes
        kinds = []
        for number in wire.kinds {
            kinds.append(try .fromWire(number, field: "SubscriptionFilter.kinds"))
        }
    }
}

extension ModifySubscriptionRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ModifySubscriptionRequest(
            callID: callID, add: Proto.SubscriptionFilter(add), remove: Proto.SubscriptionFilter(remove)
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ModifySubscriptionRequest(serialized: bytes)
        self.init(
            callID: wire.callID, add: try SubscriptionFilter(wire.add), remove: try SubscriptionFilter(wire.remove))
    }
}

extension GetStatsResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        let connections = connections.map { connection in
            Proto.ConnectionStats(
                connectionID: connection.connectionID, clientName: connection.clientName,
                openCalls: connection.openCalls,
                subscriptions: connection.subscriptions.map {
                    Proto.SubscriptionStats(
                        subscriptionID: $0.subscriptionID, callID: $0.callID, policy: $0.policy.wireNumber,
                        queueLimit: $0.queueLimit, queueDepth: $0.queueDepth, sent: $0.sent, merged: $0.merged,
                        dropped: $0.dropped)
                },
                pendingBytes: connection.pendingBytes, uid: connection.uid, pid: connection.pid,
                role: connection.role?.wireNumber ?? 0)
        }
        Proto.GetStatsResponse(connections: connections, seq: seq).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.GetStatsResponse(serialized: bytes)
        let connections = wire.connections.map { connection in
            ConnectionStats(
                connectionID: connection.connectionID, clientName: connection.clientName,
                openCalls: connection.openCalls,
                subscriptions: connection.subscriptions.map {
                    SubscriptionStats(
                        subscriptionID: $0.subscriptionID, callID: $0.callID,
                        policy: .fromWire($0.policy, default: .coalesce), queueLimit: $0.queueLimit,
                        queueDepth: $0.queueDepth, sent: $0.sent, merged: $0.merged, dropped: $0.dropped)
                },
                pendingBytes: connection.pendingBytes, uid: connection.uid, pid: connection.pid,
                role: Role(wireNumber: connection.role))
        }
        self.init(connections: connections, seq: wire.seq)
    }
}
