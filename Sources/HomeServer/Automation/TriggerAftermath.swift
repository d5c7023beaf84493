internal import HomeModel

/// What a trigger had started when homed last stopped, read from the journal's
/// events about it (its firings, its notes, its layout changes). Pure: the engine
/// reads the events and acts on what this says.
///
/// A firing is journaled as "trigger fired"; its end, when it comes, as a note
/// `trigger-ended`; its command's outcome as a note `trigger-command`. So a firing
/// with no such note after it had started something homed did not finish.
struct TriggerAftermath: Equatable, Sendable {
    /// Its firings since its end last came, oldest first: an end still to come,
    /// for a trigger with one (the values from before the first are restored; the
    /// end is reckoned from the last).
    var firingsSinceEnd: [HomeEvent] = []
    /// What those firings' notes say the end restores (`AuditNote.values`): for
    /// each characteristic, its value from before the oldest firing that noted it.
    var restoresSinceEnd: [ObjectID: CharacteristicValue] = [:]
    /// Its latest firing, when no note says how that firing's command ended (and
    /// the trigger was not changed since: it may have had no command then).
    var unfinishedCommand: HomeEvent?
    /// Whether it fired since it was made or last changed: an execute-once trigger
    /// that did is done, even if homed stopped before it could disable it.
    var firedSinceChanged = false

    /// - Parameter events: events about the trigger, newest first (others are passed over).
    ///
    /// A firing counts only with its `trigger-fired` note before it (the engine
    /// writes the note, then the firing): a journal written before notes were found
    /// by their trigger has firings without them, whose ends and commands this
    /// cannot tell, and they are taken as finished.
    init(of triggerID: ObjectID, newestFirst events: [HomeEvent]) {
        var endSeen = false
        var layoutSeen = false
        var commandNoted = false
        var latestFiringSeen = false
        // A firing read, waiting for its note, and what was seen just before it.
        var firing: (event: HomeEvent, endSeen: Bool, layoutSeen: Bool, latest: Bool)?
        for event in events {
            switch event.body {
            case .triggerFired(triggerID):
                // Two firings without a note between: older than the notes' index.
                if firing != nil { return }
                firing = (event, endSeen, layoutSeen, !latestFiringSeen)
                latestFiringSeen = true
            case .audit(let note) where Self.isAbout(note, triggerID):
                switch note.action {
                case "trigger-fired":
                    guard let confirmed = firing else { continue }
                    firing = nil
                    if confirmed.latest && !commandNoted && !confirmed.layoutSeen {
                        unfinishedCommand = confirmed.event
                    }
                    if !confirmed.endSeen {
                        firingsSinceEnd.insert(confirmed.event, at: 0)
                        // Read newest first: an older firing's value wins.
                        restoresSinceEnd.merge(note.values) { _, older in older }
                    }
                    if !confirmed.layoutSeen { firedSinceChanged = true }
                case "trigger-ended":
                    endSeen = true
                case "trigger-command" where !latestFiringSeen:
                    commandNoted = true
                default:
                    continue
                }
            case .layout(let change) where change.object == .trigger && change.objectID == triggerID:
                layoutSeen = true
            default:
                continue
            }
        }
    }

    /// The engine's notes about a trigger begin `trigger ID "NAME"`.
    static func isAbout(_ note: AuditNote, _ triggerID: ObjectID) -> Bool {
        note.detail.hasPrefix("trigger \(triggerID) ")
    }
}
