internal import HomeClient
internal import HomeModel
internal import HomeWire
public import Logging
public import ServiceLifecycle
internal import Synchronization

/// Runs a simulation file as an accessory provider of a daemon: it speaks the
/// provider API like any provider — over an in-process connection in `homed
/// --demo`, over the socket as its own process with `homed-sim` — so it is also a
/// living test of it.
///
/// Before registering, it makes the file's home and rooms where missing and takes
/// over the values the daemon last knew of its accessories, so that a restart
/// carries on from where the home was rather than from the file's values.
public struct SimulatorProvider: Service {
    let file: SimulationFile
    /// Where it connects: a socket path, or "in-process".
    let place: String
    let connector: HomeProvider.Connector
    /// Called after each registration of the file's accessories.
    let onRegistered: @Sendable () -> Void
    let logger: Logger

    /// A simulator that connects to the daemon listening on `socketPath`.
    public init(file: SimulationFile, socketPath: String, logger: Logger) {
        self.init(
            file: file, place: socketPath,
            connector: { name in try await HomeClient.connect(to: socketPath, name: name) },
            logger: logger)
    }

    /// A simulator inside the daemon: each connection it makes is a descriptor
    /// `connectedSocket` returns (`HomeServer.connectInProcess()`), and it says
    /// when it has registered.
    public init(
        file: SimulationFile, connectedSocket: @escaping @Sendable () async throws -> Int32,
        onRegistered: @escaping @Sendable () -> Void = {}, logger: Logger
    ) {
        self.init(
            file: file, place: "in-process",
            connector: { name in try await HomeClient.connect(connectedSocket: try await connectedSocket(), name: name)
            },
            onRegistered: onRegistered, logger: logger)
    }

    private init(
        file: SimulationFile, place: String, connector: @escaping HomeProvider.Connector,
        onRegistered: @escaping @Sendable () -> Void = {}, logger: Logger
    ) {
        self.file = file
        self.place = place
        self.connector = connector
        self.onRegistered = onRegistered
        self.logger = logger
    }

    public func run() async throws {
        let (homeID, known) = try await prepare()
        var engine = try SimulatorEngine(file)
        engine.tickMsHint = file.tickMs
        // Registered without values: the daemon then reads them from the engine, so
        // that registering again after a reconnection reports the devices as they are.
        var accessories = try file.providedAccessories()
        for index in accessories.indices {
            for serviceIndex in accessories[index].services.indices {
                for characteristicIndex in accessories[index].services[serviceIndex].characteristics.indices {
                    accessories[index].services[serviceIndex].characteristics[characteristicIndex].value = nil
                }
            }
        }
        // The daemon's last known values win over the file's.
        _ = engine.write(known)
        let state = Shared(engine)
        let logger = self.logger
        // The write handler reports through the provider it belongs to, made below.
        let providerBox = Shared<HomeProvider?>(nil)
        let provider = HomeProvider(
            id: file.provider, connector: connector, clientName: "simulator (\(file.provider))", homeID: homeID,
            accessories: accessories,
            read: { refs in
                state.withLock { engine in
                    var values: [CharacteristicRef: CharacteristicValue] = [:]
                    for ref in refs { values[ref] = engine.value(of: ref) }
                    return values
                }
            }
        ) { values, _ in
            let immediate = state.withLock { $0.write(values) }
            if !immediate.isEmpty {
                // Reported once the write is answered, as a device reports what it did.
                if let provider = providerBox.withLock({ $0 }) {
                    Task { await Self.report(immediate, through: provider, logger: logger) }
                }
            }
            return immediate.refused
        }
        providerBox.withLock { $0 = provider }
        let tickMs = file.tickMs
        // Stops at the daemon's graceful shutdown (its services stop in reverse order:
        // the simulator before the server) as at cancellation.
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { try? await provider.run() }
                group.addTask { [onRegistered] in
                    await provider.waitForRegistration()
                    onRegistered()
                }
                group.addTask {
                    var random = SystemRandomNumberGenerator()
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(tickMs))
                        let changes = state.withLock { $0.tick(random: &random) }
                        await Self.report(changes, through: provider, logger: logger)
                    }
                }
            }
        }
        // The provider's write handler holds the box that holds the provider: a
        // cycle that kept the provider, its client and every id it knew alive after
        // the simulator stopped.
        providerBox.withLock { $0 = nil }
    }

    /// Reports one step's changes; a daemon that is away hears of them at the
    /// next registration (their values are the engine's).
    static func report(_ changes: SimulatorEngine.Changes, through provider: HomeProvider, logger: Logger) async {
        do {
            if !changes.values.isEmpty { try await provider.report(changes.values) }
            for (key, reachable) in changes.reachability.sorted(by: { $0.key < $1.key }) {
                try await provider.setReachable(reachable, accessoryKey: key)
            }
        } catch {
            logger.debug("simulator report not delivered: \(error)")
        }
    }

    /// Makes the file's home and rooms where missing, and collects what the daemon
    /// knows of this provider's accessories. Waits for the daemon to listen.
    private func prepare() async throws -> (homeID: ObjectID?, known: [CharacteristicRef: CharacteristicValue]) {
        let client = try await connectWhenListening()
        do {
            let prepared = try await prepare(with: client)
            await client.close()
            return prepared
        } catch {
            await client.close()
            throw error
        }
    }

    /// Connects, retrying while nothing listens yet (homed starting up).
    private func connectWhenListening() async throws -> HomeClient {
        var delayMs = 50
        while true {
            let attempt: Result<HomeClient, HomeError>
            do {
                attempt = .success(try await connector("simulator setup"))
            } catch let error as HomeError {
                attempt = .failure(error)
            }
            switch attempt {
            case .success(let client):
                return client
            case .failure(let error):
                guard error.code == .unavailable else { throw error }
                try await Task.sleep(for: .milliseconds(delayMs))
                delayMs = min(delayMs * 2, 2_000)
            }
        }
    }

    private func prepare(with client: HomeClient) async throws
        -> (homeID: ObjectID?, known: [CharacteristicRef: CharacteristicValue])
    {
        var graph = try await client.getHome().graph
        var homeID = graph.primaryHomeID
        if let name = file.home {
            if let existing = graph.homes.values.first(where: { $0.name.lowercased() == name.lowercased() }) {
                homeID = existing.id
            } else {
                homeID = try await client.changeLayout(.addHome(name: name)).createdID
            }
            graph = try await client.getHome().graph
        }
        if let homeID, let home = graph.homes[homeID] {
            let existing = Set(home.roomIDs.compactMap { graph.rooms[$0]?.name.lowercased() })
            for room in file.rooms where !existing.contains(room.lowercased()) {
                _ = try await client.changeLayout(.addRoom(name: room, homeID: homeID))
            }
        }
        var known: [CharacteristicRef: CharacteristicValue] = [:]
        for accessory in graph.accessories.values where accessory.provider == file.provider {
            for (id, ref) in HomeProvider.references(
                of: accessory, services: graph.services, characteristics: graph.characteristics)
            {
                if let value = graph.characteristics[id]?.value { known[ref] = value }
            }
        }
        return (homeID, known)
    }
}

/// A value shared by the simulator's tasks and handlers, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        value.withLock { body(&$0) }
    }
}

extension SimulatorProvider: CustomStringConvertible {
    public var description: String {
        "SimulatorProvider(\(file.provider), \(file.accessories.count) accessories, \(place))"
    }
}
