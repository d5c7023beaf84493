internal import HomeModel

/// The engine's armed timer and sun triggers and when each is next due. Pure: the
/// engine passes the graph and the time in.
///
/// A trigger is armed when the engine first sees it enabled (at start, or when it
/// is added, changed or enabled) for its next moment from then on: a one-off timer
/// whose moment has passed never fires, and a recurring one fires at its next
/// occurrence. A trigger whose schedule did not change (renamed, given another
/// scene) keeps its place. What happens to moments missed while the daemon was
/// down is `AutomationLimits.catchUp`'s: the engine asks `missed(…)` at start.
struct TimerTable: Sendable {
    /// What decides a trigger's moments: when it changes, the trigger is armed anew.
    struct Schedule: Hashable, Sendable {
        var kind: TriggerKind
        var days: Weekdays
        var location: GeoLocation?
    }

    struct Armed: Hashable, Sendable {
        var schedule: Schedule
        /// Nil once a one-off timer has fired (or was in the past when armed).
        var nextMs: Int64?
    }

    /// A trigger whose moment has come.
    struct Due: Hashable, Sendable {
        var triggerID: ObjectID
        var scheduledMs: Int64
    }

    private(set) var armed: [ObjectID: Armed] = [:]

    /// The earliest moment a trigger is due, if any will be.
    var earliestMs: Int64? { armed.values.compactMap(\.nextMs).min() }

    /// Brings the table in line with the graph's enabled timer and sun triggers.
    ///
    /// - Returns: the triggers armed anew.
    @discardableResult
    mutating func rescan(_ graph: HomeGraph, nowMs: Int64) -> [ObjectID] {
        var updated: [ObjectID: Armed] = [:]
        var armedAnew: [ObjectID] = []
        for trigger in graph.triggers.values where trigger.isEnabled {
            guard let schedule = Self.schedule(of: trigger, in: graph) else { continue }
            if let existing = armed[trigger.id], existing.schedule == schedule {
                updated[trigger.id] = existing
                continue
            }
            // "after now - 1": a timer set for this very millisecond still fires.
            let next = Self.next(schedule, after: nowMs - 1)
            updated[trigger.id] = Armed(schedule: schedule, nextMs: next)
            armedAnew.append(trigger.id)
        }
        armed = updated
        return armedAnew.sorted()
    }

    /// Takes the triggers whose moment is at or before `nowMs`, in the order of
    /// those moments, and moves each to its next moment after `nowMs` (a recurring
    /// timer that missed several fires once, not once per miss).
    ///
    /// The next moment is after `nowMs`, never after the moment that was due, so a
    /// clock set back after a firing does not make the trigger fire again when the
    /// clock passes the same moment a second time.
    mutating func takeDue(nowMs: Int64) -> [Due] {
        var due: [Due] = []
        for (id, timer) in armed {
            guard let next = timer.nextMs, next <= nowMs else { continue }
            due.append(Due(triggerID: id, scheduledMs: next))
            armed[id]?.nextMs = Self.next(timer.schedule, after: nowMs)
        }
        return due.sorted { ($0.scheduledMs, $0.triggerID) < ($1.scheduledMs, $1.triggerID) }
    }

    /// The latest moment each armed trigger was due in `(sinceMs, nowMs)`: what a
    /// daemon that was down in between missed (at most one per trigger).
    func missed(since sinceMs: Int64, nowMs: Int64) -> [Due] {
        var missed: [Due] = []
        for (id, timer) in armed {
            var after = sinceMs
            var latest: Int64?
            // Bounded: a daily trigger down for a year is 366 steps; past that,
            // the latest within the last steps is enough to know one was missed.
            for _ in 0..<1024 {
                guard let moment = Self.next(timer.schedule, after: after), moment < nowMs else { break }
                latest = moment
                after = moment
            }
            if let latest { missed.append(Due(triggerID: id, scheduledMs: latest)) }
        }
        return missed.sorted { ($0.scheduledMs, $0.triggerID) < ($1.scheduledMs, $1.triggerID) }
    }

    static func schedule(of trigger: Trigger, in graph: HomeGraph) -> Schedule? {
        switch trigger.kind {
        case .event: return nil
        case .timer, .sun:
            return Schedule(
                kind: trigger.kind, days: trigger.condition.days, location: graph.homes[trigger.homeID]?.location)
        }
    }

    private static func next(_ schedule: Schedule, after afterMs: Int64) -> Int64? {
        let trigger = Trigger(
            id: 0, homeID: 0, name: "", kind: schedule.kind,
            condition: TimeCondition(days: schedule.days, timeZone: ""))
        return TriggerSchedule.nextFire(of: trigger, location: schedule.location, after: afterMs)
    }
}
