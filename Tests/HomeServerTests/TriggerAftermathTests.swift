import HomeModel
import Testing

@testable import HomeServer

/// Journal events about trigger 40, oldest first; `reckon` reads them newest first.
private func note(_ seq: UInt64, _ action: String) -> HomeEvent {
    HomeEvent(
        seq: seq, timeMs: Int64(seq) * 1000, origin: .automation(name: "Pulse", triggerChain: [40]),
        body: .audit(AuditNote(action: action, detail: "trigger 40 \"Pulse\": …")))
}

private func fired(_ seq: UInt64) -> HomeEvent {
    HomeEvent(
        seq: seq, timeMs: Int64(seq) * 1000, origin: .automation(name: "Pulse", triggerChain: [40]),
        body: .triggerFired(40))
}

private func changed(_ seq: UInt64) -> HomeEvent {
    HomeEvent(
        seq: seq, timeMs: Int64(seq) * 1000, origin: .daemon,
        body: .layout(LayoutChange(action: .updated, object: .trigger, objectID: 40, homeID: 1, name: "Pulse")))
}

private func aftermath(_ oldestFirst: [HomeEvent]) -> TriggerAftermath {
    TriggerAftermath(of: 40, newestFirst: oldestFirst.reversed())
}

@Suite("what a trigger left at a restart, from the journal")
struct TriggerAftermathTests {
    @Test("firings since its last end are pending, oldest first; its latest command has no note")
    func pending() {
        let left = aftermath([
            note(1, "trigger-fired"), fired(2), note(3, "trigger-ended"), note(4, "trigger-fired"), fired(5),
            note(6, "trigger-fired"), fired(7),
        ])
        #expect(left.firingsSinceEnd.map(\.seq) == [5, 7])
        #expect(left.unfinishedCommand?.seq == 7)
        #expect(left.firedSinceChanged)
    }

    @Test("an ended run and a noted command leave nothing; a change after the firing says it is not that firing's")
    func finished() {
        let done = aftermath([note(1, "trigger-fired"), fired(2), note(3, "trigger-command"), note(4, "trigger-ended")])
        #expect(done.firingsSinceEnd.isEmpty && done.unfinishedCommand == nil && done.firedSinceChanged)
        let changedSince = aftermath([note(1, "trigger-fired"), fired(2), changed(3)])
        #expect(changedSince.unfinishedCommand == nil && !changedSince.firedSinceChanged)
        #expect(changedSince.firingsSinceEnd.map(\.seq) == [2], "its end still comes")
    }

    @Test("firings without their note (a journal from before notes were found by trigger) are taken as finished")
    func olderJournal() {
        let old = aftermath([fired(1), fired(2)])
        #expect(old.firingsSinceEnd.isEmpty && old.unfinishedCommand == nil && !old.firedSinceChanged)
        let mixed = aftermath([fired(1), note(2, "trigger-fired"), fired(3)])
        #expect(mixed.firingsSinceEnd.map(\.seq) == [3] && mixed.unfinishedCommand?.seq == 3)
    }
}
