public import HomeModel
public import NIOCore

extension ReadHistoryRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ReadHistoryRequest(
            filter: filter == SubscriptionFilter() ? nil : Proto.SubscriptionFilter(filter), afterSeq: afterSeq,
            beforeSeq: beforeSeq, sinceMs: sinceMs, untilMs: untilMs, limit: limit, newestFirst: newestFirst
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ReadHistoryRequest(serialized: bytes)
        self.init(
            filter: try SubscriptionFilter(wire.filter), afterSeq: wire.afterSeq, beforeSeq: wire.beforeSeq,
            sinceMs: wire.sinceMs, untilMs: wire.untilMs, limit: wire.limit, newestFirst: wire.newestFirst)
    }
}

extension ReadHistoryResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ReadHistoryResponse(
            journalID: journalID, events: events.map(Proto.Event.init), nextSeq: nextSeq, oldestSeq: oldestSeq
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ReadHistoryResponse(serialized: bytes)
        var events: [HomeEvent] = []
        events.reserveCapacity(wire.events.count)
        for event in wire.events { events.append(try HomeEvent(event)) }
        self.init(journalID: wire.journalID, events: events, nextSeq: wire.nextSeq, oldestSeq: wire.oldestSeq)
    }
}
