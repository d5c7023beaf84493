internal import HomeModel
internal import HomeWire

/// A trigger's runs, read from the journal's events about it: each opens with the
/// engine's note `trigger-fired` or `trigger-not-fired` and takes what followed
/// until the next one (the firing, its scenes' changes, its end, its command's
/// outcome). Pure: the service reads the events.
enum TriggerTrace {
    /// - Parameters:
    ///   - events: events about the trigger, newest first.
    ///   - limit: the most runs to give.
    /// - Returns: the runs, newest first, and whether `limit` was reached.
    static func runs(of trigger: Trigger, newestFirst events: [HomeEvent], in graph: HomeGraph, limit: Int)
        -> (runs: [TriggerRun], full: Bool)
    {
        var runs: [TriggerRun] = []
        var following: [TriggerRunStep] = []
        for event in events where isAbout(event, trigger) {
            if case .audit(let note) = event.body, note.action == "trigger-fired" || note.action == "trigger-not-fired"
            {
                runs.append(
                    TriggerRun(
                        timeMs: event.timeMs, seq: event.seq, fired: note.action == "trigger-fired",
                        cause: sentence(note, of: trigger), steps: following.reversed()))
                following = []
                if runs.count == limit { return (runs, true) }
            } else if let step = step(event, of: trigger, in: graph) {
                following.append(step)
            }
        }
        return (runs, false)
    }

    /// Whether an event found by the trigger's id is its own: in memory the
    /// automation's origin names the trigger in its cascade; read back from the
    /// stored journal, by its name.
    private static func isAbout(_ event: HomeEvent, _ trigger: Trigger) -> Bool {
        switch event.body {
        case .triggerFired(let id): return id == trigger.id
        case .audit(let note): return TriggerAftermath.isAbout(note, trigger.id)
        case .value, .actionSetExecuted:
            return event.origin.kind == .automation
                && (event.origin.triggerChain.last == trigger.id || event.origin.name == trigger.name)
        default: return false
        }
    }

    private static func step(_ event: HomeEvent, of trigger: Trigger, in graph: HomeGraph) -> TriggerRunStep? {
        func made(_ kind: String, _ detail: String, _ objectID: ObjectID = 0) -> TriggerRunStep {
            TriggerRunStep(timeMs: event.timeMs, seq: event.seq, kind: kind, detail: detail, objectID: objectID)
        }
        switch event.body {
        case .triggerFired:
            return made("fired", "fired")
        case .value(let change):
            return made(
                "changed", graph.described(change.characteristicID, taking: change.value), change.characteristicID)
        case .actionSetExecuted(let id):
            return made("scene", graph.actionSets[id].map { "ran scene \"\($0.name)\"" } ?? "ran scene \(id)", id)
        case .audit(let note) where note.action == "trigger-ended":
            return made("ended", sentence(note, of: trigger))
        case .audit(let note) where note.action == "trigger-command":
            return made("command", sentence(note, of: trigger))
        case .audit(let note) where note.action == "trigger-scene":
            return made("not-written", sentence(note, of: trigger))
        default:
            return nil
        }
    }

    /// A note's sentence without its `trigger ID "NAME": ` head.
    private static func sentence(_ note: AuditNote, of trigger: Trigger) -> String {
        let head = "trigger \(trigger.id) \"\(trigger.name)\": "
        return note.detail.hasPrefix(head) ? String(note.detail.dropFirst(head.count)) : note.detail
    }
}
