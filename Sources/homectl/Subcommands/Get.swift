internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read characteristic values, or all of an accessory's.",
        discussion: """
            Values come from the daemon's cache unless --fresh asks the accessory. Enumerated values show \
            their names (CurrentDoorState: Closing; -o json keeps the number and adds value_name). A value \
            of an unreachable accessory is its last known one, marked so, and the exit code is then 75 \
            (14 means homed itself did not answer).

            Examples:
              homectl get "Living Room/Lamp"                 # every readable value of the lamp
              homectl get "Garage/Garage Door/CurrentDoorState" -o json
            """)

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
        var anyUnreachable = false
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
            let reachable = characteristic.flatMap { graph.accessories[$0.accessoryID]?.isReachable } ?? true
            var shown = characteristic?.displayValue ?? read.value?.description ?? Characteristic.noValueYet
            if !reachable {
                anyUnreachable = true
                shown +=
                    read.lastUpdatedMs == 0
                    ? " (unreachable, never read)" : " (unreachable, last updated \(Self.clock(read.lastUpdatedMs)))"
            }
            rows.append([fullPath, shown])
            items.append(
                .object([
                    ("id", .uint(read.characteristicID)),
                    ("path", .string(fullPath)),
                    ("value", read.value?.json ?? .null),
                    ("value_name", characteristic?.valueName.map { .string($0) } ?? .null),
                    ("reachable", .bool(reachable)),
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
        // The values were shown, but one is only the last known: a script can tell
        // a device that does not answer (75) from a daemon that does not (14).
        if anyUnreachable { throw ExitCode(Self.unreachableExitCode) }
    }

    /// sysexits' EX_TEMPFAIL: try again later.
    static let unreachableExitCode: Int32 = 75

    /// "02:06:12", local time.
    static func clock(_ ms: Int64) -> String {
        String(WatchText.clock(ms).prefix(8))
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
