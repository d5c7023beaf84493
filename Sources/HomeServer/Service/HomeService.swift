internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// The daemon's implementation of `service HomeService`: one function per RPC,
/// grouped by concern in `HomeService+*.swift`, each taking its method's request
/// and returning its response. `router()` registers every one of them.
///
/// Adding a method is: its entry in Protos/, its descriptor in `HomeMethods`, its
/// function here and one line in `router()`.
struct HomeService: Sendable {
    let store: HomeStore
    let registry: ConnectionRegistry
    let configuration: ServerConfiguration
    /// Connected providers and the requests waiting for their answers.
    let providers: ProviderHub
    /// Where reads and writes of values go (the daemon, or a provider).
    var values: ValueRouter { ValueRouter(store: store, providers: providers, eventLoops: eventLoops) }
    /// Per event loop, the subscription streams waiting to flush.
    let flushers: LoopFlushers
    /// The head of every stream message of events, the same for every subscription.
    let journalField: ByteBuffer
    /// The server's event loops.
    let eventLoops: any EventLoopGroup

    init(
        store: HomeStore, registry: ConnectionRegistry, configuration: ServerConfiguration, providers: ProviderHub,
        flushers: LoopFlushers, eventLoops: any EventLoopGroup
    ) {
        self.eventLoops = eventLoops
        self.store = store
        self.registry = registry
        self.configuration = configuration
        self.providers = providers
        self.flushers = flushers
        self.journalField = SubscribeResponse.journalField(store.journalID)
    }

    /// Every method with its handler and the role it needs (Protos/home_v1.proto
    /// lists them above `service HomeService`; docs/protocol.md, "Roles").
    func router() -> HomeRouter {
        var router = HomeRouter()
        // The home and the catalog (HomeService+Home.swift).
        router.register(HomeMethods.getHome, role: .viewer, getHome)
        router.register(HomeMethods.listAccessories, role: .viewer, listAccessories)
        router.register(HomeMethods.listTypes, role: .viewer, listTypes)
        // Values and scenes (HomeService+Values.swift).
        router.register(HomeMethods.readCharacteristics, role: .viewer, deferred: readCharacteristics)
        router.register(HomeMethods.writeCharacteristics, role: .user, grouped: writeCharacteristics)
        router.register(HomeMethods.executeActionSet, role: .user, deferred: executeActionSet)
        // Layout (HomeService+Layout.swift).
        router.register(HomeMethods.changeLayout, role: .admin, changeLayout)
        router.register(HomeMethods.importLayout, role: .admin, importLayout)
        // Subscriptions (HomeService+Subscriptions.swift).
        router.register(HomeMethods.subscribe, role: .viewer, subscribe)
        router.register(HomeMethods.modifySubscription, role: .viewer, modifySubscription)
        // History (HomeService+History.swift).
        router.register(HomeMethods.readHistory, role: .viewer, deferred: readHistory)
        router.register(HomeMethods.traceTrigger, role: .viewer, deferred: traceTrigger)
        // The daemon itself (HomeService+Daemon.swift).
        router.register(HomeMethods.getStatus, role: .viewer, getStatus)
        router.register(HomeMethods.getStats, role: .admin, deferred: getStats)
        router.register(HomeMethods.backup, role: .admin, backup)
        // Accessory providers (HomeService+Providers.swift).
        router.register(HomeMethods.openProvider, role: .admin, openProvider)
        router.register(HomeMethods.registerAccessories, role: .admin, registerAccessories)
        router.register(HomeMethods.answerCommand, role: .admin, answerCommand)
        router.register(HomeMethods.reportValues, role: .admin, grouped: reportValues)
        router.register(HomeMethods.listProviders, role: .viewer, listProviders)
        return router
    }
}
