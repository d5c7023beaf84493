internal import Foundation
public import HomeModel
internal import Yams

/// A simulated home as a file describes it (YAML): the home and rooms it lives in,
/// and accessories with their services, initial values and behaviours.
///
/// ```yaml
/// home: Demo Home
/// rooms: [Living Room, Hallway]
/// tick_ms: 1000
/// accessories:
///   - key: HMD-0005
///     name: Front Door Lock
///     room: Hallway
///     category: door-lock
///     services:
///       - type: LockMechanism
///         characteristics: {LockCurrentState: 1, LockTargetState: 1}
///     simulate:
///       - kind: lock
///         delay_ticks: 2
/// ```
///
/// `Demo/demo-home.yaml` in this module is the demo home `homed --demo` serves.
public struct SimulationFile: Sendable, Decodable {
    /// The provider id the simulation registers as.
    public var provider: String
    /// The home its accessories go to (made when missing); nil for the primary home.
    public var home: String?
    /// Rooms made in that home when missing.
    public var rooms: [String]
    /// How often the behaviours step, in milliseconds.
    public var tickMs: Int
    public var accessories: [Accessory]

    public struct Accessory: Sendable, Decodable {
        public var key: String
        public var name: String
        /// A HAP category in kebab case ("door-lock", "garage-door-opener"), or its number.
        public var category: String
        public var room: String?
        public var manufacturer: String?
        public var model: String?
        public var serialNumber: String?
        public var firmwareRevision: String?
        public var services: [Service]
        public var simulate: [Behaviour]

        enum CodingKeys: String, CodingKey {
            case key, name, category, room, manufacturer, model, services, simulate
            case serialNumber = "serial_number"
            case firmwareRevision = "firmware_revision"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try container.decode(String.self, forKey: .key)
            name = try container.decode(String.self, forKey: .name)
            category = try container.decodeIfPresent(String.self, forKey: .category) ?? "other"
            room = try container.decodeIfPresent(String.self, forKey: .room)
            manufacturer = try container.decodeIfPresent(String.self, forKey: .manufacturer)
            model = try container.decodeIfPresent(String.self, forKey: .model)
            serialNumber = try container.decodeIfPresent(String.self, forKey: .serialNumber)
            firmwareRevision = try container.decodeIfPresent(String.self, forKey: .firmwareRevision)
            services = try container.decode([Service].self, forKey: .services)
            simulate = try container.decodeIfPresent([Behaviour].self, forKey: .simulate) ?? []
        }
    }

    public struct Service: Sendable, Decodable {
        /// A catalog service type, by name or UUID.
        public var type: String
        public var name: String?
        public var key: String?
        public var primary: Bool
        /// Initial values by characteristic type name; the type's other required
        /// characteristics are added with their default values.
        public var characteristics: [String: ScalarValue]

        enum CodingKeys: String, CodingKey { case type, name, key, primary, characteristics }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            key = try container.decodeIfPresent(String.self, forKey: .key)
            primary = try container.decodeIfPresent(Bool.self, forKey: .primary) ?? false
            characteristics = try container.decodeIfPresent([String: ScalarValue].self, forKey: .characteristics) ?? [:]
        }
    }

    /// One behaviour of an accessory: `kind` and the parameters it takes (see `Behaviour.Kind`).
    public struct Behaviour: Sendable, Decodable, Hashable {
        public var kind: String
        /// The characteristic a random walk moves.
        public var characteristic: String?
        public var min: Double?
        public var max: Double?
        public var step: Double?
        /// Every this many ticks (a press, a toggle, an outage).
        public var every: Int?
        /// For this many ticks (motion held, an outage).
        public var forTicks: Int?
        /// How many ticks a movement (lock, door) takes.
        public var delayTicks: Int?
        /// A garage door is obstructed on every this-many-th movement.
        public var obstructEvery: Int?

        enum CodingKeys: String, CodingKey {
            case kind, characteristic, min, max, step, every
            case forTicks = "for_ticks"
            case delayTicks = "delay_ticks"
            case obstructEvery = "obstruct_every"
        }
    }

    /// A YAML scalar: what a characteristic's initial value is written as.
    public enum ScalarValue: Sendable, Decodable, Hashable {
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let int = try? container.decode(Int64.self) {
                self = .int(int)
            } else if let double = try? container.decode(Double.self) {
                self = .double(double)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case provider, home, rooms, accessories
        case tickMs = "tick_ms"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        provider = try container.decodeIfPresent(String.self, forKey: .provider) ?? "simulator"
        home = try container.decodeIfPresent(String.self, forKey: .home)
        rooms = try container.decodeIfPresent([String].self, forKey: .rooms) ?? []
        tickMs = try container.decodeIfPresent(Int.self, forKey: .tickMs) ?? 1_000
        accessories = try container.decode([Accessory].self, forKey: .accessories)
    }

    /// Reads and checks a simulation file.
    ///
    /// - Throws: INVALID_ARGUMENT naming the file and what is wrong (the YAML
    ///   error's line and column, or the key path and the problem).
    public static func load(path: String) throws(HomeError) -> SimulationFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw HomeError(.notFound, "cannot read the simulation file \(path): \(error.localizedDescription)")
        }
        return try parse(text, source: path)
    }

    /// Parses a simulation from YAML text; `source` names it in errors.
    public static func parse(_ text: String, source: String) throws(HomeError) -> SimulationFile {
        let file: SimulationFile
        do {
            file = try YAMLDecoder().decode(SimulationFile.self, from: text)
        } catch let error as DecodingError {
            throw HomeError(.invalidArgument, "\(source): \(describe(error))")
        } catch {
            throw HomeError(.invalidArgument, "\(source): \(error)")
        }
        do throws(HomeError) {
            _ = try file.providedAccessories()
            for accessory in file.accessories {
                for behaviour in accessory.simulate { _ = try BehaviourKind(behaviour, accessory: accessory.key) }
            }
        } catch {
            throw HomeError(.invalidArgument, "\(source): \(error.message)")
        }
        return file
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
                .drop { $0 == "." }.description
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "missing key \"\(key.stringValue)\"" + (at.isEmpty ? "" : " in \(at)")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(path(context)): expected \(type) (\(context.debugDescription))"
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

extension SimulationFile {
    /// The demo home shipped with homed (`Demo/demo-home.yaml`).
    public static func demo() throws(HomeError) -> SimulationFile {
        guard let url = Bundle.module.url(forResource: "demo-home", withExtension: "yaml") else {
            throw HomeError(.notFound, "the demo home file is missing from this installation of homed")
        }
        return try load(path: url.path)
    }
}
