internal import HomeModel
internal import Logging

/// An event trigger waiting for its value to hold (`--for 10m`).
struct PendingHold: Sendable {
    /// When it began, on the wall clock and on the monotonic one: it lasts its
    /// duration by the monotonic clock, whatever is done to the wall clock.
    var startMs: Int64
    var startMonotonicMs: Int64
    var holdMs: Int64
    /// The cascade that brought the value there.
    var chain: [ObjectID]
    /// The event that brought the value there.
    var seq: UInt64
    /// The trigger as it was when the hold began: a trigger changed since waits
    /// for the next change into its state, as `HoldStanding` reckons it.
    var trigger: Trigger
    /// Why it fires, for its note.
    var cause: String

    /// When it fires on the wall clock, as the clocks stand now.
    func dueMs(nowMs: Int64, monotonicMs: Int64) -> Int64 {
        let remaining = holdMs - (monotonicMs - startMonotonicMs)
        return nowMs.addingReportingOverflow(max(remaining, 0)).overflow ? .max : nowMs + max(remaining, 0)
    }

    func isOver(monotonicMs: Int64) -> Bool { monotonicMs - startMonotonicMs >= holdMs }

    /// How far the wall clock moved apart from real time while it held, when more
    /// than a second: for its note.
    func clockMovedMs(nowMs: Int64, monotonicMs: Int64) -> Int64? {
        let drift = (nowMs - startMs) - (monotonicMs - startMonotonicMs)
        return abs(drift) > 1000 ? drift : nil
    }
}

// Holds begun before homed started: the journal keeps the change that began each
// one, so a restart (kill -9 included) does not lose them.
extension AutomationEngine {
    /// The most journal commits read back for one trigger's hold at start.
    static let holdLookBackCommits = 4096

    /// The holds running when homed stopped, reckoned from the journal: each
    /// completes at the time it would have, or now if that time passed while homed
    /// was down and the value is still what it waits for.
    func restoredHolds(in graph: HomeGraph) -> [ObjectID: PendingHold] {
        var holds: [ObjectID: PendingHold] = [:]
        for trigger in graph.triggers.values.sorted(by: { $0.id < $1.id }) where trigger.isEnabled && trigger.holdMs > 0
        {
            guard case .event(let characteristicID, _, _, _, _) = trigger.kind,
                let current = graph.characteristics[characteristicID]?.value,
                case .holding(let sinceMs, let seq) = standing(of: trigger, current: current)
            else { continue }
            let dueMs = sinceMs.addingReportingOverflow(trigger.holdMs).partialValue
            let cause =
                "\(graph.described(characteristicID, taking: current)) since \(TimeNote.at(sinceMs, zone: trigger.noteTimeZone, nowMs: clock.nowMs)), "
                + "held for its duration across a restart of homed"
            // Begun before this run: how long ago is the wall clock's word.
            let (now, monotonic) = (clock.nowMs, clock.monotonicMs)
            holds[trigger.id] = PendingHold(
                startMs: sinceMs, startMonotonicMs: monotonic - max(now - sinceMs, 0), holdMs: trigger.holdMs,
                chain: [], seq: seq, trigger: trigger, cause: cause)
            logger.info(
                "a hold begun before homed started goes on",
                metadata: ["trigger": "\(trigger.id)", "sinceMs": "\(sinceMs)", "dueMs": "\(dueMs)"])
        }
        return holds
    }

    /// Reads back the journal about the trigger and its characteristic until the
    /// standing is known (or the look-back is spent: unknown).
    private func standing(of trigger: Trigger, current: CharacteristicValue) -> HoldStanding {
        guard case .event(let characteristicID, _, _, _, _) = trigger.kind else { return .notWaitedFor }
        var events: [HomeEvent] = []
        var query = HistoryQuery(newestFirst: true, commitLimit: 256, subjects: [characteristicID, trigger.id])
        var read = 0
        while read < Self.holdLookBackCommits {
            guard let page = try? store.pastEvents(query) else { return .unknown }
            events += page.events
            let standing = HoldStanding.reckon(
                trigger, current: current, newestFirst: events, complete: !page.truncated)
            guard standing == .unknown, page.truncated, let oldest = page.events.last?.seq else { return standing }
            query.beforeSeq = oldest
            read += query.commitLimit
        }
        return .unknown
    }
}
