import HomeModel
import NIOCore
import Testing

@testable @_spi(Wire) import HomeWire

/// The generated half of the bridge against the hand-written hot path: both must
/// put the same bytes on the wire and read the same values back.
@Suite("generated bridge and the hand-written hot path")
struct GeneratedBridgeTests {
    static let origin = Origin(kind: .client, connectionID: 3, name: "homectl")

    /// One event of every kind and value type, with origins repeated and not.
    static let events: [HomeEvent] = [
        HomeEvent(
            seq: 1, timeMs: 10, origin: origin,
            body: .value(ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 4, value: .float(21.5), merged: 3))
        ),
        HomeEvent(
            seq: 2, timeMs: 10, origin: origin,
            body: .value(ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 5, value: .bool(true), merged: 0))),
        HomeEvent(
            seq: 3, timeMs: 11, origin: .simulator,
            body: .value(ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 6, value: .int(-7), merged: 0))),
        HomeEvent(
            seq: 4, timeMs: 11, origin: .simulator,
            body: .value(ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 7, value: .uint(.max), merged: 0))),
        HomeEvent(
            seq: 5, timeMs: 12, origin: origin,
            body: .value(
                ValueChange(
                    accessoryID: 2, serviceID: 3, characteristicID: 8, value: .string("Wohnzimmer ü"), merged: 1))),
        HomeEvent(
            seq: 6, timeMs: 12, origin: origin,
            body: .value(
                ValueChange(accessoryID: 2, serviceID: 3, characteristicID: 9, value: .data([0, 1, 255]), merged: 0))),
        HomeEvent(seq: 7, timeMs: 13, origin: .daemon, body: .reachability(accessoryID: 2, reachable: false)),
        HomeEvent(
            seq: 8, timeMs: 14, origin: .daemon,
            body: .layout(
                LayoutChange(action: .moved, object: .serviceGroup, objectID: 2, homeID: 1, name: "Lamps", parentID: 5))
        ),
        HomeEvent(seq: 9, timeMs: 15, origin: Origin(kind: .automation, name: "Evening"), body: .primaryHome(1)),
        HomeEvent(seq: 10, timeMs: 16, origin: Origin(kind: .automation), body: .actionSetExecuted(8)),
        HomeEvent(seq: 11, timeMs: 17, origin: Origin(kind: .provider, name: "sysfs"), body: .triggerFired(9)),
        HomeEvent(
            seq: 12, timeMs: 18, origin: .daemon,
            body: .audit(AuditNote(action: "provider-connected", detail: "provider \"sysfs\" connected"))),
        HomeEvent(
            seq: 13, timeMs: 18, origin: Origin(kind: .automation, name: "Evening"),
            body: .audit(
                AuditNote(
                    action: "trigger-fired", detail: "trigger 9 \"Evening\": its event",
                    values: [8: .string("Küche"), 5: .bool(false), 7: .uint(.max)]))),
    ]

    @Test("a batch built by hand from the sender's queue is byte for byte the generated mirrors' encoding")
    func handBuiltBatchMatchesGenerated() throws {
        let snapshot = DemoHome.make(nowMs: 1_700_000_000_000).characteristics.values.sorted { $0.id < $1.id }.prefix(3)
        let marker = StreamMarker(kind: .resync, seq: 11, reason: "resumed from a sequence number never issued")
        var handBuilt = ByteBuffer()
        SubscribeResponse.encode(
            journalID: "journal-1", events: Self.events[...], snapshot: snapshot, marker: marker, resumeAfter: 9,
            into: &handBuilt)
        var generated = ByteBuffer()
        Proto.SubscribeResponse(
            journalID: "journal-1", events: Self.events.map(\.wire),
            snapshot: snapshot.map(\.wire), marker: marker, resumeAfter: 9
        ).serialize(into: &generated)
        #expect(handBuilt == generated)
    }

    @Test("a batch read by hand on the client holds what the generated mirrors read")
    func handReadBatchMatchesGenerated() throws {
        let bytes = SubscribeResponse(journalID: "journal-1", events: Self.events).encoded()
        let handRead = try SubscribeResponse(fromDaemon: ByteBuffer(bytes: bytes))
        let mirror = try bytes.withUnsafeBytes { raw in try Proto.SubscribeResponse(serialized: raw) }
        #expect(handRead.events == (try mirror.events.map { event throws(HomeError) in try HomeEvent(wire: event) }))
        #expect(handRead.events == Self.events)
    }

    @Test("every case of every enum the model owns has a schema number and comes back from it")
    func enumTablesRoundTrip() {
        func check<E: WireEnum & CaseIterable & Equatable>(_: E.Type, unspecified: UInt32? = nil) {
            let numbers = E.allCases.map(\.wireNumber)
            #expect(Set(numbers).count == numbers.count, "\(E.self): two cases share a number")
            for value in E.allCases {
                #expect(E(wireNumber: value.wireNumber) == value)
            }
            if let unspecified {
                #expect(E(wireNumber: unspecified) == nil, "\(E.self): the schema's unspecified value has no case")
            }
            #expect(E(wireNumber: 1_000) == nil)
        }
        check(CharacteristicFormat.self, unspecified: 0)
        check(CharacteristicUnit.self)
        check(AccessoryCategory.self, unspecified: 0)
        check(ActionSetKind.self)
        check(Recurrence.self)
        check(Comparison.self)
        check(EventKind.self, unspecified: 0)
        check(Origin.Kind.self)
        check(LayoutChange.Action.self)
        check(ObjectKind.self, unspecified: 0)
        check(SlowConsumerPolicy.self)
        check(StreamMarker.Kind.self)
        // HAP's category numbers are the schema's.
        for category in AccessoryCategory.allCases {
            #expect(category.wireNumber == UInt32(category.rawValue))
        }
    }
}
