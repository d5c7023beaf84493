internal import HomeModel

// Events and stream markers on the wire, through the generated mirrors: for
// LayoutResponse's events, the stream's markers and the tests. The stream's
// batches of events take the hand-written path in Internal/EventCodec.swift.

extension HomeEvent: WireConvertible {
    var wire: Proto.Event {
        let body: Proto.Event.Body
        switch self.body {
        case .value(let change):
            body = .value(
                Proto.ValueChange(
                    accessoryID: change.accessoryID, serviceID: change.serviceID,
                    characteristicID: change.characteristicID, value: Proto.Value(change.value), merged: change.merged))
        case .reachability(let accessoryID, let reachable):
            body = .reachability(ReachabilityChange(accessoryID: accessoryID, reachable: reachable))
        case .layout(let change):
            body = .layout(change)
        case .primaryHome(let homeID):
            body = .primaryHomeID(homeID)
        case .actionSetExecuted(let actionSetID):
            body = .actionSetID(actionSetID)
        case .triggerFired(let triggerID):
            body = .triggerID(triggerID)
        case .audit(let note):
            body = .audit(Proto.AuditNote(note))
        }
        return Proto.Event(seq: seq, kind: kind.wireNumber, timeMs: timeMs, origin: origin, body: body)
    }

    /// - Throws: `.invalidArgument` for an event without a body, or a value event without a value.
    init(wire: Proto.Event) throws(HomeError) {
        let origin = wire.origin
        let body: HomeEvent.Body
        switch wire.body {
        case .value(let change)?:
            guard let value = CharacteristicValue(change.value) else {
                throw HomeError(.invalidArgument, "value event \(wire.seq) carries no value")
            }
            body = .value(
                ValueChange(
                    accessoryID: change.accessoryID, serviceID: change.serviceID,
                    characteristicID: change.characteristicID, value: value, merged: change.merged))
        case .reachability(let change)?:
            body = .reachability(accessoryID: change.accessoryID, reachable: change.reachable)
        case .layout(let change)?:
            body = .layout(change)
        case .primaryHomeID(let homeID)?:
            body = .primaryHome(homeID)
        case .actionSetID(let actionSetID)?:
            body = .actionSetExecuted(actionSetID)
        case .triggerID(let triggerID)?:
            body = .triggerFired(triggerID)
        case .audit(let note)?:
            body = .audit(try AuditNote(wire: note, seq: wire.seq))
        case nil:
            throw HomeError(.invalidArgument, "event \(wire.seq) has no body")
        }
        self.init(seq: wire.seq, timeMs: wire.timeMs, origin: origin ?? Origin(kind: .unknown), body: body)
    }
}

extension Proto.AuditNote {
    init(_ note: AuditNote) {
        self.init(
            action: note.action, detail: note.detail,
            values: note.values.sorted { $0.key < $1.key }.map {
                Proto.NotedValue(characteristicID: $0.key, value: Proto.Value($0.value))
            })
    }
}

extension AuditNote {
    /// - Throws: `.invalidArgument` for a noted characteristic without a value.
    init(wire: Proto.AuditNote, seq: UInt64) throws(HomeError) {
        var values: [ObjectID: CharacteristicValue] = [:]
        for noted in wire.values {
            guard let value = CharacteristicValue(noted.value) else {
                throw HomeError(
                    .invalidArgument,
                    "audit event \(seq) notes characteristic \(noted.characteristicID) without a value")
            }
            values[noted.characteristicID] = value
        }
        self.init(action: wire.action, detail: wire.detail, values: values)
    }
}
