internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl show ACCESSORY`: one accessory's service and characteristic tree, with
/// each characteristic's properties, metadata and value: everything a person needs
/// to write a value that is accepted.
struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an accessory's services and characteristics, with their properties, metadata and values.",
        discussion: "ACCESSORY is an id, Room/Accessory, or its name alone when no other accessory shares it.")

    @OptionGroup var options: ConnectionOptions

    @Argument(help: "The accessory.", completion: .homeNames(.accessory))
    var accessory: String

    func run() async throws {
        let (graph, id) = try await options.withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            return (graph, try graph.resolveAccessory(accessory))
        }
        let shown = graph.accessories[id]!
        if options.json {
            Output.structured(Self.json(shown, in: graph), options)
        } else {
            for line in Self.lines(shown, in: graph) { Output.line(line) }
        }
    }

    // MARK: Text

    static func lines(_ accessory: Accessory, in graph: HomeGraph) -> [String] {
        var lines = ["\(accessory.name) (id \(accessory.id))"]
        let room = graph.rooms[accessory.roomID]?.name ?? "?"
        lines.append(
            "  home \(quote(graph.homeName(accessory.homeID))) · room \(quote(room)) · "
                + "\(accessory.category.displayName) · " + (accessory.isReachable ? "reachable" : "unreachable"))
        let details = [
            accessory.manufacturer.isEmpty ? nil : "manufacturer \(accessory.manufacturer)",
            accessory.model.isEmpty ? nil : "model \(accessory.model)",
            accessory.serialNumber.isEmpty ? nil : "serial \(accessory.serialNumber)",
            accessory.firmwareRevision.isEmpty ? nil : "firmware \(accessory.firmwareRevision)",
            accessory.provider.isEmpty ? nil : "provider \(accessory.provider)",
        ].compactMap { $0 }
        if !details.isEmpty { lines.append("  " + details.joined(separator: " · ")) }
        if let bridgeID = accessory.bridgeID {
            lines.append("  bridged by \(quote(graph.accessories[bridgeID]?.name ?? "?")) (id \(bridgeID))")
        }
        if !accessory.bridgedAccessoryIDs.isEmpty {
            let names = accessory.bridgedAccessoryIDs.map { "\(graph.accessories[$0]?.name ?? "?") (id \($0))" }
            lines.append("  bridges " + names.joined(separator: ", "))
        }
        for service in accessory.serviceIDs.compactMap({ graph.services[$0] }) {
            var flags: [String] = []
            if service.isPrimary { flags.append("primary") }
            if service.isHidden { flags.append("hidden") }
            if !service.isUserInteractive { flags.append("not user-interactive") }
            if !service.linkedServiceIDs.isEmpty {
                flags.append("linked to " + service.linkedServiceIDs.map { "id \($0)" }.joined(separator: ", "))
            }
            lines.append(
                "  \(service.type.name) \(quote(service.name)) (id \(service.id))"
                    + flags.map { " · " + $0 }.joined())
            let rows = service.characteristicIDs.compactMap { graph.characteristics[$0] }.map { characteristic in
                [
                    characteristic.type.name, value(characteristic),
                    permissions(characteristic.properties).joined(separator: " "),
                    constraints(characteristic), "id \(characteristic.id)",
                ]
            }
            lines += Output.table(rows, indent: "    ")
        }
        return lines
    }

    /// The value with its unit, and an enumerated value's HAP name.
    static func value(_ characteristic: Characteristic) -> String {
        // Identify and other write-only types hold nothing to show.
        guard characteristic.properties.readable else { return "—" }
        let shown = characteristic.displayValue
        if let number = characteristic.value?.numericValue, !characteristic.metadata.validValues.isEmpty,
            let name = characteristic.typeInfo?.name(ofValidValue: Int64(number))
        {
            return "\(shown) (\(name))"
        }
        return shown
    }

    /// HAP's abbreviations: pr, pw, ev, wr, and "hidden".
    static func permissions(_ properties: CharacteristicProperties) -> [String] {
        var codes: [String] = []
        if properties.readable { codes.append("pr") }
        if properties.writable { codes.append("pw") }
        if properties.supportsEventNotification { codes.append("ev") }
        if properties.writeResponse { codes.append("wr") }
        if properties.hidden { codes.append("hidden") }
        return codes
    }

    /// "int 0…100 step 1 percentage", "uint8 values 0 Off, 1 Heat", "string max 64 bytes".
    static func constraints(_ characteristic: Characteristic) -> String {
        let metadata = characteristic.metadata
        var parts = [metadata.format.rawValue]
        if metadata.minValue != nil || metadata.maxValue != nil {
            parts.append("\(metadata.minValue.map(number) ?? "")…\(metadata.maxValue.map(number) ?? "")")
        }
        if let step = metadata.minStep { parts.append("step \(number(step))") }
        if metadata.unit != .none { parts.append(metadata.unit.rawValue) }
        if !metadata.validValues.isEmpty {
            let info = characteristic.typeInfo
            parts.append(
                "values "
                    + metadata.validValues.map { value in
                        info?.name(ofValidValue: value).map { "\(value) \($0)" } ?? String(value)
                    }.joined(separator: ", "))
        }
        if metadata.validBits != 0 { parts.append("bits 0x" + String(metadata.validBits, radix: 16)) }
        if let maxLength = metadata.maxLength { parts.append("max \(maxLength) bytes") }
        return parts.joined(separator: " ")
    }

    // MARK: JSON

    static func json(_ accessory: Accessory, in graph: HomeGraph) -> JSON {
        .object([
            ("id", .uint(accessory.id)),
            ("name", .string(accessory.name)),
            ("home_id", .uint(accessory.homeID)),
            ("home", .string(graph.homeName(accessory.homeID))),
            ("room_id", .uint(accessory.roomID)),
            ("room", .string(graph.rooms[accessory.roomID]?.name ?? "")),
            ("category", .string(String(describing: accessory.category))),
            ("manufacturer", .string(accessory.manufacturer)),
            ("model", .string(accessory.model)),
            ("serial_number", .string(accessory.serialNumber)),
            ("firmware_revision", .string(accessory.firmwareRevision)),
            ("reachable", .bool(accessory.isReachable)),
            ("bridge_id", accessory.bridgeID.map { .uint($0) } ?? .null),
            ("bridged_accessory_ids", .array(accessory.bridgedAccessoryIDs.map { .uint($0) })),
            ("provider", .string(accessory.provider)),
            (
                "services",
                .array(
                    accessory.serviceIDs.compactMap { graph.services[$0] }.map { service in
                        .object([
                            ("id", .uint(service.id)),
                            ("type", .string(service.type.uuid)),
                            ("type_name", .string(service.type.name)),
                            ("name", .string(service.name)),
                            ("primary", .bool(service.isPrimary)),
                            ("user_interactive", .bool(service.isUserInteractive)),
                            ("hidden", .bool(service.isHidden)),
                            ("linked_service_ids", .array(service.linkedServiceIDs.map { .uint($0) })),
                            (
                                "characteristics",
                                .array(
                                    service.characteristicIDs.compactMap { graph.characteristics[$0] }
                                        .map(json))
                            ),
                        ])
                    })
            ),
        ])
    }

    static func json(_ characteristic: Characteristic) -> JSON {
        let metadata = characteristic.metadata
        let info = characteristic.typeInfo
        return .object([
            ("id", .uint(characteristic.id)),
            ("type", .string(characteristic.type.uuid)),
            ("type_name", .string(characteristic.type.name)),
            ("permissions", .array(permissions(characteristic.properties).map { .string($0) })),
            ("format", .string(metadata.format.rawValue)),
            ("unit", metadata.unit == .none ? .null : .string(metadata.unit.rawValue)),
            ("min", metadata.minValue.map { .double($0) } ?? .null),
            ("max", metadata.maxValue.map { .double($0) } ?? .null),
            ("step", metadata.minStep.map { .double($0) } ?? .null),
            (
                "valid_values",
                .array(
                    metadata.validValues.map { value in
                        .object([
                            ("value", .int(value)),
                            ("name", info?.name(ofValidValue: value).map { .string($0) } ?? .null),
                        ])
                    })
            ),
            ("valid_bits", metadata.validBits == 0 ? .null : .uint(metadata.validBits)),
            ("max_length", metadata.maxLength.map { .uint(UInt64($0)) } ?? .null),
            ("value", characteristic.value?.json ?? .null),
            ("updated", characteristic.lastUpdatedMs == 0 ? .null : .string(isoTime(characteristic.lastUpdatedMs))),
        ])
    }
}

/// A number as people write it: "100", "0.5".
func number(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}
