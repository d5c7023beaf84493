internal import HomeModel
internal import HomeWire
public import Logging
internal import NIOCore
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
    /// Runs triggers' commands.
    let commands = CommandRunner()
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
        /// Event triggers waiting for their event to hold, and when each is due.
        var holds: [ObjectID: PendingHold] = [:]
        var ends = EndTable()
        let onWritten: @Sendable (ObjectID, [WriteResult]) -> Void = { triggerID, results in
            continuation.yield(.sceneWrote(triggerID: triggerID, results: results))
        }
        /// Fires a trigger, noting what its end is to undo.
        func fire(_ triggerID: ObjectID, chain: [ObjectID], cause: String, checkConditions: Bool = false) {
            self.fire(
                triggerID, chain: chain, cause: cause, checkConditions: checkConditions, ends: &ends,
                onWritten: onWritten)
        }
        var sleeper: (deadlineMs: Int64, task: Task<Void, Never>)?
        store.addObserver(observer)
        defer {
            store.removeObserver(observer)
            continuation.finish()
            sleeper?.task.cancel()
        }

        /// Makes the one sleeping task wait for the earliest timer or hold.
        func rearm(force: Bool) {
            let (now, monotonic) = (clock.nowMs, clock.monotonicMs)
            let holdsDue = holds.values.map { $0.dueMs(nowMs: now, monotonicMs: monotonic) }.min()
            let earliest = [timers.earliestMs, holdsDue, ends.earliestMs].compactMap { $0 }.min()
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
                if !TimerSchedule.knowsTimeZone(timeZone) {
                    logger.warning(
                        "timer trigger's time zone is unknown; reckoning it in UTC",
                        metadata: ["trigger": "\(id)", "name": "\(trigger.name)", "timeZone": "\(timeZone)"])
                }
            }
            // A held trigger removed, disabled or changed waits no more: it waits
            // for the next change into its state, as `HoldStanding` reckons it.
            holds = holds.filter { id, hold in graph.triggers[id] == hold.trigger }
            rearm(force: false)
        }

        for (id, pending) in restoreAfterRestart(in: store.snapshot().graph) {
            if let dueMs = pending.dueMs, dueMs <= clock.nowMs, !limits.runMissedEnds {
                skipMissedEnd(id, pending)
            } else {
                ends.restore(id, pending)
            }
        }
        holds = restoredHolds(in: store.snapshot().graph)
        rescan()
        catchUp(timers, fire: { fire($0, chain: [], cause: $1) })
        logger.debug("automation started", metadata: ["timers": "\(timers.armed.count)"])
        onReady()

        for await input in inputs.cancelOnGracefulShutdown() {
            switch input {
            case .fire(let triggerID, let chain, let seq, let change, let caughtUp):
                var cause = describe(change, seq: seq)
                if caughtUp {
                    let accessory = store.snapshot().graph.accessories[change.accessoryID]?.name ?? "its accessory"
                    cause += ", caught up: it changed while \(accessory) was unreachable"
                }
                fire(triggerID, chain: chain, cause: cause)
                // Its end may be due before anything else the sleeper waits for.
                rearm(force: false)
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
                    fire(
                        due.triggerID, chain: [],
                        cause: "its time \(describeMoment(due.scheduledMs, of: due.triggerID))")
                }
                let monotonic = clock.monotonicMs
                for (id, hold) in holds.sorted(by: { $0.key < $1.key }) where hold.isOver(monotonicMs: monotonic) {
                    holds[id] = nil
                    var cause = hold.cause
                    if let movedMs = hold.clockMovedMs(nowMs: now, monotonicMs: monotonic) {
                        cause +=
                            " (the wall clock moved \(movedMs < 0 ? "back" : "forward") by "
                            + "\(formatDurationMs(UInt64(abs(movedMs)))) meanwhile: it held its duration by real time)"
                    }
                    fire(id, chain: hold.chain, cause: cause, checkConditions: true)
                }
                for (id, pending) in ends.takeDue(nowMs: now) {
                    undo(id, pending)
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
            case .conditionStopped(let triggerID, let reason, let seq, let change):
                notFired(triggerID, because: "\(describe(change, seq: seq)): \(reason)")
            case .holdStarted(let triggerID, let chain, let seq, let holdMs, let change):
                // A hold already running goes on from its start.
                if holds[triggerID] == nil, let trigger = store.snapshot().graph.triggers[triggerID] {
                    holds[triggerID] = PendingHold(
                        startMs: clock.nowMs, startMonotonicMs: clock.monotonicMs, holdMs: holdMs, chain: chain,
                        seq: seq, trigger: trigger,
                        cause: describe(change, seq: seq) + " held for its duration since "
                            + TimeNote.at(clock.nowMs, zone: trigger.noteTimeZone, nowMs: clock.nowMs))
                }
                rearm(force: false)
            case .eventEnded(let triggerID):
                ends.eventEnded(triggerID, nowMs: clock.nowMs)
                rearm(force: false)
            case .sceneWrote(let triggerID, let results):
                for result in results where result.error == nil {
                    ends.wrote(triggerID, characteristicID: result.characteristicID, seq: result.seq)
                }
            case .holdEnded(let triggerID):
                if holds.removeValue(forKey: triggerID) != nil {
                    logger.debug(
                        "held trigger's event ended before its duration", metadata: ["trigger": "\(triggerID)"])
                    rearm(force: false)
                }
            }
        }
    }

    /// Fires a trigger: checks its time condition (and, after a hold, its
    /// characteristic conditions), publishes "trigger fired" with a note of why,
    /// then runs its action sets, with the cascade that led here in their origin
    /// so that the changes its scenes make cannot fire it again.
    private func fire(
        _ triggerID: ObjectID, chain: [ObjectID], cause: String, checkConditions: Bool, ends: inout EndTable,
        onWritten: @escaping @Sendable (ObjectID, [WriteResult]) -> Void
    ) {
        // It may have been disabled or removed since it matched.
        let graph = store.snapshot().graph
        guard let trigger = graph.triggers[triggerID], trigger.isEnabled else {
            logger.debug("trigger gone or disabled before it fired", metadata: ["trigger": "\(triggerID)"])
            return
        }
        let location = graph.homes[trigger.homeID]?.location
        if let reason = TriggerSchedule.whyNot(trigger.condition, at: clock.nowMs, location: location) {
            notFired(triggerID, because: "\(cause): \(reason)")
            return
        }
        if let reason = EventTriggerRule.failedCondition(trigger.conditions, in: graph) {
            notFired(triggerID, because: "\(cause): \(reason)")
            return
        }
        if checkConditions, let rule = EventTriggerRule(trigger) {
            // A hold carried over a restart is over only while the value still is what it waits for.
            if let current = graph.characteristics[rule.characteristicID]?.value, !rule.matches(current) {
                notFired(triggerID, because: "\(cause): it is \(graph.shown(current, of: rule.characteristicID)) now")
                return
            }
            if let reason = rule.failedCondition(in: graph) {
                notFired(triggerID, because: "\(cause): \(reason)")
                return
            }
        }
        let origin = Origin.automation(name: trigger.name, triggerChain: chain + [triggerID])
        // What it checked, with what it saw: the trace's answer to "why did it run".
        var checked = EventTriggerRule.heldConditions(trigger.characteristicConditions, in: graph)
        if !trigger.condition.isAlways { checked.insert("within \(trigger.condition.text)", at: 0) }
        let note = ([cause] + checked).joined(separator: "; ")
        // What its scenes are about to change, as it is now: what the end restores,
        // journaled with the note so that an end carried over a restart has it.
        var previous: [ObjectID: CharacteristicValue] = [:]
        if !trigger.end.isNone {
            for action in trigger.actionSetIDs.compactMap({ graph.actionSets[$0] }).flatMap(\.actions) {
                if let value = graph.characteristics[action.characteristicID]?.value {
                    previous[action.characteristicID] = previous[action.characteristicID] ?? value
                }
            }
        }
        store.audit(
            "trigger-fired", detail: "trigger \(triggerID) \"\(trigger.name)\": \(note)", values: previous,
            origin: origin)
        let seq = store.recordTriggerFired(triggerID, origin: origin)
        logger.info(
            "trigger fired",
            metadata: [
                "trigger": "\(triggerID)", "name": "\(trigger.name)", "seq": "\(seq)", "cause": "\(cause)",
            ])
        if !trigger.end.isNone {
            ends.fired(trigger, previous: previous, nowMs: clock.nowMs)
        }
        for actionSetID in trigger.actionSetIDs {
            run(actionSetID, of: triggerID, origin: origin, onWritten: trigger.end.isNone ? nil : onWritten)
        }
        if let command = trigger.command {
            runCommand(command, of: trigger, in: graph, cause: cause, origin: origin)
        }
        if trigger.executeOnce {
            do throws(HomeError) {
                _ = try store.changeLayout(.setTriggerEnabled(triggerID: triggerID, enabled: false), origin: origin)
            } catch {
                logger.error(
                    "an execute-once trigger could not disable itself",
                    metadata: ["trigger": "\(triggerID)", "error": "\(error.message)"])
            }
        }
    }
}
