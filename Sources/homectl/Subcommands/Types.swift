internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl types`: the standard HAP catalog the daemon validates against.
struct Types: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Browse the catalog of characteristic and service types.",
        discussion: """
            With --json, one JSON object per line and per type: {"kind":"characteristic", uuid, name, \
            format, permissions, unit, min, max, step, valid_values, valid_bits, max_length, event_only} \
            or {"kind":"service", uuid, name, required_characteristics, optional_characteristics}.
            """)

    @OptionGroup var options: ConnectionOptions

    @Flag(help: "Only characteristic types.")
    var characteristics = false

    @Flag(help: "Only service types.")
    var services = false

    @Argument(help: "Only these types, by name or UUID (short or full).")
    var names: [String] = []

    func run() async throws {
        let catalog = try await options.withClient { client throws(HomeError) in try await client.listTypes() }
        let both = characteristics == services
        var characteristicTypes = both || characteristics ? catalog.characteristicTypes : []
        var serviceTypes = both || services ? catalog.serviceTypes : []
        if !names.isEmpty {
            characteristicTypes = characteristicTypes.filter { type in
                names.contains { Self.names($0, type.name, type.uuid) }
            }
            serviceTypes = serviceTypes.filter { type in names.contains { Self.names($0, type.name, type.uuid) } }
            if characteristicTypes.isEmpty && serviceTypes.isEmpty {
                throw Failure(HomeError(.notFound, "no type is named " + names.map(quote).joined(separator: " or ")))
            }
        }
        if options.format == .yaml {
            Output.structured(.array(characteristicTypes.map(Self.json) + serviceTypes.map(Self.json)), options)
            return
        }
        if options.json {
            // One object per line: the catalog is long, and a script reads it line by line.
            for type in characteristicTypes { Output.line(Self.json(type).text) }
            for type in serviceTypes { Output.line(Self.json(type).text) }
            return
        }
        if !characteristicTypes.isEmpty {
            Output.line("Characteristic types (\(characteristicTypes.count))")
            let rows = characteristicTypes.map { type in
                [
                    type.name, Self.short(type.uuid), Show.permissions(type.permissions).joined(separator: " "),
                    Self.constraints(type),
                ]
            }
            for line in Output.table(rows, indent: "  ") { Output.line(line) }
        }
        if !serviceTypes.isEmpty {
            if !characteristicTypes.isEmpty { Output.line("") }
            Output.line("Service types (\(serviceTypes.count))")
            let rows = serviceTypes.map { type in
                [
                    type.name, Self.short(type.uuid),
                    "required: " + type.requiredCharacteristics.joined(separator: ", ")
                        + (type.optionalCharacteristics.isEmpty
                            ? ""
                            : "; optional: " + type.optionalCharacteristics.joined(separator: ", ")),
                ]
            }
            for line in Output.table(rows, indent: "  ") { Output.line(line) }
        }
    }

    /// Whether what the user typed names this type: its name (case and spaces
    /// ignored) or its UUID, full or short.
    private static func names(_ text: String, _ name: String, _ uuid: String) -> Bool {
        name.lowercased().filter { $0 != " " } == text.lowercased().filter { $0 != " " }
            || HAPCatalog.fullUUID(text) == uuid
    }

    /// HAP's short form of an Apple-defined UUID ("25"), else the full UUID.
    private static func short(_ uuid: String) -> String {
        guard uuid.hasSuffix(HAPCatalog.appleUUIDSuffix) else { return uuid }
        let head = uuid.prefix(8).drop { $0 == "0" }
        return head.isEmpty ? "0" : String(head)
    }

    private static func constraints(_ type: CharacteristicTypeInfo) -> String {
        var parts = [type.format.rawValue]
        if type.minValue != nil || type.maxValue != nil {
            parts.append("\(type.minValue.map(number) ?? "")…\(type.maxValue.map(number) ?? "")")
        }
        if let step = type.minStep { parts.append("step \(number(step))") }
        if type.unit != .none { parts.append(type.unit.rawValue) }
        if !type.validValues.isEmpty {
            parts.append("values " + type.validValues.map { "\($0.value) \($0.name)" }.joined(separator: ", "))
        }
        if !type.validBits.isEmpty {
            parts.append("bits " + type.validBits.map { "\($0.bit) \($0.name)" }.joined(separator: ", "))
        }
        if let maxLength = type.maxLength { parts.append("max \(maxLength) bytes") }
        if type.isEventOnly { parts.append("event only") }
        return parts.joined(separator: " ")
    }

    static func json(_ type: CharacteristicTypeInfo) -> JSON {
        .object([
            ("kind", .string("characteristic")),
            ("uuid", .string(type.uuid)),
            ("name", .string(type.name)),
            ("format", .string(type.format.rawValue)),
            ("permissions", .array(Show.permissions(type.permissions).map { .string($0) })),
            ("unit", type.unit == .none ? .null : .string(type.unit.rawValue)),
            ("min", type.minValue.map { .double($0) } ?? .null),
            ("max", type.maxValue.map { .double($0) } ?? .null),
            ("step", type.minStep.map { .double($0) } ?? .null),
            (
                "valid_values",
                .array(type.validValues.map { .object([("value", .int($0.value)), ("name", .string($0.name))]) })
            ),
            (
                "valid_bits",
                .array(type.validBits.map { .object([("bit", .int(Int64($0.bit))), ("name", .string($0.name))]) })
            ),
            ("max_length", type.maxLength.map { .uint(UInt64($0)) } ?? .null),
            ("event_only", .bool(type.isEventOnly)),
        ])
    }

    static func json(_ type: ServiceTypeInfo) -> JSON {
        .object([
            ("kind", .string("service")),
            ("uuid", .string(type.uuid)),
            ("name", .string(type.name)),
            ("required_characteristics", .array(type.requiredCharacteristics.map { .string($0) })),
            ("optional_characteristics", .array(type.optionalCharacteristics.map { .string($0) })),
        ])
    }
}
