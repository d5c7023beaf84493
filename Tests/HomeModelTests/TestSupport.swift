import Testing

@testable import HomeModel

/// Runs an operation on a copy of the graph that must fail with exactly `expected`
/// and leave the copy as it was: a failed operation changes nothing.
func expectFailure(
    _ graph: HomeGraph, _ expected: HomeError, sourceLocation: SourceLocation = #_sourceLocation,
    _ operation: (inout HomeGraph) throws -> Void
) {
    var copy = graph
    do {
        try operation(&copy)
        Issue.record("expected \(expected), but the operation succeeded", sourceLocation: sourceLocation)
    } catch {
        #expect(error as? HomeError == expected, sourceLocation: sourceLocation)
    }
    // A Bool, so a failure does not print both whole graphs.
    let unchanged = copy == graph
    #expect(unchanged, "the failed operation changed the graph", sourceLocation: sourceLocation)
}

/// Resolves a path that must resolve (a test bug otherwise).
func id(_ graph: HomeGraph, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> ObjectID {
    do {
        return try graph.resolve(path: path)
    } catch {
        Issue.record("\(path): \(error)", sourceLocation: sourceLocation)
        return 0
    }
}

/// A one-home graph: "Home" with rooms "Living Room" and "Kitchen".
func smallHome() throws -> (graph: HomeGraph, home: ObjectID, livingRoom: ObjectID, kitchen: ObjectID) {
    var graph = HomeGraph()
    let home = try graph.addHome(name: "Home")
    let livingRoom = try graph.addRoom(name: "Living Room", homeID: home)
    let kitchen = try graph.addRoom(name: "Kitchen", homeID: home)
    return (graph, home, livingRoom, kitchen)
}

/// A lamp: a Lightbulb with On and Brightness.
func lampSpec(_ name: String = "Lamp", on: Bool = false, brightness: Int64 = 50) -> AccessorySpec {
    AccessorySpec(
        name: name, category: .lightbulb, manufacturer: "Acme", model: "L1", serialNumber: "S1",
        firmwareRevision: "1.0", provider: "test",
        services: [
            ServiceSpec(
                type: "Lightbulb", primary: true,
                characteristics: ["On": .bool(on), "Brightness": .int(brightness)])
        ])
}

extension HomeGraph {
    /// A write as the daemon's store makes it: checked in place, then stored (with
    /// the precise error `validateWrite` gives for an id that is no characteristic).
    @discardableResult
    mutating func write(
        _ value: CharacteristicValue, to id: ObjectID, nowMs: Int64,
        enforceWritable: Bool
    ) throws(HomeError) -> CharacteristicValue? {
        guard let checked = try checkWrite(value, to: id, enforceWritable: enforceWritable) else {
            _ = try validateWrite(value, to: id, enforceWritable: enforceWritable)
            throw HomeError(.notFound, "no characteristic with id \(id)")
        }
        return store(checked, nowMs: nowMs)
    }
}

extension TimeLimitTrait.Duration {
    /// A test's time limit: a safety net against a hang, longer than the whole target
    /// takes on a loaded two-core machine (its tests run at once and share the cores).
    static var safetyNet: Self { .minutes(15) }
}
