internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl watch`: every change as one line, flushed per event: for a person on
/// a terminal, JSON objects (schema in docs/homectl.md, "homectl watch output") when
/// piped or with --json.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stream changes: lines for people on a terminal, JSON lines when piped or with --json.",
        discussion: """
            One line per event, flushed as it arrives. On a terminal: the time, the place, the value \
            with its unit and who changed it. Piped, or with --json: one JSON object per line; see \
            docs/homectl.md for the schema. When the daemon comes back after going away, a note on stderr \
            says whether the watch resumed or must resync. -o text keeps the lines for people in a \
            pipe. Exits 0 when the reader of its output goes away or -C events were written, 4 when \
            -W seconds pass, 15 when it must resync and --no-resync was given. Reconnects and \
            resumes when the daemon restarts.

            Examples:
              homectl watch --room Kitchen --kind value,reachability
              homectl watch | jq -c '{accessory, characteristic, value}'
              homectl watch -o text --accessory "Front Door Lock" | grep Unlocked
              homectl watch --snapshot -C 1 --characteristic "Living Room/Lamp/On"
            """)

    @OptionGroup var options: ConnectionOptions

    @Option(name: .customLong("home"), help: "Only this home (PATH or id); repeatable.")
    var homes: [String] = []
    @Option(
        name: .customLong("room"), help: "Only accessories in this room; repeatable.", completion: .homeNames(.room))
    var rooms: [String] = []
    @Option(name: .customLong("zone"), help: "Only accessories in rooms of this zone; repeatable.")
    var zones: [String] = []
    @Option(
        name: .customLong("accessory"), help: "Only this accessory; repeatable.",
        completion: .homeNames(.accessory))
    var accessories: [String] = []
    @Option(name: .customLong("service"), help: "Only this service; repeatable.")
    var services: [String] = []
    @Option(
        name: .customLong("characteristic"), help: "Only this characteristic; repeatable.",
        completion: .homeNames(.characteristic))
    var characteristics: [String] = []
    @Option(name: .customLong("type"), help: "Only characteristics of this type (name or UUID); repeatable.")
    var types: [String] = []
    @Option(
        name: .customLong("kind"),
        help: ArgumentHelp(
            "Only these event kinds: value, reachability, layout, primary-home, action-set, trigger; repeatable, "
                + "or a list (value,reachability).", valueName: "kind"))
    var kindArguments: [String] = []

    /// --kind's values, a comma-separated list each.
    var kinds: [String] {
        kindArguments.flatMap { $0.split(separator: ",") }.map { String($0.filter { !$0.isWhitespace }) }
    }

    @Flag(help: "First print the current state of everything watched (kind \"snapshot\"), then changes.")
    var snapshot = false
    @Option(
        help: ArgumentHelp(
            "Start in the past: from a time (10m, 2h, 2026-11-20, 14:02) with the events kept since, then live; "
                + "or, with --journal, after this sequence number.", valueName: "time|seq"))
    var since: String?

    /// --since as a sequence number (with --journal).
    var sinceSeq: UInt64? { journal == nil ? nil : since.flatMap(UInt64.init) }
    @Option(help: "The journal id --since refers to.")
    var journal: String?
    @Flag(help: "Leave out changes this watch's own connection made.")
    var excludeOwn = false
    @Flag(help: "Exit with code 15 instead of accepting a resync (a fresh snapshot after lost events).")
    var noResync = false
    @Flag(help: "Also print stream markers (subscribed, heartbeat).")
    var markers = false
    @Option(name: .customShort("C"), help: "Exit after this many events.")
    var count: Int?
    @Option(name: .customShort("W"), help: "Exit with code 4 after this many seconds.")
    var timeout: Double?
    @Option(help: "When this watch falls behind: coalesce, gap or disconnect.")
    var policy: String = "coalesce"
    @Option(help: "Heartbeat interval in milliseconds (0 = none).")
    var heartbeatMs: UInt32 = 0

    @Option(
        help: "At most one value per characteristic per this many milliseconds; the latest wins (0 = every change).")
    var minIntervalMs: UInt32 = 0

    func validate() throws {
        if options.format != .text && options.format != .json {
            throw ValidationError(
                "watch prints lines for people or JSON lines (-o json), not -o \(options.format.rawValue)")
        }
        if let count, count <= 0 { throw ValidationError("-C takes a positive count, not \(count)") }
        if let timeout, !(timeout > 0) {
            throw ValidationError("-W takes a positive number of seconds, not \(timeout)")
        }
        guard SlowConsumerPolicy(rawValue: policy) != nil else {
            throw ValidationError("--policy takes coalesce, gap or disconnect, not '\(policy)'")
        }
        for kind in kinds where EventKind(rawValue: kind) == nil {
            throw ValidationError(
                "unknown event kind '\(kind)'; use \(EventKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let since, journal != nil, UInt64(since) == nil {
            throw ValidationError("--since with --journal takes a sequence number, not '\(since)'")
        }
        if let since, journal == nil, UInt64(since) != nil {
            throw ValidationError(
                "--since \(since): a sequence number needs --journal (they only mean something within one journal); "
                    + "for a time write a unit, as in 10m or 2h")
        }
        if snapshot && since != nil && journal == nil {
            throw ValidationError("--snapshot shows the state now; --since starts in the past: give one")
        }
    }

    enum Outcome: Error {
        case done
        case timedOut
        case readerGone
        case resyncRefused(String)
        case failed(HomeError)
    }

    func run() async throws {
        let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
        let outcome: Outcome = await withTaskGroup(of: Outcome.self) { group in
            group.addTask { await stream() }
            group.addTask {
                // Notice a closed pipe even while no events flow.
                while !Task.isCancelled {
                    if Output.readerIsGone { return .readerGone }
                    try? await Task.sleep(for: .milliseconds(200))
                }
                return .done
            }
            if let deadline {
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    return .timedOut
                }
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        switch outcome {
        case .done, .readerGone:
            return
        case .timedOut:
            throw ExitCode(4)
        case .resyncRefused(let reason):
            Output.error("homectl: resync required (\(reason)) and --no-resync was given")
            throw ExitCode(15)
        case .failed(let error):
            throw Failure(options.explained(error))
        }
    }

    /// Subscribes and prints until an outcome ends the watch. The subscription
    /// reconnects and resumes by itself when the daemon goes away.
    private func stream() async -> Outcome {
        let policy = SlowConsumerPolicy(rawValue: policy) ?? .coalesce
        var sinceTimeMs: Int64?
        if let since, journal == nil {
            do throws(HomeError) {
                sinceTimeMs = try TimeArgument.past(since, option: "--since", nowMs: TimeArgument.nowMs())
            } catch {
                return .failed(error)
            }
        }
        // The home the subscription's filter was resolved in, by connection.
        let homeRead = HomeRead()
        let changes = HomeClient.resumingSubscription(
            to: options.socket, name: options.clientName,
            cursor: StreamCursor(journalID: journal ?? "", resumeSeq: sinceSeq)
        ) { [sinceTimeMs, homeRead] client throws(HomeError) in
            // Names are resolved again on every connection: a restarted daemon may
            // have another layout. The lines' names start from this same read.
            let home = try await client.getHome()
            homeRead.latest.withLock { $0 = (client.connectionID, home.graph) }
            return SubscribeRequest(
                filter: try filter(in: home.graph), snapshot: snapshot, excludeOwn: excludeOwn,
                policy: policy, heartbeatMs: heartbeatMs, minIntervalMs: minIntervalMs, sinceTimeMs: sinceTimeMs)
        }
        // Lines for a person when stdout is a terminal and JSON was not asked for,
        // or when -o text says so (into a pipe too: `watch -o text | grep Lamp`).
        let forPeople = !options.json && (isatty(1) == 1 || options.textAskedFor)
        var names: Names?
        var namesConnection = 0
        var reconnected = false
        var printed = 0
        // Snapshot pages wait for their snapshot-end marker, whose sequence number
        // is the one every snapshot line stands at (the pages do not carry it).
        var pendingSnapshot: [(Characteristic, journal: String)] = []
        // --timeout bounds the wait for the daemon's first answer; after that, the
        // watch lasts as long as it is told (-W) and resumes across restarts.
        var watchdog = options.startWatchdog()
        defer { watchdog?.cancel() }
        do {
            var iterator = changes.makeAsyncIterator()
            while let element = try await iterator.next() {
                watchdog?.cancel()
                watchdog = nil
                let message = element.message
                if names == nil || namesConnection != element.connection {
                    reconnected = names != nil
                    let own = element.client.connectionID
                    let read = homeRead.latest.withLock { $0 }.flatMap { $0.connectionID == own ? $0.graph : nil }
                    if let read {
                        names = Names(graph: read)
                    } else {
                        names = Names(graph: try await element.client.getHome().graph)
                    }
                    namesConnection = element.connection
                }
                // Layout events change names: read the home once for them all (a
                // message may carry many), before their lines.
                if message.events.contains(where: { if case .layout = $0.body { true } else { false } }),
                    let fresh = try? await element.client.getHome()
                {
                    names = Names(graph: fresh.graph)
                }
                // After a reconnection, the first message past the subscription's own
                // markers tells whether the stream resumed or must resync.
                if reconnected, message.marker.map({ $0.kind != .subscribed && $0.kind != .heartbeat }) ?? true {
                    reconnected = false
                    if let marker = message.marker, marker.kind == .resync {
                        Output.error(
                            "homectl: reconnected to homed, which could not resume this watch (\(marker.reason)): "
                                + "a fresh snapshot follows")
                    } else {
                        Output.error("homectl: reconnected to homed; the watch resumes where it stood")
                    }
                }
                if let marker = message.marker, marker.kind == .resync {
                    if noResync { return .resyncRefused(marker.reason) }
                    // A resync's fresh snapshot replaces one not yet ended.
                    pendingSnapshot.removeAll()
                }
                pendingSnapshot += message.snapshot.map { ($0, message.journalID) }
                if let marker = message.marker {
                    if marker.kind == .snapshotEnd {
                        for (characteristic, journal) in pendingSnapshot {
                            let line =
                                forPeople
                                ? WatchText.snapshot(characteristic, names: names!)
                                : snapshotLine(characteristic, names: names!, journal: journal, seq: marker.seq).text
                            guard Output.line(line) else { return .readerGone }
                        }
                        pendingSnapshot.removeAll()
                    }
                    if markers || (marker.kind != .subscribed && marker.kind != .heartbeat) {
                        let line =
                            forPeople ? WatchText.marker(marker) : markerLine(marker, journal: message.journalID).text
                        guard Output.line(line) else { return .readerGone }
                    }
                }
                for event in message.events {
                    let own = element.client.connectionID
                    let line =
                        forPeople
                        ? WatchText.event(event, names: names!, ownConnection: own)
                        : eventLine(event, names: names!, journal: message.journalID, ownConnection: own).text
                    guard Output.line(line) else { return .readerGone }
                    printed += 1
                    if let count, printed >= count { return .done }
                }
            }
            return .done
        } catch let error as HomeError {
            return .failed(error)
        } catch {
            return .failed(HomeError(.unavailable, "\(error)"))
        }
    }

    private func filter(in graph: HomeGraph) throws(HomeError) -> SubscriptionFilter {
        // Each option by its kind's own rules: an accessory may be named alone (Lamp),
        // a room without its home, a service by its accessory.
        func ids(_ texts: [String], _ resolve: (String) throws(HomeError) -> ObjectID) throws(HomeError) -> [ObjectID] {
            try texts.map { text throws(HomeError) in try resolve(text) }
        }
        return SubscriptionFilter(
            homeIDs: try ids(homes) { text throws(HomeError) in try graph.resolveHome(text) },
            roomIDs: try ids(rooms) { text throws(HomeError) in try graph.resolveRoom(text) },
            zoneIDs: try ids(zones) { text throws(HomeError) in try graph.resolveNamed(text, .zone) },
            accessoryIDs: try ids(accessories) { text throws(HomeError) in try graph.resolveAccessory(text) },
            serviceIDs: try ids(services) { text throws(HomeError) in try graph.resolveService(text) },
            characteristicIDs: try characteristics.map { path throws(HomeError) in try graph.resolveCharacteristic(path)
            },
            characteristicTypes: types, kinds: kinds.compactMap(EventKind.init(rawValue:)))
    }
}

/// The last home a watch's subscription request was built from, with the
/// connection it was read on: its lines' names start from it.
private final class HomeRead: Sendable {
    let latest = Mutex<(connectionID: UInt64, graph: HomeGraph)?>(nil)
}
