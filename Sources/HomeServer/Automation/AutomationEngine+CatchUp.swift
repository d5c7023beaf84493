internal import HomeModel
internal import HomeWire
internal import Logging
internal import NIOCore

// What the engine notes of the moments a trigger did not fire at: the times missed
// while homed was down (caught up at start), and the moments refused.
extension AutomationEngine {
    /// At start, with `limits.catchUpMissed`: each timer or sun trigger that was
    /// due since it last fired (as the history tells) fires once now. Without a
    /// firing in the history there is nothing to catch up from.
    func catchUp(_ timers: TimerTable, fire: (ObjectID, String) -> Void) {
        guard limits.catchUpMissed else { return }
        let now = clock.nowMs
        for id in timers.armed.keys.sorted() {
            guard let lastMs = lastFiring(of: id),
                let missed = timers.missed(since: lastMs, nowMs: now).first(where: { $0.triggerID == id })
            else { continue }
            fire(id, "catching up its time \(describeMoment(missed.scheduledMs, of: id)), missed while homed was down")
        }
    }

    /// When a trigger last fired, from the history (nil: never, or not kept).
    func lastFiring(of triggerID: ObjectID) -> Int64? {
        let query = HistoryQuery(newestFirst: true, commitLimit: 64, subjects: [triggerID])
        guard let page = try? store.pastEvents(query) else { return nil }
        return page.events.first { event in
            if case .triggerFired(triggerID) = event.body { return true }
            return false
        }?.timeMs
    }

    /// A trigger's moment as it was written and on its wall clock: "sunset-30m,
    /// 16:02 today", "07:30 today".
    func describeMoment(_ ms: Int64, of triggerID: ObjectID) -> String {
        guard let trigger = store.snapshot().graph.triggers[triggerID] else { return "\(ms) ms" }
        let time = TimeNote.at(ms, zone: trigger.noteTimeZone, nowMs: clock.nowMs)
        if case .sun(let event, let offsetMs, _) = trigger.kind {
            return DayTime.sun(event, offsetMs: offsetMs).text + ", " + time
        }
        return time
    }

    /// A change that fired or stopped a trigger, for its note: "Back Door/Contact
    /// Sensor/Contact Sensor State Open (event 1859)".
    func describe(_ change: ValueChange, seq: UInt64) -> String {
        store.snapshot().graph.described(change.characteristicID, taking: change.value) + " (event \(seq))"
    }

    /// Records in the history that a trigger's moment came but it did not fire, and why.
    func notFired(_ triggerID: ObjectID, because reason: String) {
        let name = store.snapshot().graph.triggers[triggerID]?.name ?? ""
        logger.info("trigger not fired", metadata: ["trigger": "\(triggerID)", "reason": "\(reason)"])
        store.audit(
            "trigger-not-fired", detail: "trigger \(triggerID) \"\(name)\": \(reason)",
            origin: .automation(name: name, triggerChain: [triggerID]))
    }
}

extension AutomationEngine {
    /// Notes that a triggered scene's write was not made, and why (a conditional
    /// action whose condition did not hold, a provider's refusal): its trace shows it.
    func notWritten(
        _ result: WriteResult, error: HomeError, of triggerID: ObjectID, actionSetID: ObjectID, origin: Origin
    ) {
        let graph = store.snapshot().graph
        let name = graph.triggers[triggerID]?.name ?? origin.name
        let scene = graph.actionSets[actionSetID].map { "\"\($0.name)\"" } ?? "\(actionSetID)"
        let path = graph.path(of: result.characteristicID) ?? "characteristic \(result.characteristicID)"
        store.audit(
            "trigger-scene",
            detail: "trigger \(triggerID) \"\(name)\": scene \(scene) did not write \(path): \(error.message)",
            origin: origin)
    }
}
