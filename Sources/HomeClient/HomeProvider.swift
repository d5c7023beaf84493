internal import Foundation
public import HomeModel
internal import HomeWire
internal import Synchronization

/// Names a characteristic the way its provider does: the accessory's key, its
/// service (the service's key, else its type name, with `#2`, `#3`… for the
/// second and later unkeyed services of one type), and the characteristic's type
/// name. `HomeProvider` maps these to and from the daemon's ids.
public struct CharacteristicRef: Hashable, Sendable, CustomStringConvertible {
    public var accessoryKey: String
    public var service: String
    public var characteristic: String

    public init(accessoryKey: String, service: String, characteristic: String) {
        self.accessoryKey = accessoryKey
        self.service = service
        self.characteristic = characteristic
    }

    public var description: String { "\(accessoryKey)/\(service)/\(characteristic)" }
}

/// A whole accessory provider: it connects, opens its command stream, registers
/// its accessories, answers the daemon's reads and writes with your closures,
/// reports your changes, and when the connection is lost it reconnects (with
/// backoff) and registers again by itself.
///
/// ```swift
/// let provider = HomeProvider(id: "garage", accessories: [door]) { refs in
///     [:]  // read the devices
/// } write: { values, atomic in
///     [:]  // apply them; return the ones that failed
/// }
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await provider.run() }
///     try await provider.report([doorState: .uint(0)])
/// }
/// ```
///
/// Handlers run concurrently with each other and with the liveness pings, which
/// are always answered at once, so a slow device never looks like a dead provider.
public final class HomeProvider: Sendable {
    /// Reads these characteristics from the devices; a ref missing from the result fails with NOT_FOUND.
    public typealias ReadHandler =
        @Sendable ([CharacteristicRef]) async throws -> [CharacteristicRef: CharacteristicValue]
    /// Applies these values (validated by the daemon; all or none when `atomic`);
    /// returns the ones that failed. Throwing fails them all.
    public typealias WriteHandler =
        @Sendable ([CharacteristicRef: CharacteristicValue], _ atomic: Bool) async throws -> [CharacteristicRef:
        HomeError]

    /// Opens a connection to the daemon, given the client name to say hello with.
    public typealias Connector = @Sendable (_ name: String) async throws -> HomeClient

    public let id: String
    let connector: Connector
    let clientName: String
    let readHandler: ReadHandler?
    let writeHandler: WriteHandler?

    struct State {
        var accessories: [ProvidedAccessory]
        var homeID: ObjectID?
        var client: HomeClient?
        var ids: [CharacteristicRef: ObjectID] = [:]
        var refs: [ObjectID: CharacteristicRef] = [:]
        var accessoryIDs: [String: ObjectID] = [:]
        /// Counts registrations: tests and callers wait for the next one.
        var registrations = 0
        var waiters: [(Int, UUID, CheckedContinuation<Void, Never>)] = []
    }

    let state: Mutex<State>

    /// - Parameters:
    ///   - socketPath: the daemon's socket; nil for `HomeClient.defaultSocketPath()`.
    ///   - connector: how to connect instead of the socket path: a provider inside
    ///     the daemon's process connects in-process (`HomeServer.connectInProcess()`).
    ///   - homeID: the home new accessories go to; nil for the primary home.
    public init(
        id: String, socketPath: String? = nil, connector: Connector? = nil, clientName: String? = nil,
        homeID: ObjectID? = nil, accessories: [ProvidedAccessory], read: ReadHandler? = nil,
        write: WriteHandler? = nil
    ) {
        self.id = id
        self.connector = connector ?? { name in try await HomeClient.connect(to: socketPath, name: name) }
        self.clientName = clientName ?? "provider \(id)"
        self.readHandler = read
        self.writeHandler = write
        self.state = Mutex(State(accessories: accessories, homeID: homeID))
    }

    // MARK: Running

    /// Serves until the task is cancelled: connects, registers, answers commands;
    /// reconnects after 0.1 s, doubling to 5 s, whenever the connection is lost.
    ///
    /// - Throws: a registration the daemon refuses (INVALID_ARGUMENT naming the item,
    ///   ALREADY_EXISTS when another connection serves this provider id): retrying
    ///   would not help.
    public func run() async throws {
        var backoffMs: UInt64 = 100
        while !Task.isCancelled {
            do {
                try await serveOnce()
                backoffMs = 100
            } catch let error as HomeError where error.code == .invalidArgument || error.code == .alreadyExists {
                throw error
            } catch {
                if Task.isCancelled { return }
            }
            state.withLock { $0.client = nil }
            try? await Task.sleep(nanoseconds: backoffMs * 1_000_000)
            backoffMs = min(backoffMs * 2, 5_000)
        }
    }

    private func serveOnce() async throws {
        let client = try await connector(clientName)
        defer { client.closeSoon() }
        var commands = client.openProvider(id).makeAsyncIterator()
        guard case .opened? = try await commands.next()?.kind else {
            throw HomeError(.internal, "the daemon did not open provider \"\(id)\"'s command stream")
        }
        let (accessories, homeID) = state.withLock { ($0.accessories, $0.homeID) }
        let response = try await client.registerAccessories(
            RegisterAccessoriesRequest(homeID: homeID, accessories: accessories))
        install(response, client: client)
        // Commands are read and answered on the connection's event loop: a write's
        // round trip through the provider takes no thread hops beyond the handler's own.
        try await withTaskExecutorPreference(client.taskExecutor) {
            try await serve(&commands, client: client)
        }
    }

    private func serve(_ commands: inout ProviderCommands.AsyncIterator, client: HomeClient) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            while let command = try await commands.next() {
                switch command.kind {
                case .opened:
                    continue
                case .ping:
                    group.addTask { _ = try? await client.answer(CommandAnswer(requestID: command.requestID)) }
                case .read(let ids):
                    group.addTask { _ = try? await client.answer(await self.read(ids, requestID: command.requestID)) }
                case .write(let writes, let atomic):
                    group.addTask {
                        _ = try? await client.answer(
                            await self.write(writes, atomic: atomic, requestID: command.requestID))
                    }
                }
            }
            throw HomeError(.unavailable, "the daemon ended provider \"\(id)\"'s command stream")
        }
    }

    /// How a provider names the characteristics of one of its accessories, by id
    /// (see `CharacteristicRef`).
    public static func references(
        of accessory: Accessory, services: [ObjectID: AccessoryService], characteristics: [ObjectID: Characteristic]
    ) -> [ObjectID: CharacteristicRef] {
        var refs: [ObjectID: CharacteristicRef] = [:]
        var ranks: [String: Int] = [:]
        for serviceID in accessory.serviceIDs {
            guard let service = services[serviceID] else { continue }
            var serviceName = service.providerKey
            if serviceName.isEmpty {
                let rank = ranks[service.type.name, default: 0] + 1
                ranks[service.type.name] = rank
                serviceName = rank == 1 ? service.type.name : "\(service.type.name)#\(rank)"
            }
            for characteristicID in service.characteristicIDs {
                guard let characteristic = characteristics[characteristicID] else { continue }
                refs[characteristicID] = CharacteristicRef(
                    accessoryKey: accessory.providerKey, service: serviceName, characteristic: characteristic.type.name)
            }
        }
        return refs
    }

    func install(_ response: RegisterAccessoriesResponse, client: HomeClient) {
        var ids: [CharacteristicRef: ObjectID] = [:]
        var refs: [ObjectID: CharacteristicRef] = [:]
        var accessoryIDs: [String: ObjectID] = [:]
        for accessory in response.accessories {
            accessoryIDs[accessory.providerKey] = accessory.id
            for (id, ref) in Self.references(
                of: accessory, services: response.services, characteristics: response.characteristics)
            {
                ids[ref] = id
                refs[id] = ref
            }
        }
        let waiters = state.withLock { state in
            state.client = client
            state.ids.merge(ids) { _, new in new }
            state.refs.merge(refs) { _, new in new }
            state.accessoryIDs.merge(accessoryIDs) { _, new in new }
            state.registrations += 1
            let count = state.registrations
            let ready = state.waiters.filter { $0.0 <= count }.map(\.2)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in waiters { waiter.resume() }
    }

    private func read(_ ids: [ObjectID], requestID: UInt64) async -> CommandAnswer {
        guard let readHandler else {
            return CommandAnswer(
                requestID: requestID, error: HomeError(.unimplemented, "provider \"\(id)\" does not read its devices"))
        }
        let refs = state.withLock { state in ids.map { state.refs[$0] } }
        do {
            let values = try await readHandler(refs.compactMap { $0 })
            let reads = zip(ids, refs).map { id, ref -> CharacteristicRead in
                guard let ref, let value = values[ref] else {
                    return CharacteristicRead(
                        characteristicID: id, value: nil, lastUpdatedMs: 0,
                        error: HomeError(.notFound, "provider \"\(self.id)\" has no value for characteristic \(id)"))
                }
                return CharacteristicRead(characteristicID: id, value: value, lastUpdatedMs: 0)
            }
            return CommandAnswer(requestID: requestID, reads: reads)
        } catch {
            return CommandAnswer(requestID: requestID, error: Self.homeError(error))
        }
    }

    private func write(_ writes: [CharacteristicWrite], atomic: Bool, requestID: UInt64) async -> CommandAnswer {
        guard let writeHandler else {
            return CommandAnswer(
                requestID: requestID, error: HomeError(.unimplemented, "provider \"\(id)\" takes no writes"))
        }
        let refs = state.withLock { state in writes.map { state.refs[$0.characteristicID] } }
        var values: [CharacteristicRef: CharacteristicValue] = [:]
        for (write, ref) in zip(writes, refs) { if let ref { values[ref] = write.value } }
        do {
            let failed = try await writeHandler(values, atomic)
            let results = zip(writes, refs).map { write, ref in
                WriteResult(characteristicID: write.characteristicID, error: ref.flatMap { failed[$0] })
            }
            return CommandAnswer(requestID: requestID, writes: results)
        } catch {
            return CommandAnswer(requestID: requestID, error: Self.homeError(error))
        }
    }

    private static func homeError(_ error: any Error) -> HomeError {
        error as? HomeError ?? HomeError(.internal, "\(error)")
    }
}
