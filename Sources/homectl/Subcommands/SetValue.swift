internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl set`: named so that it does not shadow `Swift.Set`.
struct SetValue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Write a characteristic value.",
        usage: "homectl set [<options>] <path> <value>",
        discussion: """
            VALUE is read in the characteristic's format: true/false/on/off/1/0 for bool, \
            an integer or a decimal number, text for strings, base64 for data; an enumerated \
            characteristic also takes its values' names (Open, Closed; `homectl show PATH` lists them). \
            With --if CURRENT, the value is written only if the characteristic holds CURRENT \
            (read like VALUE) when the daemon applies it; otherwise nothing is written and \
            homectl exits 9 (FAILED_PRECONDITION), naming the value it holds. GROUP/Type writes \
            that characteristic of every service in a service group.

            Examples:
              homectl set "Living Room/Lamp/Brightness" 40
              homectl set "Garage/Garage Door/TargetDoorState" open
              homectl set "Living Room/Lamp/Brightness" 60 --if 40
              homectl set "Downstairs Lights/On" off
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(help: "The characteristic, by PATH or id.", completion: .homeNames(.characteristic))
    var path: String

    // Every word that is not an option of ours, so that a negative number (-5) is a
    // value and not an unknown option; exactly one is taken.
    @Argument(
        parsing: .allUnrecognized, help: ArgumentHelp("The value to write.", valueName: "value"),
        completion: .homeNames(.valueOf(option: nil)))
    var values: [String] = []

    var value: String { values.first ?? "" }

    // Unconditional: the expected value may be negative (-5).
    @Option(
        name: .customLong("if"), parsing: .unconditional,
        help: ArgumentHelp("Write only if the characteristic holds this value now.", valueName: "current"))
    var expected: String?

    func validate() throws {
        guard values.count == 1 else {
            throw ValidationError(
                values.isEmpty
                    ? "Missing expected argument '<value>'"
                    : "set takes one value, not \(values.count) (\(values.joined(separator: " "))); "
                        + "quote a value with spaces")
        }
    }

    /// What one `set` did: a characteristic written, or a group's.
    private enum Written {
        case one(HomeGraph, CharacteristicValue, WriteResult)
        case group(HomeGraph, WriteCharacteristicsResponse)
    }

    /// One connection and one home read: the PATH resolved, the value parsed for
    /// the characteristic it names, written, and then shown.
    func run() async throws {
        let written = try await options.withClient { client throws(HomeError) -> Written in
            let graph = try await client.getHome().graph
            let id: ObjectID
            do throws(HomeError) {
                id = try graph.resolveCharacteristic(path)
            } catch {
                guard let group = try Self.groupCharacteristics(path, in: graph) else { throw error }
                let writes = try groupWrites(group, in: graph)
                return .group(graph, try await client.write(WriteCharacteristicsRequest(writes: writes)))
            }
            let value = try ValueParser.parse(self.value, for: graph.characteristics[id]!)
            let condition = try expected.map { text throws(HomeError) in
                WriteCondition(value: try ValueParser.parse(text, for: graph.characteristics[id]!))
            }
            return .one(graph, value, try await client.write(value, to: id, if: condition))
        }
        switch written {
        case .one(let graph, let value, let result): show(result, of: value, in: graph)
        case .group(let graph, let response): try show(response, in: graph)
        }
    }

    private func show(_ result: WriteResult, of written: CharacteristicValue, in graph: HomeGraph) {
        let fullPath = graph.path(of: result.characteristicID) ?? path
        if options.json {
            // The value as `get --json` shows it: typed, as written.
            Output.structured(
                JSON.object([
                    ("id", .uint(result.characteristicID)),
                    ("path", .string(fullPath)),
                    ("value", written.json),
                    ("seq", .uint(result.seq)),
                ]), options)
        } else {
            var characteristic = graph.characteristics[result.characteristicID]
            characteristic?.value = written
            let shown = characteristic?.displayValue ?? value
            Output.line(
                result.seq == 0 ? "\(fullPath) = \(shown) (unchanged)" : "\(fullPath) = \(shown) (seq \(result.seq))")
        }
    }
}

/// Turns what a person typed into a value of the characteristic's format. Range,
/// step and valid values are the daemon's to check, so its messages stay the one
/// source of truth.
enum ValueParser {
    static func parse(_ text: String, for characteristic: Characteristic) throws(HomeError) -> CharacteristicValue {
        let name = "characteristic \(characteristic.id) (\(characteristic.type.name))"
        switch characteristic.metadata.format {
        case .bool:
            switch text.lowercased() {
            case "true", "on", "yes", "1": return .bool(true)
            case "false", "off", "no", "0": return .bool(false)
            default: throw HomeError(.invalidArgument, "\(name) takes true or false, not '\(text)'")
            }
        case .uint8, .uint16, .uint32, .uint64:
            if let value = UInt64(text) { return .uint(value) }
            if let value = Int64(text) { return .int(value) }  // negative: let the daemon name the range
            if let valid = ValueNames.value(named: text, for: characteristic), valid >= 0 {
                return .uint(UInt64(valid))
            }
            let names = ValueNames.names(of: characteristic)
            if !names.isEmpty {
                throw HomeError(
                    .invalidArgument,
                    "\(name) takes one of "
                        + names.map { "\($0.name) (\($0.value))" }.joined(separator: ", ") + ", not '\(text)'")
            }
            throw HomeError(.invalidArgument, "\(name) takes a whole number, not '\(text)'")
        case .int:
            if let value = Int64(text) { return .int(value) }
            throw HomeError(.invalidArgument, "\(name) takes a whole number, not '\(text)'")
        case .float:
            if let value = Double(text), value.isFinite { return .float(value) }
            throw HomeError(.invalidArgument, "\(name) takes a number, not '\(text)'")
        case .string:
            return .string(text)
        case .tlv8, .data:
            guard let bytes = decodeBase64(text) else {
                throw HomeError(.invalidArgument, "\(name) takes base64 data, not '\(text)'")
            }
            return .data(bytes)
        }
    }

    /// Base64 as people type it: padding may be left off.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        let padded = text + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        return Data(base64Encoded: padded).map { [UInt8]($0) }
    }
}
