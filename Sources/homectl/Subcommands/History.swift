internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl history`: past events from the daemon's kept history, oldest first.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show past events: values, reachability, layout changes, scenes and triggers, and who made them.",
        discussion: """
            TARGETs narrow the events: a characteristic (Room/Accessory/Characteristic), an accessory, a room \
            or a home, by name or id; none means every event. Without --since, the last --limit events (20) \
            are shown; with it, every event since then (at most --limit if given). Times may be how long ago \
            (10m, 2h, 3d), a date (2026-11-20), a date and time (2026-11-20T14:00) or a time today (14:02). \
            --plot draws a numeric characteristic's values over the period on the terminal. A characteristic \
            removed since is still answered by its id. -o json, yaml, csv, table or wide for the events as \
            objects (the fields of homectl watch --json).

            Examples:
              homectl history "Hall/Back Door" --since 1d
              homectl history --kind layout --since 7d            # who changed the layout
              homectl history "Bedroom/Thermostat/CurrentTemperature" --since 2d --plot
              homectl history Kitchen --since 2026-11-20 --until 2026-11-21 -o csv > kitchen.csv
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(
        help: ArgumentHelp("A characteristic, accessory, room or home (name or id); repeatable.", valueName: "target"),
        completion: .homeNames(.characteristicOrAccessory))
    var targets: [String] = []

    @Option(help: "From this time: how long ago (10m, 2h, 3d), a date, a date and time, or a time today.")
    var since: String?
    @Option(help: "Until this time (same forms as --since).")
    var until: String?
    @Option(
        name: .customLong("kind"),
        help: ArgumentHelp(
            "Only these event kinds: value, reachability, layout, primary-home, action-set, trigger, audit (the "
                + "daemon's notes: providers connected and gone, calls refused; shown only when asked for); "
                + "repeatable, or a list (value,reachability).", valueName: "kind"))
    var kindArguments: [String] = []
    @Option(help: "At most this many events (default: 20 without --since, all with it).")
    var limit: Int?
    @Flag(help: "Draw the values of one numeric characteristic over the period.")
    var plot = false
    @Option(
        help: ArgumentHelp(
            "One numeric characteristic's rollups instead of its events: count, min, mean, max and last per 5m or 1h.",
            valueName: "5m|1h"))
    var every: String?

    var kinds: [String] {
        kindArguments.flatMap { $0.split(separator: ",") }.map { String($0.filter { !$0.isWhitespace }) }
    }

    func validate() throws {
        for kind in kinds where EventKind(rawValue: kind) == nil {
            throw ValidationError(
                "unknown event kind '\(kind)'; use \(EventKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let limit, limit <= 0 { throw ValidationError("--limit takes a positive count, not \(limit)") }
        if plot && targets.count != 1 { throw ValidationError("--plot draws one characteristic: name exactly one") }
        if let every {
            guard every == "5m" || every == "1h" else {
                throw ValidationError("--every takes 5m or 1h (the rollups the daemon keeps), not '\(every)'")
            }
            guard targets.count == 1, !plot else {
                throw ValidationError("--every reads one characteristic's rollups: name exactly one, without --plot")
            }
        }
    }

    func run() async throws {
        let nowMs = TimeArgument.nowMs()
        let sinceMs: Int64?
        let untilMs: Int64?
        do throws(HomeError) {
            (sinceMs, untilMs) = try times(nowMs: nowMs)
        } catch {
            throw Failure(error)
        }
        if let every {
            try await rollups(every: every == "5m" ? 300_000 : 3_600_000, sinceMs: sinceMs, untilMs: untilMs)
            return
        }
        let (graph, events, ownConnection) = try await options.withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            let filter = try Self.filter(targets, kinds: kinds.compactMap(EventKind.init(rawValue:)), in: graph)
            let events = try await Self.read(
                client: client, filter: filter, sinceMs: sinceMs, untilMs: untilMs,
                limit: limit ?? (sinceMs == nil ? 20 : nil))
            return (graph, events, client.connectionID)
        }
        let names = Names(graph: graph)
        if plot {
            do throws(HomeError) {
                try HistoryPlot.draw(
                    events, target: targets[0], names: names, sinceMs: sinceMs, untilMs: untilMs ?? nowMs)
            } catch {
                throw Failure(error)
            }
            return
        }
        let journal = ""
        let items = events.map { eventLine($0, names: names, journal: journal, ownConnection: ownConnection) }
        if Output.list(items, columns: Self.columns, options) { return }
        if events.isEmpty {
            Output.error("homectl: no events\(sinceMs.map { " since \(isoTime($0))" } ?? "") match")
        }
        for event in events {
            Output.line(HistoryText.line(event, names: names, nowMs: nowMs, ownConnection: ownConnection))
        }
    }

    /// `--every`: the rollups of one characteristic, oldest first (the last day
    /// without --since).
    private func rollups(every widthMs: Int64, sinceMs: Int64?, untilMs: Int64?) async throws {
        let start = sinceMs ?? TimeArgument.nowMs() - 86_400_000
        let (graph, characteristicID, points) = try await options.withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            let filter = try Self.filter(targets, kinds: [], in: graph)
            guard filter.characteristicIDs.count == 1 else {
                throw HomeError(
                    .invalidArgument, "--every reads a characteristic's rollups; \(quote(targets[0])) is not one")
            }
            var request = ReadHistoryRequest(
                filter: filter, sinceMs: start, untilMs: untilMs ?? 0, limit: 10_000, rollupMs: widthMs)
            var points: [RollupPoint] = []
            while true {
                let page = try await client.readHistory(request)
                points += page.rollups
                guard page.rollups.count == 10_000, let last = page.rollups.last else { break }
                request.sinceMs = last.startMs + 1
            }
            return (graph, filter.characteristicIDs[0], points)
        }
        let names = Names(graph: graph)
        let items: [JSON] = points.map { point in
            .object([
                ("start", .string(isoTime(point.startMs))), ("count", .int(point.count)), ("min", .double(point.min)),
                ("mean", .double(point.mean)), ("max", .double(point.max)), ("last", .double(point.last)),
                ("last_time", .string(isoTime(point.lastMs))),
            ])
        }
        let columns = [
            Column("START", "start"), Column("COUNT", "count"), Column("MIN", "min"), Column("MEAN", "mean"),
            Column("MAX", "max"), Column("LAST", "last"), Column("LAST TIME", "last_time", wide: true),
        ]
        if Output.list(items, columns: columns, options) { return }
        if points.isEmpty {
            throw Failure(HomeError(.notFound, "no rollups of \(names.place(of: characteristicID)) in this period"))
        }
        func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int64(value)) : String((value * 100).rounded() / 100)
        }
        var rows = [["START", "COUNT", "MIN", "MEAN", "MAX", "LAST"]]
        for point in points {
            rows.append([
                HistoryText.date(point.startMs) + " " + String(WatchText.clock(point.startMs).prefix(5)),
                String(point.count), number(point.min), number(point.mean), number(point.max), number(point.last),
            ])
        }
        Output.line(names.place(of: characteristicID) + ", per \(widthMs == 300_000 ? "5 minutes" : "hour"):")
        for line in Output.table(rows) { Output.line(line) }
    }

    private func times(nowMs: Int64) throws(HomeError) -> (Int64?, Int64?) {
        let sinceMs = try since.map { text throws(HomeError) in
            try TimeArgument.past(text, option: "--since", nowMs: nowMs)
        }
        let untilMs = try until.map { text throws(HomeError) in
            guard let ms = TimeArgument.parse(text, nowMs: nowMs) else {
                throw HomeError(.invalidArgument, "--until '\(text)' is not a time (see --since for the forms)")
            }
            return ms
        }
        if let sinceMs, let untilMs, untilMs <= sinceMs {
            throw HomeError(
                .invalidArgument,
                "--until \(isoTime(untilMs)) is not after --since \(isoTime(sinceMs)): no time between")
        }
        return (sinceMs, untilMs)
    }

    static var columns: [Column] {
        [
            Column("TIME", "time"), Column("KIND", "kind"), Column("ROOM", "room"), Column("ACCESSORY", "accessory"),
            Column("CHARACTERISTIC", "characteristic"), Column("VALUE", "value"),
            Column("BY", "origin") { item in item["origin"]?["name"]?.cell ?? "" },
            Column("SEQ", "seq", wide: true), Column("NAME", "name", wide: true),
        ]
    }

    /// The events, oldest first: with a start, every one from it (up to `limit`);
    /// without, the last `limit`.
    static func read(
        client: HomeClient, filter: SubscriptionFilter, sinceMs: Int64?, untilMs: Int64?, limit: Int?
    ) async throws(HomeError) -> [HomeEvent] {
        var events: [HomeEvent] = []
        let newestFirst = sinceMs == nil
        var request = ReadHistoryRequest(
            filter: filter, sinceMs: sinceMs ?? 0, untilMs: untilMs ?? 0,
            limit: UInt32(min(limit ?? 1000, 1000)), newestFirst: newestFirst)
        while true {
            let page = try await client.readHistory(request)
            events += page.events
            if let limit, events.count >= limit {
                events.removeLast(events.count - limit)
                break
            }
            guard page.nextSeq != 0 else { break }
            if newestFirst { request.beforeSeq = page.nextSeq } else { request.afterSeq = page.nextSeq }
        }
        return newestFirst ? events.reversed() : events
    }

    /// Targets as a filter: each the first of characteristic, accessory, room or
    /// home its name resolves to; a bare number is taken as any object's id, so
    /// that a removed characteristic's history is still reached.
    /// Why `target` names no one characteristic, when it names several.
    private static func ambiguity(of target: String, in graph: HomeGraph) -> HomeError? {
        do {
            _ = try graph.resolveCharacteristic(target)
            return nil
        } catch {
            return error.code == .notFound ? nil : error
        }
    }

    static func filter(_ targets: [String], kinds: [EventKind], in graph: HomeGraph) throws(HomeError)
        -> SubscriptionFilter
    {
        var filter = SubscriptionFilter()
        filter.kinds = kinds
        for target in targets {
            if let id = ObjectID(target) {
                if graph.accessories[id] != nil {
                    filter.accessoryIDs.append(id)
                } else if graph.rooms[id] != nil {
                    filter.roomIDs.append(id)
                } else if graph.homes[id] != nil {
                    filter.homeIDs.append(id)
                } else {
                    filter.characteristicIDs.append(id)
                }
            } else if let id = try? graph.resolveCharacteristic(target) {
                filter.characteristicIDs.append(id)
            } else if let id = try? graph.resolveAccessory(target) {
                filter.accessoryIDs.append(id)
            } else if let id = try? graph.resolveRoom(target) {
                filter.roomIDs.append(id)
            } else if let id = try? graph.resolveHome(target) {
                filter.homeIDs.append(id)
            } else {
                // A path naming several characteristics (an accessory with two of that
                // type, each button of a remote) says so, as `get` does.
                if let ambiguity = Self.ambiguity(of: target, in: graph) { throw ambiguity }
                throw HomeError(
                    .notFound, "no characteristic, accessory, room or home is named \(quote(target))")
            }
        }
        return filter
    }
}

/// History lines for people: the date when it is not today.
enum HistoryText {
    static func line(_ event: HomeEvent, names: Names, nowMs: Int64, ownConnection: UInt64) -> String {
        let line = WatchText.event(event, names: names, ownConnection: ownConnection)
        let day = date(event.timeMs)
        return day == date(nowMs) ? "           " + line : day + " " + line
    }

    /// "2026-11-20", local.
    static func date(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }

    /// "12 min ago", "3 h ago", "2 days ago", "just now".
    static func ago(_ ms: Int64, nowMs: Int64) -> String {
        let seconds = max(0, (nowMs - ms) / 1000)
        switch seconds {
        case ..<10: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<(48 * 3600): return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86400) days ago"
        }
    }
}
