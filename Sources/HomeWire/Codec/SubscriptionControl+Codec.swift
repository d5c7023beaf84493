internal import CHomeProto
public import HomeModel
public import NIOCore

extension CArena {
    mutating func filter(_ filter: SubscriptionFilter) -> UnsafeMutablePointer<Home__V1__SubscriptionFilter> {
        let message = allocate(Home__V1__SubscriptionFilter.self)
        home__v1__subscription_filter__init(message)
        message.pointee.n_home_ids = filter.homeIDs.count
        message.pointee.home_ids = ids(filter.homeIDs)
        message.pointee.n_room_ids = filter.roomIDs.count
        message.pointee.room_ids = ids(filter.roomIDs)
        message.pointee.n_zone_ids = filter.zoneIDs.count
        message.pointee.zone_ids = ids(filter.zoneIDs)
        message.pointee.n_accessory_ids = filter.accessoryIDs.count
        message.pointee.accessory_ids = ids(filter.accessoryIDs)
        message.pointee.n_service_ids = filter.serviceIDs.count
        message.pointee.service_ids = ids(filter.serviceIDs)
        message.pointee.n_characteristic_ids = filter.characteristicIDs.count
        message.pointee.characteristic_ids = ids(filter.characteristicIDs)
        message.pointee.n_service_types = filter.serviceTypes.count
        message.pointee.service_types = array(UnsafeMutablePointer<CChar>?.self, count: filter.serviceTypes.count) {
            $0.cString(filter.serviceTypes[$1])
        }
        message.pointee.n_characteristic_types = filter.characteristicTypes.count
        message.pointee.characteristic_types = array(
            UnsafeMutablePointer<CChar>?.self, count: filter.characteristicTypes.count
        ) {
            $0.cString(filter.characteristicTypes[$1])
        }
        message.pointee.n_kinds = filter.kinds.count
        message.pointee.kinds = array(Home__V1__EventKind.self, count: filter.kinds.count) { _, index in
            Home__V1__EventKind(rawValue: filter.kinds[index].wireNumber(offset: 1))
        }
        return message
    }
}

extension ModelDecoding {
    static func filter(_ message: UnsafeMutablePointer<Home__V1__SubscriptionFilter>?) throws(HomeError)
        -> SubscriptionFilter
    {
        var filter = SubscriptionFilter()
        guard let wire = message?.pointee else { return filter }
        filter.homeIDs = ids(wire.home_ids, wire.n_home_ids)
        filter.roomIDs = ids(wire.room_ids, wire.n_room_ids)
        filter.zoneIDs = ids(wire.zone_ids, wire.n_zone_ids)
        filter.accessoryIDs = ids(wire.accessory_ids, wire.n_accessory_ids)
        filter.serviceIDs = ids(wire.service_ids, wire.n_service_ids)
        filter.characteristicIDs = ids(wire.characteristic_ids, wire.n_characteristic_ids)
        filter.serviceTypes = try swiftArray(wire.service_types, wire.n_service_types) { swiftString($0) }
        filter.characteristicTypes = try swiftArray(wire.characteristic_types, wire.n_characteristic_types) {
            swiftString($0)
        }
        filter.kinds = try swiftArray(wire.kinds, wire.n_kinds) { kind throws(HomeError) in
            try EventKind.fromWire(kind.rawValue, offset: 1, field: "SubscriptionFilter.kinds")
        }
        return filter
    }

    static func writeResults(
        _ results: UnsafeMutablePointer<UnsafeMutablePointer<Home__V1__WriteResult>?>?, _ count: Int
    ) throws(HomeError) -> [WriteResult] {
        try swiftArray(results, count) { pointer in
            let result = pointer!.pointee
            return WriteResult(
                characteristicID: result.characteristic_id,
                error: HomeError.Code(wireValue: Int(result.code.rawValue)).map {
                    HomeError($0, swiftString(result.message))
                },
                seq: result.seq)
        }
    }
}

extension CArena {
    mutating func writeResults(_ results: [WriteResult]) -> UnsafeMutablePointer<
        UnsafeMutablePointer<Home__V1__WriteResult>?
    >? {
        array(UnsafeMutablePointer<Home__V1__WriteResult>?.self, count: results.count) { arena, index in
            let result = results[index]
            let item = arena.allocate(Home__V1__WriteResult.self)
            home__v1__write_result__init(item)
            item.pointee.characteristic_id = result.characteristicID
            item.pointee.seq = result.seq
            if let error = result.error {
                item.pointee.code = Home__V1__StatusCode(rawValue: UInt32(error.code.rawValue))
                item.pointee.message = arena.cString(error.message)
            }
            return item
        }
    }
}

extension ModifySubscriptionRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ModifySubscriptionRequest.self)
        home__v1__modify_subscription_request__init(message)
        message.pointee.call_id = callID
        message.pointee.add = arena.filter(add)
        message.pointee.remove = arena.filter(remove)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ModifySubscriptionRequest",
            unpack: home__v1__modify_subscription_request__unpack,
            free: home__v1__modify_subscription_request__free_unpacked
        ) { message throws(HomeError) in
            ModifySubscriptionRequest(
                callID: message.pointee.call_id,
                add: try ModelDecoding.filter(message.pointee.add),
                remove: try ModelDecoding.filter(message.pointee.remove))
        }
    }
}

extension ModifySubscriptionResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var message = Home__V1__ModifySubscriptionResponse()
        home__v1__modify_subscription_response__init(&message)
        message.seq = seq
        withUnsafeMutablePointer(to: &message) { packMessage($0, into: &buffer, withFrameHeader: false) }
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ModifySubscriptionResponse",
            unpack: home__v1__modify_subscription_response__unpack,
            free: home__v1__modify_subscription_response__free_unpacked
        ) {
            ModifySubscriptionResponse(seq: $0.pointee.seq)
        }
    }
}

extension GetStatsRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var message = Home__V1__GetStatsRequest()
        home__v1__get_stats_request__init(&message)
        withUnsafeMutablePointer(to: &message) { packMessage($0, into: &buffer, withFrameHeader: false) }
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        try withUnpacked(
            bytes, as: "home.v1.GetStatsRequest", unpack: home__v1__get_stats_request__unpack,
            free: home__v1__get_stats_request__free_unpacked
        ) { _ in }
    }
}

extension GetStatsResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__GetStatsResponse.self)
        home__v1__get_stats_response__init(message)
        message.pointee.seq = seq
        message.pointee.n_connections = connections.count
        message.pointee.connections = arena.array(
            UnsafeMutablePointer<Home__V1__ConnectionStats>?.self, count: connections.count
        ) { arena, index in
            let connection = connections[index]
            let item = arena.allocate(Home__V1__ConnectionStats.self)
            home__v1__connection_stats__init(item)
            item.pointee.connection_id = connection.connectionID
            item.pointee.client_name = arena.cString(connection.clientName)
            item.pointee.open_calls = connection.openCalls
            item.pointee.pending_bytes = connection.pendingBytes
            item.pointee.n_subscriptions = connection.subscriptions.count
            item.pointee.subscriptions = arena.array(
                UnsafeMutablePointer<Home__V1__SubscriptionStats>?.self,
                count: connection.subscriptions.count
            ) { arena, index in
                let stats = connection.subscriptions[index]
                let sub = arena.allocate(Home__V1__SubscriptionStats.self)
                home__v1__subscription_stats__init(sub)
                sub.pointee.subscription_id = stats.subscriptionID
                sub.pointee.call_id = stats.callID
                sub.pointee.policy = Home__V1__SlowConsumerPolicy(rawValue: stats.policy.wireNumber())
                sub.pointee.queue_limit = stats.queueLimit
                sub.pointee.queue_depth = stats.queueDepth
                sub.pointee.sent = stats.sent
                sub.pointee.merged = stats.merged
                sub.pointee.dropped = stats.dropped
                return sub
            }
            return item
        }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.GetStatsResponse", unpack: home__v1__get_stats_response__unpack,
            free: home__v1__get_stats_response__free_unpacked
        ) { message throws(HomeError) in
            let connections = try swiftArray(message.pointee.connections, message.pointee.n_connections) {
                pointer throws(HomeError) in
                let connection = pointer!.pointee
                return ConnectionStats(
                    connectionID: connection.connection_id, clientName: swiftString(connection.client_name),
                    openCalls: connection.open_calls,
                    subscriptions: try swiftArray(connection.subscriptions, connection.n_subscriptions) { pointer in
                        let stats = pointer!.pointee
                        return SubscriptionStats(
                            subscriptionID: stats.subscription_id, callID: stats.call_id,
                            policy: .fromWire(stats.policy.rawValue, default: .coalesce), queueLimit: stats.queue_limit,
                            queueDepth: stats.queue_depth, sent: stats.sent, merged: stats.merged,
                            dropped: stats.dropped)
                    },
                    pendingBytes: connection.pending_bytes)
            }
            return GetStatsResponse(connections: connections, seq: message.pointee.seq)
        }
    }
}
