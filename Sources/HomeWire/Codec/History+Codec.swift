public import HomeModel
public import NIOCore

extension ReadHistoryRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ReadHistoryRequest(
            filter: filter == SubscriptionFilter() ? nil : Proto.SubscriptionFilter(filter), afterSeq: afterSeq,
            beforeSeq: beforeSeq, sinceMs: sinceMs, untilMs: untilMs, limit: limit, newestFirst: newestFirst,
            rollupMs: rollupMs
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ReadHistoryRequest(serialized: bytes)
        self.init(
            filter: try SubscriptionFilter(wire.filter), afterSeq: wire.afterSeq, beforeSeq: wire.beforeSeq,
            sinceMs: wire.sinceMs, untilMs: wire.untilMs, limit: wire.limit, newestFirst: wire.newestFirst,
            rollupMs: wire.rollupMs)
    }
}

extension ReadHistoryResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ReadHistoryResponse(
            journalID: journalID, events: events.map(Proto.Event.init), nextSeq: nextSeq, oldestSeq: oldestSeq,
            rollups: rollups.map {
                Proto.RollupPoint(
                    characteristicID: $0.characteristicID, widthMs: $0.widthMs, startMs: $0.startMs,
                    count: UInt64(max($0.count, 0)), min: $0.min, max: $0.max, sum: $0.sum, last: $0.last,
                    lastMs: $0.lastMs)
            }
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ReadHistoryResponse(serialized: bytes)
        var events: [HomeEvent] = []
        events.reserveCapacity(wire.events.count)
        for event in wire.events { events.append(try HomeEvent(event)) }
        self.init(
            journalID: wire.journalID, events: events, nextSeq: wire.nextSeq, oldestSeq: wire.oldestSeq,
            rollups: wire.rollups.map {
                RollupPoint(
                    characteristicID: $0.characteristicID, widthMs: $0.widthMs, startMs: $0.startMs,
                    count: Int64(clamping: $0.count), min: $0.min, max: $0.max, sum: $0.sum, last: $0.last,
                    lastMs: $0.lastMs)
            })
    }
}
