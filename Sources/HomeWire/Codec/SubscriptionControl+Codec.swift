internal import HomeModel

extension SubscriptionFilter: WireConvertible {
    var wire: Proto.SubscriptionFilter {
        Proto.SubscriptionFilter(
            homeIDs: homeIDs, roomIDs: roomIDs, zoneIDs: zoneIDs, accessoryIDs: accessoryIDs, serviceIDs: serviceIDs,
            characteristicIDs: characteristicIDs, serviceTypes: serviceTypes,
            characteristicTypes: characteristicTypes, kinds: kinds.map(\.wireNumber))
    }

    /// A filter a client sent.
    ///
    /// - Throws: `.invalidArgument` for an event kind the schema does not define.
    init(wire: Proto.SubscriptionFilter) throws(HomeError) {
        self.init(
            homeIDs: wire.homeIDs, roomIDs: wire.roomIDs, zoneIDs: wire.zoneIDs, accessoryIDs: wire.accessoryIDs,
            serviceIDs: wire.serviceIDs, characteristicIDs: wire.characteristicIDs, serviceTypes: wire.serviceTypes,
            characteristicTypes: wire.characteristicTypes)
        for number in wire.kinds {
            kinds.append(try .fromWire(number, field: "SubscriptionFilter.kinds"))
        }
    }
}
