import Foundation
import HomeClient
import HomeModel
import HomeTesting
import HomeWire
import Synchronization
import Testing

// The conformance list (Tests/Conformance/scenarios.json; its README says what each
// step does) run with the Swift HomeClient against a real homed. The C runner
// (Clients/c/tests/conformance.c) and the Python one
// (Clients/python/tests/test_conformance.py) execute the same list.

@Suite("the conformance list, with the Swift client", .timeLimit(.safetyNet))
struct ConformanceTests {
    @Test("every scenario of Tests/Conformance/scenarios.json passes")
    func everyScenario() async throws {
        let list = try ConformanceList.load()
        let daemon = try DaemonProcess(arguments: list.daemonArguments)
        var passed = 0
        for scenario in list.scenarios {
            let run = ConformanceRun(socketPath: daemon.socketPath)
            for (index, step) in scenario.steps.enumerated() {
                do {
                    try await run.perform(step)
                } catch {
                    Issue.record("\(scenario.name), step \(index + 1) (\(step["op"]?.string ?? "?")): \(error)")
                    break
                }
                if index == scenario.steps.count - 1 { passed += 1 }
            }
            await run.close()
        }
        #expect(passed == list.scenarios.count)
        #expect(list.scenarios.count >= 14)
    }

    @Test("every scenario a remote home can carry passes through homed-nats-remote's socket")
    func throughTheRemoteSocket() async throws {
        let list = try ConformanceList.load()
        // A provider session is not carried over NATS (its first call is UNIMPLEMENTED,
        // Clients/bridges/nats/tests/test_nats_conformance.py checks that).
        let providerSteps: Set<String> = ["provider_open", "provider_register", "provider_expect_write"]
        let carried = list.scenarios.filter { scenario in
            !scenario.steps.contains { providerSteps.contains($0["op"]?.string ?? "") }
        }
        // In homed's place: a real homed, nats-server, homed-nats and homed-nats-remote
        // serving the socket asked for (nats-server and the bridge from .venv, on PATH).
        let standIn = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Clients/bridges/nats/tests/remote_daemon.py").path
        let daemon = try DaemonProcess(
            arguments: list.daemonArguments, command: ["/usr/bin/env", "python3", standIn])
        var passed = 0
        for scenario in carried {
            let run = ConformanceRun(socketPath: daemon.socketPath)
            for (index, step) in scenario.steps.enumerated() {
                do {
                    try await run.perform(step)
                } catch {
                    Issue.record("\(scenario.name), step \(index + 1) (\(step["op"]?.string ?? "?")): \(error)")
                    break
                }
                if index == scenario.steps.count - 1 { passed += 1 }
            }
            await run.close()
        }
        #expect(passed == carried.count)
        #expect(carried.count >= 12)
    }
}

/// The scenarios file.
struct ConformanceList {
    struct Scenario {
        let name: String
        let steps: [JSON]
    }

    let daemonArguments: [String]
    let scenarios: [Scenario]

    static func load() throws -> ConformanceList {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Conformance/scenarios.json")
        let json = try JSONDecoder().decode(JSON.self, from: Data(contentsOf: url))
        return ConformanceList(
            daemonArguments: (json["daemon"]?.array ?? []).compactMap(\.string),
            scenarios: (json["scenarios"]?.array ?? []).map {
                Scenario(name: $0["name"]?.string ?? "?", steps: $0["steps"]?.array ?? [])
            })
    }
}

/// A JSON value, as the scenarios file holds them.
enum JSON: Decodable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    subscript(key: String) -> JSON? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }
    var int: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }
    var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }
    var isTrue: Bool {
        if case .bool(true) = self { return true }
        return false
    }
    var array: [JSON]? {
        if case .array(let values) = self { return values }
        return nil
    }
    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return "\(value)"
        case .int(let value): return "\(value)"
        case .double(let value): return "\(value)"
        case .string(let value): return "\"\(value)\""
        case .array(let values): return "[\(values.map(\.description).joined(separator: ", "))]"
        case .object(let fields): return "{\(fields.map { "\($0.key): \($0.value)" }.joined(separator: ", "))}"
        }
    }
}

/// Why a step failed.
struct StepFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One stream's messages, or its end (nil: OK), as its task received them.
enum StreamItem<Message: Sendable>: Sendable {
    case message(Message)
    case end(HomeError?)
}

/// What a stream's task has received and the runner not yet taken. Polled: the
/// runner waits for one thing at a time, with a bound.
final class Inbox<Message: Sendable>: Sendable {
    private let items = Mutex<[StreamItem<Message>]>([])

    func put(_ item: StreamItem<Message>) {
        items.withLock { $0.append(item) }
    }

    /// The next item, or nil when none came within `milliseconds`.
    func next(within milliseconds: Int) async -> StreamItem<Message>? {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            if let item = items.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return item }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Iterates `sequence` into a new inbox until it ends; cancel the task to stop.
    static func pump<S: AsyncSequence & Sendable>(_ sequence: S) -> (inbox: Inbox<Message>, task: Task<Void, Never>)
    where S.Element == Message {
        let inbox = Inbox<Message>()
        let task = Task {
            do {
                for try await message in sequence { inbox.put(.message(message)) }
                inbox.put(.end(nil))
            } catch let error as HomeError {
                inbox.put(.end(error))
            } catch is CancellationError {
                inbox.put(.end(HomeError(.cancelled, "the stream's task was cancelled")))
            } catch {
                inbox.put(.end(HomeError(.unknown, "\(error)")))
            }
        }
        return (inbox, task)
    }
}

/// A subscription under test: its messages, its cursor, and what was read but
/// not yet expected.
final class StreamUnderTest {
    let client: HomeClient
    let inbox: Inbox<SubscribeResponse>
    let task: Task<Void, Never>
    var cursor = StreamCursor()
    var values: [(id: ObjectID, value: CharacteristicValue, origin: Origin)] = []
    var snapshot: [(id: ObjectID, value: CharacteristicValue?)] = []
    var end: HomeError?? = .none
    var cancelled = false

    init(client: HomeClient, subscription: HomeSubscription) {
        self.client = client
        (inbox, task) = Inbox<SubscribeResponse>.pump(subscription)
    }

    /// Reads one message into the lists: its marker, `.none` for a message
    /// without one; nil when the stream ended or nothing came in time.
    func read(within milliseconds: Int) async -> StreamMarker?? {
        guard case .none = end else { return nil }
        switch await inbox.next(within: milliseconds) {
        case nil:
            return nil
        case .end(let error):
            // The end of a stream this client cancelled is its CANCELLED.
            end = .some(cancelled ? HomeError(.cancelled, "cancelled by the client") : error)
            return nil
        case .message(let message):
            for event in cursor.accept(message) {
                if case .value(let change) = event.body {
                    values.append((change.characteristicID, change.value, event.origin))
                }
            }
            snapshot += message.snapshot.map { ($0.id, $0.value) }
            return .some(message.marker)
        }
    }

    var endDescription: String {
        switch end {
        case .none: return "not ended"
        case .some(nil): return "ended with OK"
        case .some(.some(let error)): return "ended with \(error)"
        }
    }
}

/// One scenario's clients, streams, writes in flight and providers, by name.
final class ConformanceRun {
    static let waitMs = 5_000
    static let codes: [HomeError.Code] = [
        .cancelled, .unknown, .invalidArgument, .deadlineExceeded, .notFound, .alreadyExists, .permissionDenied,
        .resourceExhausted, .failedPrecondition, .aborted, .outOfRange, .unimplemented, .internal, .unavailable,
        .dataLoss, .unauthenticated,
    ]

    let socketPath: String
    var clients: [String: HomeClient] = [:]
    var streams: [String: StreamUnderTest] = [:]
    var writes: [String: Task<WriteCharacteristicsResponse, any Error>] = [:]
    var providers: [String: (inbox: Inbox<ProviderCommand>, task: Task<Void, Never>)] = [:]

    init(socketPath: String) {
        self.socketPath = socketPath
    }

    func close() async {
        for stream in streams.values { stream.task.cancel() }
        for provider in providers.values { provider.task.cancel() }
        for write in writes.values { write.cancel() }
        for client in clients.values { await client.close() }
    }

    // MARK: Names, values and checks

    func client(_ step: JSON, _ key: String = "client") throws -> HomeClient {
        guard let name = step[key]?.string, let client = clients[name] else {
            throw StepFailure("no client named \(step[key] ?? .null)")
        }
        return client
    }

    func stream(_ step: JSON) throws -> StreamUnderTest {
        guard let name = step["stream"]?.string, let stream = streams[name] else {
            throw StepFailure("no stream named \(step["stream"] ?? .null)")
        }
        return stream
    }

    /// "OK" is nil; every other name its code.
    func code(named name: String?) throws -> HomeError.Code? {
        guard let name, name != "OK" else { return nil }
        guard let code = Self.codes.first(where: { $0.name == name }) else { throw StepFailure("no status \(name)") }
        return code
    }

    func name(_ code: HomeError.Code?) -> String { code?.name ?? "OK" }

    /// A number is an id; "Accessory/Type" is looked up in the home as it is now.
    func resolve(_ name: JSON, with client: HomeClient) async throws -> ObjectID {
        if let id = name.int { return ObjectID(id) }
        guard let path = name.string, let slash = path.firstIndex(of: "/") else {
            throw StepFailure("a characteristic is an id or \"ACCESSORY/TYPE\", not \(name)")
        }
        let accessoryName = String(path[..<slash])
        let typeName = String(path[path.index(after: slash)...])
        let graph = try await client.getHome().graph
        let accessories = Set(graph.accessories.values.filter { $0.name == accessoryName }.map(\.id))
        guard
            let characteristic = graph.characteristics.values.first(where: {
                accessories.contains($0.accessoryID) && $0.type.name == typeName
            })
        else { throw StepFailure("no characteristic \(path) in the home") }
        return characteristic.id
    }

    func value(_ spec: JSON?) throws -> CharacteristicValue {
        guard case .object(let fields) = spec, fields.count == 1, let (kind, number) = fields.first else {
            throw StepFailure("a value is one of {\"bool\"|\"int\"|\"uint\"|\"float\"|\"string\": …}")
        }
        switch kind {
        case "bool": return .bool(number.isTrue)
        case "int": return .int(number.int ?? 0)
        case "uint": return .uint(UInt64(number.int ?? 0))
        case "float": return .float(number.number ?? 0)
        case "string": return .string(number.string ?? "")
        default: throw StepFailure("no value kind \(kind)")
        }
    }

    func pairs(_ spec: JSON?, with client: HomeClient) async throws -> [(id: ObjectID, value: CharacteristicValue)] {
        var result: [(ObjectID, CharacteristicValue)] = []
        for pair in spec?.array ?? [] {
            guard let items = pair.array, items.count == 2 else {
                throw StepFailure("a pair is [characteristic, value]")
            }
            result.append((try await resolve(items[0], with: client), try value(items[1])))
        }
        return result
    }

    func checkItem(
        _ index: Int, error: HomeError?, value: CharacteristicValue?, seq: UInt64?, against want: JSON
    ) throws {
        let expected = try code(named: want["code"]?.string)
        guard error?.code == expected else {
            throw StepFailure("item \(index): \(error.map(\.description) ?? "OK"), expected \(name(expected))")
        }
        if let spec = want["value"] {
            let wanted = try self.value(spec)
            guard value == wanted else {
                throw StepFailure("item \(index): \(String(describing: value)), expected \(wanted)")
            }
        }
        if want["seq"]?.string == "nonzero", seq == 0 { throw StepFailure("item \(index): seq 0, expected one") }
        if want["seq"]?.string == "zero", let seq, seq != 0 {
            throw StepFailure("item \(index): seq \(seq), expected 0")
        }
        if let part = want["message_contains"]?.string, !(error?.message ?? "").contains(part) {
            throw StepFailure("item \(index): \"\(error?.message ?? "")\" does not contain \"\(part)\"")
        }
    }

    func checkWrite(_ response: WriteCharacteristicsResponse, _ step: JSON) throws {
        let items = step["items"]?.array ?? []
        guard response.results.count == items.count else {
            throw StepFailure("\(response.results.count) results, expected \(items.count)")
        }
        for (index, (result, want)) in zip(response.results, items).enumerated() {
            try checkItem(index + 1, error: result.error, value: nil, seq: result.seq, against: want)
        }
    }

    /// Runs `call`, expecting the step's `expect` (OK when absent).
    func expectOutcome(_ step: JSON, _ what: String, _ call: () async throws(HomeError) -> Void) async throws {
        let expected = try code(named: step["expect"]?.string)
        var got: HomeError?
        do { try await call() } catch { got = error }
        guard got?.code == expected else {
            throw StepFailure("\(what): \(got.map(\.description) ?? "OK"), expected \(name(expected))")
        }
    }

    // MARK: Steps

    func perform(_ step: JSON) async throws {
        switch step["op"]?.string ?? "" {
        case "connect": try await connect(step)
        case "disconnect":
            let client = try client(step)
            clients[step["client"]?.string ?? ""] = nil
            await client.close()
        case "call": try await call(step)
        case "read": try await read(step)
        case "write": try await write(step)
        case "write_begin": try await writeBegin(step)
        case "write_end": try await writeEnd(step)
        case "oversized_request": try await oversizedRequest(step)
        case "subscribe": try await subscribe(step)
        case "expect_marker": try await expectMarker(step)
        case "expect_snapshot": try await expectSnapshot(step)
        case "expect_values": try await expectValues(step)
        case "expect_quiet": try await expectQuiet(step)
        case "cancel":
            let stream = try stream(step)
            stream.cancelled = true
            stream.task.cancel()
        case "expect_end": try await expectEnd(step)
        case "provider_open": try await providerOpen(step)
        case "provider_register": try await providerRegister(step)
        case "provider_expect_write": try await providerExpectWrite(step)
        case let op: throw StepFailure("this runner has no step \"\(op)\"")
        }
    }

    func connect(_ step: JSON) async throws {
        let name = step["client"]?.string ?? "?"
        let socketPath = self.socketPath
        var connected: HomeClient?
        try await expectOutcome(step, "connect") { () async throws(HomeError) in
            connected = try await HomeClient.connect(
                to: socketPath, name: "conformance-\(name)",
                protocolVersion: UInt32(step["protocol_version"]?.int ?? Int64(homeProtocolVersion)),
                maxFrameSize: UInt32(step["request_max_frame_size"]?.int ?? 0))
        }
        guard let client = connected else { return }
        clients[name] = client
        guard client.hello.connectionID > 0, !client.hello.journalID.isEmpty else {
            throw StepFailure("the hello reply has no connection id or journal id")
        }
        guard client.hello.capabilities.contains("batch-events") else {
            throw StepFailure("the hello reply does not list batch-events")
        }
        if let size = step["max_frame_size"]?.int, client.hello.maxFrameSize != UInt32(size) {
            throw StepFailure("max_frame_size \(client.hello.maxFrameSize), expected \(size)")
        }
    }

    func call(_ step: JSON) async throws {
        let client = try client(step)
        let method = UnaryMethod<GetStatusRequest, GetStatusResponse>(
            "home.v1.HomeService/" + (step["method"]?.string ?? ""))
        let timeout = step["timeout_ms"]?.int.map { UInt32($0) }
        try await expectOutcome(step, step["method"]?.string ?? "call") { () async throws(HomeError) in
            _ = try await client.call(method, GetStatusRequest(), timeoutMs: timeout)
        }
    }

    func read(_ step: JSON) async throws {
        let client = try client(step)
        var ids: [ObjectID] = []
        for name in step["ids"]?.array ?? [] { ids.append(try await resolve(name, with: client)) }
        let response = try await client.read(ids)
        let items = step["items"]?.array ?? []
        guard response.reads.count == items.count else {
            throw StepFailure("\(response.reads.count) results, expected \(items.count)")
        }
        for (index, (read, want)) in zip(response.reads, items).enumerated() {
            try checkItem(index + 1, error: read.error, value: read.value, seq: nil, against: want)
        }
    }

    func writeRequest(_ step: JSON, with client: HomeClient) async throws -> WriteCharacteristicsRequest {
        WriteCharacteristicsRequest(
            writes: try await pairs(step["writes"], with: client).map {
                CharacteristicWrite(characteristicID: $0.id, value: $0.value)
            },
            atomic: step["atomic"]?.isTrue ?? false, validateOnly: step["validate_only"]?.isTrue ?? false)
    }

    func write(_ step: JSON) async throws {
        let client = try client(step)
        let request = try await writeRequest(step, with: client)
        var response: WriteCharacteristicsResponse?
        try await expectOutcome(step, "write") { () async throws(HomeError) in
            response = try await client.write(request)
        }
        if let response { try checkWrite(response, step) }
    }

    /// The write runs in a task of its own: its answer waits for a provider.
    func writeBegin(_ step: JSON) async throws {
        let client = try client(step)
        let request = try await writeRequest(step, with: client)
        writes[step["call"]?.string ?? ""] = Task { try await client.write(request) }
    }

    func writeEnd(_ step: JSON) async throws {
        guard let name = step["call"]?.string, let task = writes.removeValue(forKey: name) else {
            throw StepFailure("no write named \(step["call"] ?? .null)")
        }
        let response = try await withTimeout(patience, "the write's answer") { try await task.value }
        try checkWrite(response, step)
    }

    func oversizedRequest(_ step: JSON) async throws {
        let client = try client(step)
        let count = Int(client.hello.maxFrameSize) / 3 + 1
        let ids = (0..<count).map { ObjectID(1_000_000 + $0) }
        try await expectOutcome(step, "oversized request") { () async throws(HomeError) in
            _ = try await client.read(ids)
        }
    }

    func subscribe(_ step: JSON) async throws {
        let client = try client(step)
        var ids: [ObjectID] = []
        for name in step["ids"]?.array ?? [] { ids.append(try await resolve(name, with: client)) }
        var request = SubscribeRequest(
            filter: SubscriptionFilter(characteristicIDs: ids), snapshot: step["snapshot"]?.isTrue ?? false)
        if let since = step["since_seq"]?.int {
            request.sinceSeq = UInt64(since)
            request.journalID = step["journal_id"]?.string ?? ""
        }
        var cursor = StreamCursor()
        if let from = step["resume_from"]?.string {
            guard let old = streams[from] else { throw StepFailure("no stream named \(from)") }
            cursor = old.cursor
            if let resumeSeq = cursor.resumeSeq {
                request.sinceSeq = resumeSeq
                request.journalID = cursor.journalID
                request.snapshot = false
            }
        }
        let subscription = client.subscribe(request, timeoutMs: step["timeout_ms"]?.int.map { UInt32($0) })
        let stream = StreamUnderTest(client: client, subscription: subscription)
        stream.cursor = cursor
        streams[step["stream"]?.string ?? ""] = stream
    }

    func markerName(_ kind: StreamMarker.Kind) -> String {
        "MARKER_" + kind.rawValue.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    func expectMarker(_ step: JSON) async throws {
        let stream = try stream(step)
        let wanted = step["kind"]?.string ?? "?"
        while true {
            guard let marker = await stream.read(within: Self.waitMs) else {
                throw StepFailure("no \(wanted) marker: the stream \(stream.endDescription)")
            }
            guard let marker else { continue }
            guard markerName(marker.kind) == wanted else {
                throw StepFailure("marker \(markerName(marker.kind)), expected \(wanted)")
            }
            if step["reason"]?.isTrue == true, marker.reason.isEmpty {
                throw StepFailure("the \(wanted) marker has no reason")
            }
            if marker.kind == .resync { stream.snapshot = [] }  // a fresh snapshot follows
            return
        }
    }

    func expectSnapshot(_ step: JSON) async throws {
        let stream = try stream(step)
        while true {
            guard let marker = await stream.read(within: Self.waitMs) else {
                throw StepFailure("no SNAPSHOT_END: the stream \(stream.endDescription)")
            }
            if marker?.kind == .snapshotEnd { break }
        }
        let expected = try await pairs(step["values"], with: stream.client)
        let got = stream.snapshot
        stream.snapshot = []
        guard got.map({ $0.id }) == expected.map({ $0.id }), got.map({ $0.value }) == expected.map({ $0.value }) else {
            throw StepFailure("snapshot \(got), expected \(expected)")
        }
    }

    func expectValues(_ step: JSON) async throws {
        let stream = try stream(step)
        let expected = try await pairs(step["values"], with: stream.client)
        while stream.values.count < expected.count {
            guard await stream.read(within: Self.waitMs) != nil else {
                throw StepFailure(
                    "\(stream.values.count) values, expected \(expected.count): the stream \(stream.endDescription)")
            }
        }
        let got = Array(stream.values.prefix(expected.count))
        stream.values.removeFirst(expected.count)
        guard got.map({ $0.id }) == expected.map({ $0.id }), got.map({ $0.value }) == expected.map({ $0.value }) else {
            throw StepFailure("values \(got.map { ($0.id, $0.value) }), expected \(expected)")
        }
        if let origin = step["origin"]?.string {
            guard let by = clients[origin] else { throw StepFailure("no client named \(origin)") }
            for event in got where event.origin.kind != .client || event.origin.connectionID != by.connectionID {
                throw StepFailure("origin \(event.origin), expected \(origin)'s connection \(by.connectionID)")
            }
        }
    }

    func expectQuiet(_ step: JSON) async throws {
        let stream = try stream(step)
        _ = await stream.read(within: Int(step["ms"]?.int ?? 300))
        guard stream.values.isEmpty else { throw StepFailure("unexpected values: \(stream.values)") }
    }

    func expectEnd(_ step: JSON) async throws {
        let stream = try stream(step)
        for _ in 0..<100 {
            if case .some = stream.end { break }
            if await stream.read(within: Self.waitMs) == nil, case .none = stream.end {
                throw StepFailure("the stream did not end within \(Self.waitMs) ms")
            }
        }
        let expected = try code(named: step["code"]?.string)
        guard case .some(let error) = stream.end, error?.code == expected else {
            throw StepFailure("the stream \(stream.endDescription), expected \(name(expected))")
        }
    }

    // MARK: Providers

    func providerOpen(_ step: JSON) async throws {
        let client = try client(step)
        let providerID = step["provider_id"]?.string ?? ""
        let pumped = Inbox<ProviderCommand>.pump(client.openProvider(providerID))
        providers[step["client"]?.string ?? ""] = pumped
        let command = try await nextCommand(pumped.inbox)
        guard case .opened(let opened) = command.kind, opened.providerID == providerID,
            opened.knownKeys == (step["known_keys"]?.array ?? []).compactMap(\.string)
        else { throw StepFailure("the first command is \(command.kind), expected opened for \(providerID)") }
    }

    func nextCommand(_ inbox: Inbox<ProviderCommand>) async throws -> ProviderCommand {
        switch await inbox.next(within: Self.waitMs) {
        case .message(let command): return command
        case .end(let error): throw StepFailure("the provider's stream ended: \(error.map(\.description) ?? "OK")")
        case nil: throw StepFailure("no provider command within \(Self.waitMs) ms")
        }
    }

    func category(named name: String) throws -> AccessoryCategory {
        // CATEGORY_GARAGE_DOOR_OPENER is garageDoorOpener.
        let wanted = name.replacingOccurrences(of: "_", with: "").uppercased()
        guard let category = AccessoryCategory.allCases.first(where: { "CATEGORY\($0)".uppercased() == wanted }) else {
            throw StepFailure("no accessory category \(name)")
        }
        return category
    }

    func providerRegister(_ step: JSON) async throws {
        let client = try client(step)
        var accessories: [ProvidedAccessory] = []
        for spec in step["accessories"]?.array ?? [] {
            var services: [ProvidedService] = []
            for service in spec["services"]?.array ?? [] {
                var characteristics: [ProvidedCharacteristic] = []
                for characteristic in service["characteristics"]?.array ?? [] {
                    characteristics.append(
                        ProvidedCharacteristic(
                            type: characteristic["type"]?.string ?? "",
                            value: try characteristic["value"].map { try value($0) }))
                }
                services.append(ProvidedService(type: service["type"]?.string ?? "", characteristics: characteristics))
            }
            accessories.append(
                ProvidedAccessory(
                    key: spec["key"]?.string ?? "", name: spec["name"]?.string ?? "",
                    category: try category(named: spec["category"]?.string ?? ""), services: services))
        }
        let request = RegisterAccessoriesRequest(accessories: accessories)
        try await expectOutcome(step, "RegisterAccessories") { () async throws(HomeError) in
            _ = try await client.registerAccessories(request)
        }
    }

    func providerExpectWrite(_ step: JSON) async throws {
        let client = try client(step)
        guard let inbox = providers[step["client"]?.string ?? ""]?.inbox else {
            throw StepFailure("no provider on \(step["client"] ?? .null)")
        }
        var command = try await nextCommand(inbox)
        while case .ping = command.kind {
            _ = try await client.answer(CommandAnswer(requestID: command.requestID))
            command = try await nextCommand(inbox)
        }
        guard case .write(let writes, _) = command.kind else {
            throw StepFailure("a \(command.kind) command, expected a write")
        }
        let expected = try await pairs(step["writes"], with: client)
        guard writes.map(\.characteristicID) == expected.map({ $0.id }),
            writes.map(\.value) == expected.map({ $0.value })
        else {
            throw StepFailure("the provider was sent \(writes), expected \(expected)")
        }
        var answer = CommandAnswer(requestID: command.requestID)
        if let refusal = try code(named: step["answer"]?.string) {
            answer.error = HomeError(refusal, step["message"]?.string ?? "")
        } else {
            answer.writes = writes.map { WriteResult(characteristicID: $0.characteristicID) }
        }
        guard try await client.answer(answer) else { throw StepFailure("the daemon did not accept the answer") }
    }
}
