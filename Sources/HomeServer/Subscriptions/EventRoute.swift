internal import HomeModel

/// Where in the home an event happened, resolved from the graph once when the
/// event is published, so that every subscription's filter decides on it without
/// the graph (on its own event loop, outside the store's lock).
///
/// It describes the graph as it stood when the event was published: an event is
/// matched against where its object was then, whatever moved since. Routes of
/// value events are cached per characteristic until the layout changes (an object,
/// so that an event holds its route with one reference).
final class EventRoute: Sendable {
    /// The characteristic, service and accessory the event is about (0 when none).
    let characteristicID: ObjectID
    let serviceID: ObjectID
    let accessoryID: ObjectID
    /// The accessory's room and home, and the zones holding that room; nil when
    /// the accessory is not in the graph.
    let placement: Placement?
    let characteristicType: TypeIdentifier?
    /// nil when the service is not in the graph.
    let serviceType: TypeIdentifier?
    /// A value event's characteristic supports event notification (streams its changes).
    let notifies: Bool
    /// False for occurrences (a doorbell press): never merged, never held back.
    let mergeable: Bool
    /// The store's layout version the route was resolved in: a filter's cached
    /// verdict holds while it does not change.
    let layoutVersion: UInt64

    struct Placement: Sendable {
        let roomID: ObjectID
        let homeID: ObjectID
        let zoneIDs: [ObjectID]
    }

    private init(
        characteristicID: ObjectID, serviceID: ObjectID, accessoryID: ObjectID, placement: Placement?,
        characteristicType: TypeIdentifier?, serviceType: TypeIdentifier?, notifies: Bool, mergeable: Bool,
        layoutVersion: UInt64
    ) {
        self.characteristicID = characteristicID
        self.serviceID = serviceID
        self.accessoryID = accessoryID
        self.placement = placement
        self.characteristicType = characteristicType
        self.serviceType = serviceType
        self.notifies = notifies
        self.mergeable = mergeable
        self.layoutVersion = layoutVersion
    }

    /// The route of a characteristic (of its value events, and of snapshots).
    convenience init(characteristic: Characteristic, in graph: HomeGraph, layoutVersion: UInt64) {
        self.init(
            characteristicID: characteristic.id, serviceID: characteristic.serviceID,
            accessoryID: characteristic.accessoryID,
            placement: Self.placement(of: characteristic.accessoryID, in: graph),
            characteristicType: characteristic.type, serviceType: graph.services[characteristic.serviceID]?.type,
            notifies: characteristic.properties.supportsEventNotification, mergeable: !characteristic.isEventOnly,
            layoutVersion: layoutVersion)
    }

    /// The route of an event that is about an accessory or about nothing in particular.
    convenience init(accessoryID: ObjectID, in graph: HomeGraph, layoutVersion: UInt64) {
        self.init(
            characteristicID: 0, serviceID: 0, accessoryID: accessoryID,
            placement: accessoryID == 0 ? nil : Self.placement(of: accessoryID, in: graph), characteristicType: nil,
            serviceType: nil, notifies: false, mergeable: true, layoutVersion: layoutVersion)
    }

    /// A value event of a characteristic that is not in the graph: matched by nothing.
    static func unknownCharacteristic(layoutVersion: UInt64) -> EventRoute {
        EventRoute(
            characteristicID: 0, serviceID: 0, accessoryID: 0, placement: nil, characteristicType: nil,
            serviceType: nil, notifies: false, mergeable: true, layoutVersion: layoutVersion)
    }

    private static func placement(of accessoryID: ObjectID, in graph: HomeGraph) -> Placement? {
        guard let accessory = graph.accessories[accessoryID] else { return nil }
        let zoneIDs = graph.zones.values.filter { $0.roomIDs.contains(accessory.roomID) }.map(\.id)
        return Placement(roomID: accessory.roomID, homeID: accessory.homeID, zoneIDs: zoneIDs)
    }
}
