internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read characteristic values.",
        discussion: "Values come from the daemon's cache unless --fresh asks the accessory.")

    @OptionGroup var options: ConnectionOptions

    @Flag(help: "Ask the accessory for a fresh value instead of the daemon's cache.")
    var fresh = false

    @Argument(help: "Characteristics, by PATH or id.")
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("name at least one characteristic to read") }
    }

    func run() async throws {
        let (graph, response) = try await options.withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            let ids = try paths.map { path throws(HomeError) in try graph.resolveCharacteristic(path) }
            return (graph, try await client.read(ids, fresh: fresh))
        }
        var failure: HomeError?
        var rows: [[String]] = []
        var items: [JSON] = []
        for (path, read) in zip(paths, response.reads) {
            let fullPath = graph.path(of: read.characteristicID) ?? path
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
            Output.line(JSON.array(items).text)
        } else {
            for line in Output.table(rows) { Output.line(line) }
        }
        // Each failed item was shown once, on stderr or in the JSON; the exit code is the first one's.
        if let failure { throw Failure(failure, shown: true) }
    }
}
