internal import HomeModel
internal import HomeWire
public import Logging
internal import NIOCore
internal import NIOPosix
public import ServiceLifecycle

/// Runs the homes' triggers: event triggers when a watched characteristic takes
/// their value or enters their range and their conditions hold, timer triggers at
/// their moments. Each firing publishes "trigger fired", then runs the trigger's
/// action sets in order, everything with the origin `automation` and the trigger's
/// name.
///
/// Triggers added, changed, enabled, disabled or removed while it runs take effect
/// from the next event. See `AutomationLimits` for the rules that keep a trigger
/// from looping on its own writes, and `TimerSchedule` for how recurrences are
/// reckoned.
///
/// ```swift
/// let engine = AutomationEngine(store: store, logger: logger)
/// let group = ServiceGroup(services: [server, engine], logger: logger)
/// ```
public struct AutomationEngine: Service {
    let store: HomeStore
    let clock: any AutomationClock
    let limits: AutomationLimits
    let logger: Logger
    /// Scenes are written through it, so that providers' characteristics are
    /// written by their providers; nil writes everything in the store.
    let values: ValueRouter?
    /// Called once the engine watches the store and has armed its timers.
    let onReady: @Sendable () -> Void

    /// - Parameters:
    ///   - store: the store whose triggers run and whose events fire them.
    ///   - clock: the wall clock timers follow; tests pass one they drive.
    ///   - limits: the loop and rate guards.
    ///   - values: where scenes are written (`HomeServer.values`); nil for the store alone.
    public init(
        store: HomeStore, clock: any AutomationClock = SystemAutomationClock(),
        limits: AutomationLimits = AutomationLimits(), values: ValueRouter? = nil, logger: Logger
    ) {
        self.init(store: store, clock: clock, limits: limits, values: values, logger: logger, onReady: {})
    }

    init(
        store: HomeStore, clock: any AutomationClock, limits: AutomationLimits, values: ValueRouter? = nil,
        logger: Logger, onReady: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.values = values
        self.clock = clock
        self.limits = limits
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        let (inputs, continuation) = AsyncStream.makeStream(of: AutomationInput.self)
        let observer = AutomationObserver(limits: limits, inputs: continuation)
        var timers = TimerTable()
        var sleeper: (deadlineMs: Int64, task: Task<Void, Never>)?
        store.addObserver(observer)
        defer {
            store.removeObserver(observer)
            continuation.finish()
            sleeper?.task.cancel()
        }

        /// Makes the one sleeping task wait for the earliest timer.
        func rearm(force: Bool) {
            let earliest = timers.earliestMs
            if !force, sleeper?.deadlineMs == earliest { return }
            sleeper?.task.cancel()
            sleeper = nil
            guard let earliest else { return }
            let clock = self.clock
            sleeper = (
                earliest,
                Task {
                    do {
                        try await clock.sleep(untilMs: earliest)
                        continuation.yield(.timerDue)
                    } catch {
                        // Cancelled: a sooner or later timer replaced this one.
                    }
                }
            )
        }

        func rescan() {
            observer.layoutHandled()
            let graph = store.snapshot().graph
            for id in timers.rescan(graph, nowMs: clock.nowMs) {
                guard let trigger = graph.triggers[id], case .timer(_, let timeZone, _) = trigger.kind else { continue }
                if TimerSchedule.timeZone(named: timeZone) == nil {
                    logger.warning(
                        "timer trigger's time zone is unknown; reckoning it in UTC",
                        metadata: ["trigger": "\(id)", "name": "\(trigger.name)", "timeZone": "\(timeZone)"])
                }
            }
            rearm(force: false)
        }

        rescan()
        logger.debug("automation started", metadata: ["timers": "\(timers.armed.count)"])
        onReady()

        for await input in inputs.cancelOnGracefulShutdown() {
            switch input {
            case .fire(let triggerID, let chain, let seq):
                fire(triggerID, chain: chain, cause: "event \(seq)")
            case .layoutChanged:
                rescan()
            case .timerDue:
                let now = clock.nowMs
                for due in timers.takeDue(nowMs: now) {
                    if now - due.scheduledMs > limits.timerGraceMs {
                        logger.notice(
                            "timer trigger skipped: its moment passed too long ago",
                            metadata: [
                                "trigger": "\(due.triggerID)", "scheduledMs": "\(due.scheduledMs)", "nowMs": "\(now)",
                            ])
                        continue
                    }
                    fire(due.triggerID, chain: [], cause: "timer \(due.scheduledMs)")
                }
                rearm(force: true)
            case .suppressed(let triggerID, let reason, let seq):
                logger.warning(
                    "event trigger not fired: \(reason.rawValue)",
                    metadata: [
                        "trigger": "\(triggerID)", "seq": "\(seq)",
                        "limit":
                            "\(limits.maxFirings) per \(limits.rateWindowMs) ms, cascade depth \(limits.maxCascadeDepth)",
                    ])
            }
        }
    }

    /// Fires a trigger: publishes "trigger fired", then runs its action sets, with
    /// the cascade that led here in their origin so that the changes its scenes
    /// make cannot fire it again.
    private func fire(_ triggerID: ObjectID, chain: [ObjectID], cause: String) {
        // It may have been disabled or removed since it matched.
        guard let trigger = store.snapshot().graph.triggers[triggerID], trigger.isEnabled else {
            logger.debug("trigger gone or disabled before it fired", metadata: ["trigger": "\(triggerID)"])
            return
        }
        let origin = Origin.automation(name: trigger.name, triggerChain: chain + [triggerID])
        let seq = store.recordTriggerFired(triggerID, origin: origin)
        logger.info(
            "trigger fired",
            metadata: [
                "trigger": "\(triggerID)", "name": "\(trigger.name)", "seq": "\(seq)", "cause": "\(cause)",
            ])
        for actionSetID in trigger.actionSetIDs {
            run(actionSetID, of: triggerID, origin: origin)
        }
    }

    /// Runs one scene of a trigger: through the value router when there is one (a
    /// provider's writes complete later; their outcome is logged then).
    private func run(_ actionSetID: ObjectID, of triggerID: ObjectID, origin: Origin) {
        let logger = self.logger
        let report: @Sendable (Result<WriteOutcome, any Error>) -> Void = { result in
            switch result {
            case .success(let response):
                for result in response.results {
                    guard let error = result.error else { continue }
                    logger.warning(
                        "a write of a triggered scene failed",
                        metadata: [
                            "trigger": "\(triggerID)", "actionSet": "\(actionSetID)",
                            "characteristic": "\(result.characteristicID)", "error": "\(error)",
                        ])
                }
            case .failure(let error):
                logger.warning(
                    "a triggered scene could not run",
                    metadata: ["trigger": "\(triggerID)", "actionSet": "\(actionSetID)", "error": "\(error)"])
            }
        }
        if let values {
            values.executeActionSet(
                actionSetID, origin: origin, timeoutMs: nil, on: MultiThreadedEventLoopGroup.singleton.next()
            ).whenComplete(report)
            return
        }
        do throws(HomeError) {
            report(.success(try store.executeActionSet(actionSetID, origin: origin)))
        } catch {
            report(.failure(error))
        }
    }
}
