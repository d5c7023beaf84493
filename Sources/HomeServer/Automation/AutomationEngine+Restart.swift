internal import HomeModel
internal import Logging

// What the triggers had started when homed last stopped (kill -9 included), read
// back from the journal at start: the journal keeps each firing, the scenes'
// changes and the notes of what finished, written with the commits that made them.
extension AutomationEngine {
    /// The most journal commits read back about one trigger or characteristic at start.
    static let restartLookBackCommits = 256

    /// Events about `subject`, newest first (or oldest first after `afterSeq`), one page.
    func journal(about subject: ObjectID, beforeSeq: UInt64? = nil, afterSeq: UInt64 = 0, newestFirst: Bool = true)
        -> [HomeEvent]
    {
        let query = HistoryQuery(
            afterSeq: afterSeq, beforeSeq: beforeSeq, newestFirst: newestFirst,
            commitLimit: Self.restartLookBackCommits,
            subjects: [subject])
        return (try? store.pastEvents(query).events) ?? []
    }

    /// Finishes at start what the last run left: disables the execute-once triggers
    /// that fired, notes the commands it stopped, and returns the ends still to come.
    func restoreAfterRestart(in graph: HomeGraph) -> [(ObjectID, EndTable.Pending)] {
        var ends: [(ObjectID, EndTable.Pending)] = []
        for trigger in graph.triggers.values.sorted(by: { $0.id < $1.id }) {
            guard trigger.executeOnce || trigger.command != nil || !trigger.end.isNone else { continue }
            let aftermath = TriggerAftermath(of: trigger.id, newestFirst: journal(about: trigger.id))
            let origin = Origin.automation(name: trigger.name, triggerChain: [trigger.id])
            if trigger.executeOnce, trigger.isEnabled, aftermath.firedSinceChanged {
                disableFiredOnce(trigger, origin: origin)
            }
            if let command = trigger.command, let firing = aftermath.unfinishedCommand {
                store.audit(
                    "trigger-command",
                    detail: "trigger \(trigger.id) \"\(trigger.name)\": \(command.text) was interrupted: homed stopped "
                        + "while it ran (fired \(TimeNote.at(firing.timeMs, zone: trigger.noteTimeZone, nowMs: clock.nowMs)))",
                    origin: origin)
            }
            if !trigger.end.isNone, let pending = pendingEnd(of: trigger, aftermath, in: graph) {
                ends.append((trigger.id, pending))
            }
        }
        return ends
    }

    private func disableFiredOnce(_ trigger: Trigger, origin: Origin) {
        logger.notice(
            "an execute-once trigger fired before homed stopped: disabling it now",
            metadata: ["trigger": "\(trigger.id)"])
        do throws(HomeError) {
            _ = try store.changeLayout(.setTriggerEnabled(triggerID: trigger.id, enabled: false), origin: origin)
        } catch {
            logger.error(
                "an execute-once trigger could not disable itself",
                metadata: ["trigger": "\(trigger.id)", "error": "\(error.message)"])
        }
    }

    /// The end still to come of the firings since the last: the values from before
    /// the first firing (as its note recorded them; for a note journaled before
    /// notes carried values, the journal's last change before it), the last change
    /// the trigger's scenes made to each, and when it is due.
    private func pendingEnd(of trigger: Trigger, _ aftermath: TriggerAftermath, in graph: HomeGraph)
        -> EndTable.Pending?
    {
        let firings = aftermath.firingsSinceEnd
        guard let first = firings.first, let last = firings.last else { return nil }
        var previous: [ObjectID: CharacteristicValue] = [:]
        var written: [ObjectID: UInt64] = [:]
        let changed = Set(
            trigger.actionSetIDs.compactMap { graph.actionSets[$0] }.flatMap(\.actions).map(\.characteristicID))
        for id in changed.sorted() {
            guard let before = aftermath.restoresSinceEnd[id] ?? valueBefore(first.seq, of: id) else { continue }
            // Restored only if its last change is still the scenes' (the
            // automation's, by the trigger's name: a journal read back keeps the
            // origin's name, not its cascade); else someone changed it since: kept.
            guard let latest = journal(about: id, afterSeq: first.seq).first(where: { $0.changes(id) }),
                latest.origin.kind == .automation, latest.origin.name == trigger.name
            else { continue }
            // The undo's condition is on the characteristic's change seq, which a
            // restarted daemon starts at 0 until the value changes again.
            let changeSeq = graph.characteristics[id]?.changeSeq ?? 0
            guard changeSeq == latest.seq || changeSeq == 0 else { continue }
            previous[id] = before
            written[id] = changeSeq
        }
        var dueMs: Int64? = last.timeMs.addingReportingOverflow(trigger.end.afterMs).partialValue
        if trigger.end.whenEventEnds, case .event(let characteristicID, let value, let low, let high, _) = trigger.kind
        {
            // Waiting for the event to end, unless it ended while homed was down.
            let left = journal(about: characteristicID, afterSeq: last.seq, newestFirst: false).first { event in
                guard case .value(let change) = event.body, change.characteristicID == characteristicID else {
                    return false
                }
                return !EventMatch.matches(change.value, value: value, rangeMin: low, rangeMax: high)
            }
            let current = graph.characteristics[characteristicID]?.value
            let stillThere =
                current.map { EventMatch.matches($0, value: value, rangeMin: low, rangeMax: high) } ?? false
            dueMs =
                stillThere
                ? nil : (left?.timeMs ?? clock.nowMs).addingReportingOverflow(trigger.end.afterMs).partialValue
        }
        return EndTable.Pending(
            name: trigger.name, previous: previous, written: written, dueMs: dueMs, end: trigger.end, carriedOver: true)
    }

    /// The value `id` had before the event `seq`, if the journal still has its change.
    private func valueBefore(_ seq: UInt64, of id: ObjectID) -> CharacteristicValue? {
        guard case .value(let change)? = journal(about: id, beforeSeq: seq).first(where: { $0.changes(id) })?.body
        else { return nil }
        return change.value
    }

    /// An end that was due while homed was down, with `runMissedEnds` off: noted, not run.
    func skipMissedEnd(_ triggerID: ObjectID, _ pending: EndTable.Pending) {
        let zone = store.snapshot().graph.triggers[triggerID]?.noteTimeZone ?? ""
        store.audit(
            "trigger-ended",
            detail: "trigger \(triggerID) \"\(pending.name)\": \(pending.end.text): skipped, it was due "
                + "\(TimeNote.at(pending.dueMs ?? 0, zone: zone, nowMs: clock.nowMs)) while homed was down "
                + "(automation.missed_ends: skip); the values stay as they are",
            origin: .automation(name: pending.name, triggerChain: [triggerID]))
    }
}

extension HomeEvent {
    /// Whether it is a value change of `characteristicID`.
    fileprivate func changes(_ characteristicID: ObjectID) -> Bool {
        if case .value(let change) = body { return change.characteristicID == characteristicID }
        return false
    }
}
