internal import Foundation

/// Moments as the daemon's notes name them for people: "16:02 today", "07:30
/// tomorrow", "2026-11-27 07:30", on the wall clock of a trigger's time zone.
package enum TimeNote {
    /// `ms` on the wall clock of `zone` (an IANA name; empty or unknown: the
    /// machine's), said relative to the day of `nowMs` when it is within a day of it.
    package static func at(_ ms: Int64, zone: String, nowMs: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone.isEmpty ? TimeZone.current : TimeZone(identifier: zone) ?? TimeZone.current
        let date = Date(timeIntervalSince1970: TimeInterval(ms) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let clock = two(parts.hour ?? 0) + ":" + two(parts.minute ?? 0)
        let now = Date(timeIntervalSince1970: TimeInterval(nowMs) / 1000)
        let days = calendar.dateComponents(
            [.day], from: calendar.startOfDay(for: now), to: calendar.startOfDay(for: date)
        ).day
        switch days {
        case 0: return clock + " today"
        case -1: return clock + " yesterday"
        case 1: return clock + " tomorrow"
        default:
            return "\(parts.year ?? 0)-" + two(parts.month ?? 0) + "-" + two(parts.day ?? 0) + " " + clock
        }
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

extension Trigger {
    /// The time zone its times are written in: its timer's or sun's, else its time
    /// condition's; empty for an event trigger without one (the machine's).
    package var noteTimeZone: String {
        kind.timeZone.isEmpty ? condition.timeZone : kind.timeZone
    }
}

extension LayoutOperation {
    /// Refuses giving a trigger a one-off time that has passed, which would never
    /// fire: adding such a timer enabled, or setting a trigger to one (a trigger
    /// whose time passed after it was made is left as it is).
    package func refusePastOneOffTimer(in graph: HomeGraph, nowMs: Int64) throws(HomeError) {
        let name: String
        let kind: TriggerKind
        switch self {
        case .addTrigger(let added, _, let addedKind, _, let enabled, _, _, _, _, _, _) where enabled:
            (name, kind) = (added, addedKind)
        case .setTrigger(let triggerID, let setKind, _, _, _, _, _, _):
            guard let current = graph.triggers[triggerID], current.kind != setKind else { return }
            (name, kind) = (current.name, setKind)
        default:
            return
        }
        guard case .timer(let fireDateMs, let timeZone, .none) = kind, fireDateMs < nowMs else { return }
        throw HomeError(
            .invalidArgument,
            "trigger \"\(name)\": its time, \(TimeNote.at(fireDateMs, zone: timeZone, nowMs: nowMs)), has passed: "
                + "it never fires (give a time to come, or a recurrence)")
    }
}
