import Foundation

/// The HAP reference JSON in `Tests/Fixtures/hap`, found relative to this file so the
/// tests run from any checkout, with `apple-additions.json` merged over it as
/// Scripts/generate-catalog.py merges it.
enum HAPFixture {
    static let directory = URL(fileURLWithPath: #filePath)
        .resolvingSymlinksInPath()  // a package that links Tests/HomeModelTests in from elsewhere
        .deletingLastPathComponent()  // HomeModelTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Fixtures/hap", isDirectory: true)

    // The fixture's own key names.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Characteristic: Decodable {
        var Format: String
        var Permissions: [String]
        var UUID: String
        var ValidValues: [String: Int64]?
        var ValidBits: [String: String]?
        var minValue: Double?
        var maxValue: Double?
        var minStep: Double?
        var stepValue: Double?
        var unit: String?
        var MaximumLength: Int?
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Service: Decodable {
        var UUID: String
        var RequiredCharacteristics: [String]
        var OptionalCharacteristics: [String]
    }

    static func data(_ file: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(file))
    }

    /// What Apple's metadata lists and the base JSON omits.
    struct Additions: Decodable {
        var characteristics: [String: Characteristic]
        var optional: [String: [String]]
    }

    static func additions() throws -> Additions {
        try JSONDecoder().decode(Additions.self, from: data("apple-additions.json"))
    }

    static func characteristics() throws -> [String: Characteristic] {
        let base = try JSONDecoder().decode([String: Characteristic].self, from: data("characteristics.json"))
        return base.merging(try additions().characteristics) { old, _ in old }
    }

    static func services() throws -> [String: Service] {
        var services = try JSONDecoder().decode([String: Service].self, from: data("services.json"))
        for (name, added) in try additions().optional {
            services[name]?.OptionalCharacteristics += added
        }
        return services
    }

    /// Every key used by any entry of a JSON file, so a test can notice a key the catalog ignores.
    static func keys(_ file: String) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: data(file)) as? [String: [String: Any]] ?? [:]
        return Set(object.values.flatMap(\.keys))
    }
}
