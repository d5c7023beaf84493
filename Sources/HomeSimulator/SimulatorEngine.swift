public import HomeClient
public import HomeModel

/// The simulated devices of a simulation file and their behaviours, with no I/O:
/// `tick` steps every behaviour and returns what changed; `write` applies what a
/// client wrote (and the simulator controls). `SimulatorProvider` connects it to
/// the daemon.
public struct SimulatorEngine: Sendable {
    /// What one step changed: values (occurrences included), and accessories that
    /// became reachable or unreachable, by key.
    public struct Changes: Sendable, Equatable {
        public var values: [CharacteristicRef: CharacteristicValue] = [:]
        public var reachability: [String: Bool] = [:]
        /// Writes the simulation refused (a press of an accessory with no button).
        public var refused: [CharacteristicRef: HomeError] = [:]

        public var isEmpty: Bool { values.isEmpty && reachability.isEmpty }
    }

    private(set) var devices: [String: SimulatedDevice] = [:]
    private(set) var tickCount = 0

    /// - Throws: INVALID_ARGUMENT for a behaviour the file gets wrong.
    public init(_ file: SimulationFile) throws(HomeError) {
        let provided = try file.providedAccessories()
        for (entry, accessory) in zip(file.accessories, provided) {
            var refs: [String: CharacteristicRef] = [:]
            var values: [CharacteristicRef: CharacteristicValue] = [:]
            var ranks: [String: Int] = [:]
            for service in accessory.services {
                let typeName = HAPCatalog.service(service.type)?.name ?? service.type
                var serviceName = service.key ?? ""
                if serviceName.isEmpty {
                    let rank = ranks[typeName, default: 0] + 1
                    ranks[typeName] = rank
                    serviceName = rank == 1 ? typeName : "\(typeName)#\(rank)"
                }
                for characteristic in service.characteristics {
                    let info = HAPCatalog.characteristic(characteristic.type)
                    let name = info?.name ?? characteristic.customName ?? characteristic.type
                    let ref = CharacteristicRef(accessoryKey: accessory.key, service: serviceName, characteristic: name)
                    if refs[name] == nil { refs[name] = ref }
                    if let value = characteristic.value ?? info.flatMap(Self.initialValue) { values[ref] = value }
                }
            }
            var behaviours: [BehaviourKind] = []
            for behaviour in entry.simulate { behaviours.append(try BehaviourKind(behaviour, accessory: entry.key)) }
            devices[accessory.key] = SimulatedDevice(
                key: accessory.key, refs: refs, values: values, behaviours: behaviours)
        }
    }

    /// The value a characteristic of the catalog starts with when the file gives none.
    private static func initialValue(_ info: CharacteristicTypeInfo) -> CharacteristicValue? {
        guard info.permissions.readable, !info.isEventOnly else { return nil }
        return info.defaultMetadata.defaultValue
    }

    /// Every current value (what the provider registers, and answers reads with).
    public func value(of ref: CharacteristicRef) -> CharacteristicValue? {
        devices[ref.accessoryKey]?.values[ref]
    }

    public func isReachable(_ key: String) -> Bool {
        devices[key]?.offlineUntilTick == nil
    }

    /// Steps every behaviour once.
    public mutating func tick(random: inout some RandomNumberGenerator) -> Changes {
        tickCount += 1
        var changes = Changes()
        for key in devices.keys.sorted() {
            guard var device = devices[key] else { continue }
            let before = device.values
            let wasOffline = device.offlineUntilTick != nil
            for behaviour in device.behaviours { behaviour.step(&device, tick: tickCount, random: &random) }
            if let until = device.offlineUntilTick, until <= tickCount { device.offlineUntilTick = nil }
            for (ref, value) in device.values where before[ref] != value { changes.values[ref] = value }
            for (ref, value) in device.occurrences { changes.values[ref] = value }
            device.occurrences.removeAll()
            let isOffline = device.offlineUntilTick != nil
            if wasOffline != isOffline { changes.reachability[key] = !isOffline }
            devices[key] = device
        }
        return changes
    }

    /// Applies client writes to the devices. The simulator's controls act at once:
    /// the returned changes are what to report now.
    public mutating func write(_ values: [CharacteristicRef: CharacteristicValue]) -> Changes {
        var changes = Changes()
        for (ref, value) in values {
            guard var device = devices[ref.accessoryKey] else { continue }
            switch ref.characteristic {
            case SimulatorControls.press.name:
                guard device.refs["ProgrammableSwitchEvent"] != nil else {
                    changes.refused[ref] = HomeError(
                        .failedPrecondition,
                        "accessory \"\(device.key)\" has no button to press (no ProgrammableSwitchEvent)")
                    continue
                }
                device.press()
                for (pressed, occurrence) in device.occurrences { changes.values[pressed] = occurrence }
                device.occurrences.removeAll()
            case SimulatorControls.offline.name:
                let seconds = Int(value.numericValue ?? 0)
                if seconds > 0 {
                    if device.offlineUntilTick == nil { changes.reachability[device.key] = false }
                    device.offlineUntilTick = tickCount + Swift.max(1, seconds * 1_000 / Swift.max(1, tickMsHint))
                } else if device.offlineUntilTick != nil {
                    device.offlineUntilTick = nil
                    changes.reachability[device.key] = true
                }
            default:
                device.values[ref] = value
            }
            devices[ref.accessoryKey] = device
        }
        return changes
    }

    /// How long a tick is, for the offline control's seconds.
    public var tickMsHint = 1_000
}
