internal import HomeModel

/// The engine's armed timer triggers and when each fires next. Pure: the engine
/// passes the graph and the time in.
///
/// A timer is armed when the engine first sees it enabled (at start, or when it is
/// added, changed or enabled) for its next moment from then on: a one-off timer
/// whose moment has passed never fires, and a recurring one fires at its next
/// occurrence — moments missed while the daemon was down are not made up. A timer
/// whose definition did not change (renamed, given another scene) keeps its place.
struct TimerTable: Sendable {
    struct Armed: Hashable, Sendable {
        var fireDateMs: Int64
        var timeZone: String
        var recurrence: Recurrence
        /// Nil once a one-off timer has fired (or was in the past when armed).
        var nextMs: Int64?
    }

    /// A timer whose moment has come.
    struct Due: Hashable, Sendable {
        var triggerID: ObjectID
        var scheduledMs: Int64
    }

    private(set) var armed: [ObjectID: Armed] = [:]

    /// The earliest moment a timer fires, if any will.
    var earliestMs: Int64? { armed.values.compactMap(\.nextMs).min() }

    /// Brings the table in line with the graph's enabled timer triggers.
    ///
    /// - Returns: the triggers armed anew.
    @discardableResult
    mutating func rescan(_ graph: HomeGraph, nowMs: Int64) -> [ObjectID] {
        var updated: [ObjectID: Armed] = [:]
        var armedAnew: [ObjectID] = []
        for trigger in graph.triggers.values where trigger.isEnabled {
            guard case .timer(let fireDateMs, let timeZone, let recurrence) = trigger.kind else { continue }
            if let existing = armed[trigger.id], existing.fireDateMs == fireDateMs, existing.timeZone == timeZone,
                existing.recurrence == recurrence
            {
                updated[trigger.id] = existing
                continue
            }
            // "after now - 1": a timer set for this very millisecond still fires.
            let next = TimerSchedule.nextFireDate(
                after: nowMs - 1, fireDateMs: fireDateMs, timeZone: timeZone,
                recurrence: recurrence)
            updated[trigger.id] = Armed(
                fireDateMs: fireDateMs, timeZone: timeZone, recurrence: recurrence,
                nextMs: next)
            armedAnew.append(trigger.id)
        }
        armed = updated
        return armedAnew.sorted()
    }

    /// Takes the timers whose moment is at or before `nowMs`, in the order of those
    /// moments, and moves each to its next occurrence after `nowMs` (a recurring
    /// timer that missed several fires once, not once per miss).
    mutating func takeDue(nowMs: Int64) -> [Due] {
        var due: [Due] = []
        for (id, timer) in armed {
            guard let next = timer.nextMs, next <= nowMs else { continue }
            due.append(Due(triggerID: id, scheduledMs: next))
            armed[id]?.nextMs = TimerSchedule.nextFireDate(
                after: nowMs, fireDateMs: timer.fireDateMs,
                timeZone: timer.timeZone, recurrence: timer.recurrence)
        }
        return due.sorted { ($0.scheduledMs, $0.triggerID) < ($1.scheduledMs, $1.triggerID) }
    }
}
