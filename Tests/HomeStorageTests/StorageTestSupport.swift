import Foundation
import HomeModel
import Testing

@testable import HomeStorage

/// A fresh directory for one test's files, removed with everything in it afterwards.
final class Scratch {
    let path: String

    init() throws {
        let temporary = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        var template = Array((temporary + "homed-storage-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ScratchError("mkdtemp failed: \(errno)") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    /// The names in the directory, sorted.
    var listing: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }
}

struct ScratchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func bytes(of path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Closes the database, opens the file again and loads it: what a restart sees.
func reloaded(_ database: HomeDatabase) throws -> HomeGraph {
    database.close()
    let reopened = try HomeDatabase.open(path: database.path)
    defer { reopened.close() }
    return try reopened.load()
}

/// Expects two graphs to be equal, naming the tables and ids that differ rather
/// than printing two whole graphs.
func expectSame(_ actual: HomeGraph, _ expected: HomeGraph, sourceLocation: SourceLocation = #_sourceLocation) {
    if actual == expected { return }
    var differences: [String] = []
    func compare<T: Equatable>(_ name: String, _ lhs: [ObjectID: T], _ rhs: [ObjectID: T]) {
        let ids = Set(lhs.keys).union(rhs.keys).filter { lhs[$0] != rhs[$0] }.sorted()
        guard let first = ids.first else { return }
        differences.append(
            "\(name) \(ids.prefix(10)): loaded \(lhs[first].map { "\($0)" } ?? "nothing"), "
                + "expected \(rhs[first].map { "\($0)" } ?? "nothing")")
    }
    compare("homes", actual.homes, expected.homes)
    compare("rooms", actual.rooms, expected.rooms)
    compare("zones", actual.zones, expected.zones)
    compare("accessories", actual.accessories, expected.accessories)
    compare("services", actual.services, expected.services)
    compare("characteristics", actual.characteristics, expected.characteristics)
    compare("service groups", actual.serviceGroups, expected.serviceGroups)
    compare("action sets", actual.actionSets, expected.actionSets)
    compare("triggers", actual.triggers, expected.triggers)
    if actual.homeOrder != expected.homeOrder {
        differences.append("home order: loaded \(actual.homeOrder), expected \(expected.homeOrder)")
    }
    if actual.nextID != expected.nextID {
        differences.append("next id: loaded \(actual.nextID), expected \(expected.nextID)")
    }
    let summary = differences.joined(separator: "; ")
    Issue.record("the graphs differ: \(summary)", sourceLocation: sourceLocation)
}

/// A graph's tables, to build variations through `HomeGraph(homes:…)` (the only way
/// to make what no operation makes yet: linked services, custom characteristics).
struct Tables {
    var homes: [ObjectID: Home]
    var rooms: [ObjectID: Room]
    var zones: [ObjectID: Zone]
    var accessories: [ObjectID: Accessory]
    var services: [ObjectID: AccessoryService]
    var characteristics: [ObjectID: Characteristic]
    var serviceGroups: [ObjectID: ServiceGroup]
    var actionSets: [ObjectID: ActionSet]
    var triggers: [ObjectID: Trigger]
    var homeOrder: [ObjectID]
    var nextID: ObjectID

    init(_ graph: HomeGraph) {
        homes = graph.homes
        rooms = graph.rooms
        zones = graph.zones
        accessories = graph.accessories
        services = graph.services
        characteristics = graph.characteristics
        serviceGroups = graph.serviceGroups
        actionSets = graph.actionSets
        triggers = graph.triggers
        homeOrder = graph.homeOrder
        nextID = graph.nextID
    }

    mutating func allocateID() -> ObjectID {
        defer { nextID += 1 }
        return nextID
    }

    func graph() throws -> HomeGraph {
        try HomeGraph(
            homes: Array(homes.values), rooms: Array(rooms.values), zones: Array(zones.values),
            accessories: Array(accessories.values), services: Array(services.values),
            characteristics: Array(characteristics.values), serviceGroups: Array(serviceGroups.values),
            actionSets: Array(actionSets.values), triggers: Array(triggers.values), homeOrder: homeOrder,
            nextID: nextID)
    }
}

func lamp(_ name: String, provider: String = "test") -> AccessorySpec {
    AccessorySpec(
        name: name, category: .lightbulb, manufacturer: "Acme", model: "L1", serialNumber: "S-\(name)",
        firmwareRevision: "1.0", provider: provider,
        services: [
            ServiceSpec(
                type: "Lightbulb", primary: true,
                characteristics: ["On": .bool(false), "Brightness": .int(40)])
        ])
}

func path(_ graph: HomeGraph, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> ObjectID {
    do {
        return try graph.resolve(path: path)
    } catch {
        Issue.record("\(path): \(error)", sourceLocation: sourceLocation)
        return 0
    }
}

/// A home with one of everything the model has: two homes (the second primary),
/// rooms in two zones at once, a bridge with bridged accessories, linked services,
/// a service group, action sets of every value type, a timer trigger and event
/// triggers with a value, a range and conditions, a disabled trigger, and custom
/// characteristics with every metadata field and value format.
func everythingHome() throws -> HomeGraph {
    var graph = HomeGraph()
    let home = try graph.addHome(name: "Home")
    let cabin = try graph.addHome(name: "Cabin")
    _ = try graph.setPrimaryHome(cabin)
    let living = try graph.addRoom(name: "Living Room", homeID: home)
    let kitchen = try graph.addRoom(name: "Kitchen", homeID: home)
    let loft = try graph.addRoom(name: "Loft", homeID: home)
    let downstairs = try graph.addZone(name: "Downstairs", homeID: home)
    let everywhere = try graph.addZone(name: "Everywhere", homeID: home)
    for (room, zone) in [(living, downstairs), (kitchen, downstairs), (kitchen, everywhere), (loft, everywhere)] {
        _ = try graph.addRoom(room, toZone: zone)
    }
    try graph.addAccessory(lamp("Lamp"), homeID: home, roomID: living, nowMs: 1_000)
    try graph.addAccessory(
        AccessorySpec(
            name: "Thermostat", category: .thermostat, manufacturer: "Acme", provider: "test",
            services: [
                ServiceSpec(
                    type: "Thermostat", primary: true,
                    characteristics: [
                        "TargetHeatingCoolingState": .uint(3), "TargetTemperature": .float(21.5),
                    ])
            ]), homeID: home, roomID: living, nowMs: 2_000)
    let bridge = try graph.addAccessory(
        AccessorySpec(name: "Hub", category: .bridge, provider: "hub"),
        homeID: home, nowMs: 3_000)
    try graph.addAccessory(
        AccessorySpec(
            name: "Switch", category: .switch, provider: "hub", bridgeID: bridge, isReachable: false,
            services: [ServiceSpec(type: "Switch", name: "Kettle Switch", hidden: true)]),
        homeID: home, roomID: kitchen, nowMs: 4_000)
    try graph.addAccessory(
        AccessorySpec(
            name: "Sensor", category: .sensor, provider: "hub", bridgeID: bridge,
            services: [ServiceSpec(type: "TemperatureSensor", characteristics: ["CurrentTemperature": .float(-4.3)])]),
        homeID: home, roomID: loft, nowMs: 5_000)
    try graph.addAccessory(lamp("Porch Light"), homeID: cabin, nowMs: 6_000)

    let group = try graph.addServiceGroup(name: "Lights", homeID: home)
    _ = try graph.addService(path(graph, "Home/Living Room/Lamp/Lightbulb"), toGroup: group)
    _ = try graph.addService(path(graph, "Home/Kitchen/Switch/Kettle Switch"), toGroup: group)
    _ = try graph.addServiceGroup(name: "Empty", homeID: home)

    let evening = try graph.addActionSet(name: "Evening", homeID: home)
    _ = try graph.addAction(
        characteristicID: path(graph, "Home/Living Room/Lamp/On"), value: .bool(true),
        toActionSet: evening)
    _ = try graph.addAction(
        characteristicID: path(graph, "Home/Living Room/Lamp/Brightness"), value: .int(30),
        toActionSet: evening)
    _ = try graph.addAction(
        characteristicID: path(graph, "Home/Living Room/Thermostat/TargetTemperature"),
        value: .float(19.5), toActionSet: evening)
    _ = try graph.addAction(
        characteristicID: path(graph, "Home/Living Room/Thermostat/TargetHeatingCoolingState"),
        value: .uint(1), toActionSet: evening)
    let night = try graph.addActionSet(name: "Good Night", kind: .sleep, homeID: home)
    _ = try graph.addActionSet(name: "Leaving", kind: .homeDeparture, homeID: home)

    let temperature = path(graph, "Home/Loft/Sensor/CurrentTemperature")
    let lampOn = path(graph, "Home/Living Room/Lamp/On")
    try graph.addTrigger(
        name: "Sunset", homeID: home,
        kind: .timer(fireDateMs: 1_700_000_000_000, timeZone: "Europe/Berlin", recurrence: .daily),
        actionSetIDs: [evening, night])
    try graph.addTrigger(
        name: "Cold", homeID: home,
        kind: .event(
            characteristicID: temperature, value: nil, rangeMin: -30, rangeMax: 5.5,
            conditions: [
                CharacteristicCondition(characteristicID: lampOn, comparison: .equal, value: .bool(false)),
                CharacteristicCondition(
                    characteristicID: path(graph, "Home/Living Room/Lamp/Brightness"),
                    comparison: .lessOrEqual, value: .int(50)),
            ]), actionSetIDs: [evening])
    try graph.addTrigger(
        name: "Lamp On", homeID: home,
        kind: .event(
            characteristicID: lampOn, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
        enabled: false)
    try graph.addTrigger(
        name: "Once", homeID: cabin,
        kind: .timer(fireDateMs: TriggerKind.fireDateRange.upperBound, timeZone: "UTC", recurrence: .none))

    // What no operation makes yet: linked services and custom characteristics.
    var tables = Tables(graph)
    let lampAccessory = path(graph, "Home/Living Room/Lamp")
    let lampServices = graph.accessories[lampAccessory]?.serviceIDs ?? []
    let lightbulb = lampServices[1]
    tables.services[lightbulb]?.linkedServiceIDs = [lampServices[0]]
    func custom(
        _ name: String, _ metadata: CharacteristicMetadata, _ value: CharacteristicValue?,
        properties: CharacteristicProperties = CharacteristicProperties(readable: true, writable: true)
    ) {
        let id = tables.allocateID()
        tables.characteristics[id] = Characteristic(
            id: id, serviceID: lightbulb, accessoryID: lampAccessory,
            type: TypeIdentifier(
                uuid: "ABCDEF01-0000-1000-8000-00000000000\(tables.characteristics.count % 10)",
                name: name),
            properties: properties, metadata: metadata, value: value, lastUpdatedMs: 7_000 + Int64(id))
        tables.services[lightbulb]?.characteristicIDs.append(id)
    }
    custom("Motto", CharacteristicMetadata(format: .string, maxLength: 200), .string("ünïcødé ✓ \"quoted\""))
    custom("Blob", CharacteristicMetadata(format: .data, maxLength: 4096), .data([0, 1, 2, 254, 255]))
    custom("Empty Blob", CharacteristicMetadata(format: .tlv8), .data([]))
    custom("Empty Text", CharacteristicMetadata(format: .string), .string(""))
    custom(
        "Mode", CharacteristicMetadata(format: .uint8, minValue: 0, maxValue: 3, minStep: 1, validValues: [0, 1, 3]),
        .uint(3))
    custom("Flags", CharacteristicMetadata(format: .uint32, validBits: 0b1011), .uint(0b1001))
    custom("Huge", CharacteristicMetadata(format: .uint64), .uint(UInt64.max))
    custom("Offset", CharacteristicMetadata(format: .int, unit: .seconds, minValue: -100, maxValue: 100), .int(-42))
    custom(
        "Level",
        CharacteristicMetadata(
            format: .float, unit: .percentage, minValue: 0, maxValue: 100,
            minStep: 0.5), .float(0.1 + 0.2))
    custom(
        "Unset", CharacteristicMetadata(format: .bool), nil,
        properties: CharacteristicProperties(
            readable: false, writable: true, supportsEventNotification: true,
            hidden: true, writeResponse: true))
    let motto = tables.services[lightbulb]!.characteristicIDs.first {
        tables.characteristics[$0]?.type.name == "Motto"
    }!
    let blob = tables.services[lightbulb]!.characteristicIDs.first { tables.characteristics[$0]?.type.name == "Blob" }!
    tables.actionSets[evening]?.actions.append(CharacteristicWriteAction(characteristicID: motto, value: .string("hi")))
    tables.actionSets[evening]?.actions.append(CharacteristicWriteAction(characteristicID: blob, value: .data([9])))
    return try tables.graph()
}

/// A deterministic random walk through layout operations, for persisting long
/// histories of changes. Operations that the model refuses (a name taken, …) are
/// skipped; every step changes something.
struct LayoutScript {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    private mutating func next() -> UInt64 {
        // SplitMix64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[Int(next() % UInt64(items.count))]
    }

    private mutating func pick<T>(_ table: [ObjectID: T]) -> ObjectID? {
        pick(table.keys.sorted())
    }

    /// The graph after each of `count` steps from `start`.
    mutating func history(from start: HomeGraph, steps count: Int) -> [HomeGraph] {
        var graphs = [start]
        var graph = start
        while graphs.count <= count {
            let before = graph
            do { try step(&graph) } catch { graph = before }
            if graph != before { graphs.append(graph) }
        }
        return graphs
    }

    /// One operation on `graph`, chosen at random.
    mutating func step(_ graph: inout HomeGraph) throws {
        let number = next() % 1000
        switch next() % 24 {
        case 0:
            try graph.addHome(name: "Home \(number)")
        case 1, 2:
            guard let home = pick(graph.homes) else { return }
            try graph.addRoom(name: "Room \(number)", homeID: home)
        case 3, 4, 5:
            guard let room = pick(graph.rooms), let home = graph.rooms[room]?.homeID else { return }
            let bridges = graph.accessories.values.filter { $0.homeID == home && $0.category == .bridge }
            var spec = lamp("Lamp \(number)")
            if number % 4 == 0 { spec = AccessorySpec(name: "Bridge \(number)", category: .bridge) }
            if number % 4 == 1, let bridge = pick(bridges.map(\.id).sorted()) { spec.bridgeID = bridge }
            try graph.addAccessory(spec, homeID: home, roomID: room, nowMs: Int64(number))
        case 6:
            guard let room = pick(graph.rooms) else { return }
            _ = try graph.renameRoom(room, to: "Renamed \(number)")
        case 7:
            guard let accessory = pick(graph.accessories) else { return }
            _ = try graph.renameAccessory(accessory, to: "Thing \(number)")
        case 8:
            guard let service = pick(graph.services) else { return }
            _ = try graph.renameService(service, to: "Service \(number)")
        case 9:
            guard let accessory = pick(graph.accessories), let home = graph.accessories[accessory]?.homeID,
                let room = pick(graph.homes[home]?.roomIDs ?? [])
            else { return }
            _ = try graph.assignAccessory(accessory, toRoom: room)
        case 10:
            guard let room = pick(graph.rooms) else { return }
            _ = try graph.removeRoom(room)
        case 11:
            guard let accessory = pick(graph.accessories) else { return }
            _ = try graph.removeAccessory(accessory)
        case 12:
            guard let home = pick(graph.homes) else { return }
            try graph.addZone(name: "Zone \(number)", homeID: home)
        case 13:
            guard let zone = pick(graph.zones), let home = graph.zones[zone]?.homeID,
                let room = pick(graph.homes[home]?.roomIDs ?? [])
            else { return }
            if graph.zones[zone]?.roomIDs.contains(room) == true {
                _ = try graph.removeRoom(room, fromZone: zone)
            } else {
                _ = try graph.addRoom(room, toZone: zone)
            }
        case 14:
            guard let zone = pick(graph.zones) else { return }
            _ = try graph.removeZone(zone)
        case 15:
            guard let home = pick(graph.homes) else { return }
            let group = try graph.addServiceGroup(name: "Group \(number)", homeID: home)
            let services = graph.services.keys.filter { graph.homeID(of: $0) == home }.sorted()
            for service in services.prefix(Int(number % 4)) { _ = try graph.addService(service, toGroup: group) }
        case 16:
            guard let group = pick(graph.serviceGroups) else { return }
            _ =
                number % 2 == 0
                ? try graph.removeServiceGroup(group) : try graph.renameServiceGroup(group, to: "G \(number)")
        case 17:
            guard let home = pick(graph.homes) else { return }
            let scene = try graph.addActionSet(name: "Scene \(number)", homeID: home)
            let brightness = graph.characteristics.values
                .filter { $0.type.name == "Brightness" && graph.homeID(of: $0.id) == home }.map(\.id).sorted()
            for id in brightness.prefix(3) {
                _ = try graph.addAction(characteristicID: id, value: .int(Int64(number % 100)), toActionSet: scene)
            }
        case 18:
            guard let scene = pick(graph.actionSets) else { return }
            _ = try graph.removeActionSet(scene)
        case 19:
            guard let home = pick(graph.homes) else { return }
            let scenes = graph.homes[home]?.actionSetIDs ?? []
            let on = graph.characteristics.values.filter { $0.type.name == "On" && graph.homeID(of: $0.id) == home }
                .map(\.id).sorted()
            if number % 2 == 0, let watched = pick(on) {
                let conditions = on.prefix(2).map {
                    CharacteristicCondition(characteristicID: $0, comparison: .notEqual, value: .bool(true))
                }
                try graph.addTrigger(
                    name: "Trigger \(number)", homeID: home,
                    kind: .event(
                        characteristicID: watched, value: .bool(true), rangeMin: nil, rangeMax: nil,
                        conditions: conditions), actionSetIDs: Array(scenes.prefix(2)))
            } else {
                try graph.addTrigger(
                    name: "Trigger \(number)", homeID: home,
                    kind: .timer(
                        fireDateMs: Int64(number) * 60_000, timeZone: "UTC", recurrence: .weekly),
                    actionSetIDs: Array(scenes.prefix(1)))
            }
        case 20:
            guard let trigger = pick(graph.triggers) else { return }
            switch number % 3 {
            case 0: _ = try graph.setTrigger(trigger, enabled: graph.triggers[trigger]?.isEnabled != true)
            case 1: _ = try graph.removeTrigger(trigger)
            default: _ = try graph.renameTrigger(trigger, to: "T \(number)")
            }
        case 21:
            guard let home = pick(graph.homes) else { return }
            _ = try graph.setPrimaryHome(home)
        case 22:
            guard graph.homes.count > 1, let home = pick(graph.homes) else { return }
            _ = try graph.removeHome(home)
        default:
            guard let home = pick(graph.homes) else { return }
            _ = try graph.renameHome(home, to: "Home \(number)")
        }
    }
}

extension HomeGraph {
    /// A value write as the daemon's store makes it: checked in place, then stored.
    @discardableResult
    mutating func write(
        _ value: CharacteristicValue, to id: ObjectID, nowMs: Int64,
        enforceWritable: Bool
    ) throws(HomeError) -> CharacteristicValue? {
        guard let checked = try checkWrite(value, to: id, enforceWritable: enforceWritable) else {
            throw HomeError(.notFound, "no characteristic with id \(id)")
        }
        return store(checked, nowMs: nowMs)
    }
}

/// How long, in seconds, a test waits for what it is waiting for (a file, an exit)
/// before it calls it a hang: only a safety net, since every wait ends as soon as its
/// condition holds; minutes, since on a busy machine a step may wait for a thread.
let patience: Double = 300

extension TimeLimitTrait.Duration {
    /// A test's time limit: a safety net against a hang, longer than the whole target
    /// takes on a loaded two-core machine (its tests run at once and share the cores).
    static var safetyNet: Self { .minutes(15) }
}
