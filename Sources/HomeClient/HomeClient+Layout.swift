public import HomeModel
@_spi(Wire) public import HomeWire

/// Layout changes and the catalog.
///
/// Every change is one `ChangeLayout` call: all or nothing, durable once it
/// returns, and answered with the events it published (numbered as subscribers
/// see them). Errors are the daemon's: `.alreadyExists` for a name in use,
/// `.notFound` naming the id, `.invalidArgument` for a bad name or a value that
/// does not fit, `.permissionDenied` once roles exist.
///
/// ```swift
/// let study = try await client.addRoom(name: "Study", homeID: home).createdID
/// try await client.assignAccessory(lamp, toRoom: study)
/// ```
extension HomeClient {
    /// Applies one layout operation; the typed methods below are shorthands for it.
    @discardableResult
    public func changeLayout(_ operation: LayoutOperation) async throws(HomeError) -> LayoutResponse {
        try await call(HomeMethods.changeLayout, LayoutRequest(operation))
    }

    /// Applies a layout file (`homectl export`'s text, YAML or JSON) in one layout
    /// commit, or plans it (`dryRun`): see `ImportLayoutRequest`.
    @discardableResult
    public func importLayout(_ document: String, fileName: String = "", dryRun: Bool = false) async throws(HomeError)
        -> ImportLayoutResponse
    {
        try await call(
            HomeMethods.importLayout, ImportLayoutRequest(document: document, fileName: fileName, dryRun: dryRun))
    }

    /// The standard catalog of characteristic and service types.
    public func listTypes() async throws(HomeError) -> ListTypesResponse {
        try await call(HomeMethods.listTypes, ListTypesRequest())
    }

    // MARK: Homes

    /// Adds a home (with its default room); the first home becomes primary.
    /// `createdID` is the home's id.
    @discardableResult
    public func addHome(name: String) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.addHome(name: name))
    }

    /// Renames a home, room, zone, accessory, service, service group, action set or trigger.
    @discardableResult
    public func rename(_ id: ObjectID, to name: String) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.rename(id: id, name: name))
    }

    /// Removes a home, room, zone, accessory, service group, action set or trigger.
    /// A removed room's accessories move to the home's default room.
    @discardableResult
    public func remove(_ id: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.remove(id: id))
    }

    @discardableResult
    public func setPrimaryHome(_ homeID: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.setPrimaryHome(homeID: homeID))
    }

    // MARK: Rooms and zones

    @discardableResult
    public func addRoom(name: String, homeID: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.addRoom(name: name, homeID: homeID))
    }

    @discardableResult
    public func addZone(name: String, homeID: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.addZone(name: name, homeID: homeID))
    }

    @discardableResult
    public func addRoom(_ roomID: ObjectID, toZone zoneID: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.addRoomToZone(roomID: roomID, zoneID: zoneID))
    }

    @discardableResult
    public func removeRoom(_ roomID: ObjectID, fromZone zoneID: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.removeRoomFromZone(roomID: roomID, zoneID: zoneID))
    }

    // MARK: Accessories

    /// Moves an accessory to a room of its home.
    @discardableResult
    public func assignAccessory(_ accessoryID: ObjectID, toRoom roomID: ObjectID) async throws(HomeError)
        -> LayoutResponse
    {
        try await changeLayout(.assignAccessory(accessoryID: accessoryID, roomID: roomID))
    }

    // MARK: Service groups

    @discardableResult
    public func addServiceGroup(name: String, homeID: ObjectID) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.addServiceGroup(name: name, homeID: homeID))
    }

    @discardableResult
    public func addService(_ serviceID: ObjectID, toGroup groupID: ObjectID) async throws(HomeError)
        -> LayoutResponse
    {
        try await changeLayout(.addServiceToGroup(serviceID: serviceID, groupID: groupID))
    }

    @discardableResult
    public func removeService(_ serviceID: ObjectID, fromGroup groupID: ObjectID) async throws(HomeError)
        -> LayoutResponse
    {
        try await changeLayout(.removeServiceFromGroup(serviceID: serviceID, groupID: groupID))
    }

    // MARK: Action sets (scenes)

    @discardableResult
    public func addActionSet(name: String, kind: ActionSetKind = .userDefined, homeID: ObjectID)
        async throws(HomeError) -> LayoutResponse
    {
        try await changeLayout(.addActionSet(name: name, kind: kind, homeID: homeID))
    }

    /// Sets what an action set writes to a characteristic; the value is checked as a write would be.
    ///
    /// - Parameter onlyIf: write only if the characteristic holds this value when the scene runs.
    @discardableResult
    public func addAction(
        characteristicID: ObjectID, value: CharacteristicValue, onlyIf: CharacteristicValue? = nil,
        toActionSet actionSetID: ObjectID
    ) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(
            .addAction(
                CharacteristicWriteAction(characteristicID: characteristicID, value: value, onlyIf: onlyIf),
                actionSetID: actionSetID))
    }

    @discardableResult
    public func removeAction(characteristicID: ObjectID, fromActionSet actionSetID: ObjectID)
        async throws(HomeError) -> LayoutResponse
    {
        try await changeLayout(.removeAction(characteristicID: characteristicID, actionSetID: actionSetID))
    }

    // MARK: Triggers

    /// Adds a trigger: when it fires (`kind`), when it may (`condition`), and for
    /// an event trigger how long its event must hold first (`holdMs`, 0: at once).
    @discardableResult
    public func addTrigger(
        name: String, homeID: ObjectID, kind: TriggerKind, actionSetIDs: [ObjectID] = [],
        enabled: Bool = true, condition: TimeCondition = .always, holdMs: Int64 = 0, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(
            .addTrigger(
                name: name, homeID: homeID, kind: kind, actionSetIDs: actionSetIDs,
                enabled: enabled, condition: condition, holdMs: holdMs, executeOnce: executeOnce, end: end,
                command: command, conditions: conditions))
    }

    /// Replaces what a trigger fires on, its condition, its hold and whether it fires once, all at once.
    @discardableResult
    public func setTrigger(
        _ triggerID: ObjectID, kind: TriggerKind, condition: TimeCondition, holdMs: Int64, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(
            .setTrigger(
                triggerID: triggerID, kind: kind, condition: condition, holdMs: holdMs, executeOnce: executeOnce,
                end: end, command: command, conditions: conditions))
    }

    /// Sets where a home is (for sunrise and sunset), or clears it with nil.
    @discardableResult
    public func setLocation(_ location: GeoLocation?, ofHome homeID: ObjectID) async throws(HomeError)
        -> LayoutResponse
    {
        try await changeLayout(.setHomeLocation(homeID: homeID, location: location))
    }

    @discardableResult
    public func setTrigger(_ triggerID: ObjectID, enabled: Bool) async throws(HomeError) -> LayoutResponse {
        try await changeLayout(.setTriggerEnabled(triggerID: triggerID, enabled: enabled))
    }

    @discardableResult
    public func addActionSet(_ actionSetID: ObjectID, toTrigger triggerID: ObjectID) async throws(HomeError)
        -> LayoutResponse
    {
        try await changeLayout(.addActionSetToTrigger(actionSetID: actionSetID, triggerID: triggerID))
    }

    @discardableResult
    public func removeActionSet(_ actionSetID: ObjectID, fromTrigger triggerID: ObjectID) async throws(HomeError)
        -> LayoutResponse
    {
        try await changeLayout(.removeActionSetFromTrigger(actionSetID: actionSetID, triggerID: triggerID))
    }
}
