internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl last`: when a characteristic last changed, to what, and by whom.
struct Last: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "When a characteristic last changed, to what, and who changed it.",
        discussion: """
            Answers from the daemon's kept history: "Hall/Back Door/ContactSensorState: Not Detected, 12 min \
            ago, at 14:02:11 on 2026-11-26, by provider zigbee2mqtt". An accessory names its characteristics' \
            latest change. Exits 1 (NOT_FOUND: 5) when the history holds no change of it.

            Examples:
              homectl last "Hall/Back Door/ContactSensorState"
              homectl last "Front Door Lock" -o json
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(
        help: ArgumentHelp(
            "A characteristic (Room/Accessory/Characteristic) or an accessory, by name or id.",
            valueName: "path"),
        completion: .homeNames(.characteristicOrAccessory))
    var path: String

    func run() async throws {
        let nowMs = TimeArgument.nowMs()
        let (graph, event, ownConnection) = try await options.withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            var filter = try History.filter([path], kinds: [.valueChanged], in: graph)
            if filter.roomIDs.count + filter.homeIDs.count > 0 {
                throw HomeError(.invalidArgument, "\(quote(path)) is not a characteristic or an accessory")
            }
            filter.kinds = [.valueChanged]
            let page = try await History.read(client: client, filter: filter, sinceMs: nil, untilMs: nil, limit: 1)
            return (graph, page.last, client.connectionID)
        }
        guard let event, case .value(let change) = event.body else {
            throw Failure(HomeError(.notFound, "the history holds no change of \(quote(path))"))
        }
        let names = Names(graph: graph)
        if options.json {
            Output.structured(eventLine(event, names: names, journal: "", ownConnection: ownConnection), options)
            return
        }
        let by = WatchText.origin(event.origin, ownConnection: ownConnection)
            .trimmingPrefix("  ").trimmingPrefix("(").dropLast()
        Output.line(
            "\(names.place(of: change.characteristicID)): \(names.display(change.value, of: change.characteristicID)), "
                + "\(HistoryText.ago(event.timeMs, nowMs: nowMs)), at \(WatchText.clock(event.timeMs).prefix(8)) on "
                + HistoryText.date(event.timeMs) + (by.isEmpty ? "" : ", \(by)"))
    }
}
