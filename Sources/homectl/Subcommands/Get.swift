internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read characteristic values, or all of an accessory's.",
        discussion: "Values come from the daemon's cache unless --fresh asks the accessory.")

    @OptionGroup var options: ConnectionOptions

    @Flag(help: "Ask the accessory for a fresh value instead of the daemon's cache.")
    var fresh = false

    @Argument(
        help: ArgumentHelp(
            "Characteristics, by PATH or id; an accessory (Lamp, Room/Accessory or its id) for all of its readable ones.",
            valueName: "path"),
        completion: .homeNames(.characteristicOrAccessory))
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("name at least one characteristic to read") }
    }

    func run() async throws {
        let (graph, targets, response) = try await options.withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            var targets: [ObjectID] = []
            for path in paths { targets += try Self.characteristics(named: path, in: graph) }
            return (graph, targets, try await client.read(targets, fresh: fresh))
        }
        var failure: HomeError?
        var rows: [[String]] = []
        var items: [JSON] = []
        for (id, read) in zip(targets, response.reads) {
            let fullPath = graph.path(of: read.characteristicID) ?? String(id)
            if let error = read.error {
                failure = failure ?? error
                if !options.json { Output.error("homectl: \(fullPath): \(error.message)") }
                items.append(
                    .object([
                        ("id", .uint(read.characteristicID)),
                        ("path", .string(fullPath)),
                        ("error", errorJSON(error)),
                    ]))
                continue
            }
            var characteristic = graph.characteristics[read.characteristicID]
            characteristic?.value = read.value
            rows.append([fullPath, characteristic?.displayValue ?? read.value?.description ?? "—"])
            items.append(
                .object([
                    ("id", .uint(read.characteristicID)),
                    ("path", .string(fullPath)),
                    ("value", read.value?.json ?? .null),
                    ("updated", read.lastUpdatedMs == 0 ? .null : .string(isoTime(read.lastUpdatedMs))),
                ]))
        }
        if options.json {
            Output.structured(.array(items), options)
        } else {
            for line in Output.table(rows) { Output.line(line) }
        }
        // Each failed item was shown once, on stderr or in the JSON; the exit code is the first one's.
        if let failure { throw Failure(failure, shown: true) }
    }

    /// A characteristic's id, or every readable characteristic of an accessory (in
    /// the order of its services), so that `get Lamp` reads the whole lamp.
    static func characteristics(named path: String, in graph: HomeGraph) throws(HomeError) -> [ObjectID] {
        let notACharacteristic: HomeError
        do {
            return [try graph.resolveCharacteristic(path)]
        } catch {
            notACharacteristic = error
        }
        guard let accessoryID = try? graph.resolveAccessory(path), let accessory = graph.accessories[accessoryID] else {
            throw notACharacteristic
        }
        let readable = accessory.serviceIDs.compactMap { graph.services[$0] }.flatMap(\.characteristicIDs)
            .filter { graph.characteristics[$0]?.properties.readable == true }
        guard !readable.isEmpty else {
            throw HomeError(.invalidArgument, "accessory \(quote(accessory.name)) has no readable characteristic")
        }
        return readable
    }
}
