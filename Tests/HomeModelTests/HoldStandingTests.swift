import Testing

@testable import HomeModel

/// Journal events for a door (characteristic 7) and a trigger (40) that fires once
/// the door has been open (1) for ten minutes.
private let door: ObjectID = 7
private let held = Trigger(
    id: 40, homeID: 1, name: "Door left open",
    kind: .event(characteristicID: door, value: .int(1), rangeMin: nil, rangeMax: nil, conditions: []),
    holdMs: 600_000)

private func value(_ seq: UInt64, _ value: Int64, at timeMs: Int64 = 0) -> HomeEvent {
    HomeEvent(
        seq: seq, timeMs: timeMs == 0 ? Int64(seq) * 1000 : timeMs, origin: .daemon,
        body: .value(ValueChange(accessoryID: 5, serviceID: 6, characteristicID: door, value: .int(value))))
}

private func changed(_ seq: UInt64) -> HomeEvent {
    HomeEvent(
        seq: seq, timeMs: Int64(seq) * 1000, origin: .daemon,
        body: .layout(LayoutChange(action: .updated, object: .trigger, objectID: 40, homeID: 1, name: "Door left open"))
    )
}

private func fired(_ seq: UInt64) -> HomeEvent {
    HomeEvent(seq: seq, timeMs: Int64(seq) * 1000, origin: .daemon, body: .triggerFired(40))
}

/// Newest first, as the journal is read back.
private func reckon(_ oldestFirst: [HomeEvent], current: Int64 = 1, complete: Bool = true) -> HoldStanding {
    HoldStanding.reckon(held, current: .int(current), newestFirst: oldestFirst.reversed(), complete: complete)
}

@Suite("a hold's standing, from the journal")
struct HoldStandingTests {
    @Test("opened after the trigger was made: holding since the change that opened it")
    func holding() {
        #expect(reckon([changed(1), value(2, 0), value(3, 1)]) == .holding(sinceMs: 3000, seq: 3))
        #expect(
            reckon([changed(1), value(2, 0), value(3, 1), value(4, 1)]) == .holding(sinceMs: 3000, seq: 3),
            "a report of the same value does not start it again")
    }

    @Test("open before the trigger was made or changed: it waits for the next change")
    func alreadyInState() {
        #expect(reckon([value(2, 0), value(3, 1), changed(4)]) == .alreadyInState)
        #expect(
            reckon([value(3, 1)], complete: true) == .alreadyInState,
            "a whole journal without the trigger's making: it was made before the journal began")
        #expect(reckon([value(3, 1)], complete: false) == .unknown, "the change before it is not read yet")
        #expect(reckon([changed(1)]) == .alreadyInState, "no change since it was made")
    }

    @Test("fired since it opened: it waits for the door to close and open again")
    func firedSinceEntering() {
        #expect(reckon([changed(1), value(2, 0), value(3, 1), fired(4)]) == .fired(seq: 4))
        #expect(
            reckon([changed(1), value(2, 1), fired(3), value(4, 0), value(5, 1)]) == .holding(sinceMs: 5000, seq: 5),
            "a firing before the door last opened does not count")
    }

    @Test("closed now, or a journal that does not reach back")
    func notWaitedForOrUnknown() {
        #expect(reckon([changed(1), value(2, 1), value(3, 0)], current: 0) == .notWaitedFor)
        #expect(reckon([value(3, 1), value(4, 1)], complete: false) == .unknown)
        #expect(reckon([], complete: false) == .unknown)
        #expect(
            HoldStanding.reckon(held, current: nil, newestFirst: [], complete: true) == .notWaitedFor,
            "no value yet")
    }

    @Test("a range: moving inside it goes on holding")
    func range() {
        var warm = held
        warm.kind = .event(characteristicID: door, value: nil, rangeMin: 25, rangeMax: nil, conditions: [])
        let events = [changed(1), value(2, 20), value(3, 26), value(4, 28)]
        #expect(
            HoldStanding.reckon(warm, current: .int(28), newestFirst: events.reversed(), complete: true)
                == .holding(sinceMs: 3000, seq: 3))
    }
}

@Suite("notes' times for people")
struct TimeNoteTests {
    @Test("today, yesterday, tomorrow, else the date, on the trigger's wall clock")
    func relative() {
        let noon: Int64 = 1_796_126_400_000  // 2026-12-01T12:00:00Z
        #expect(TimeNote.at(noon + 3_720_000, zone: "UTC", nowMs: noon) == "13:02 today")
        #expect(TimeNote.at(noon + 3_720_000, zone: "Europe/Berlin", nowMs: noon) == "14:02 today")
        #expect(TimeNote.at(noon - 86_400_000, zone: "UTC", nowMs: noon) == "12:00 yesterday")
        #expect(TimeNote.at(noon + 86_400_000, zone: "UTC", nowMs: noon) == "12:00 tomorrow")
        #expect(TimeNote.at(noon + 5 * 86_400_000, zone: "UTC", nowMs: noon) == "2026-12-06 12:00")
    }

    @Test(
        "a one-off time that has passed is refused when given; a time to come, a recurrence, or a disabled trigger pass"
    )
    func pastOneOff() throws {
        var graph = HomeGraph()
        let home = try graph.addHome(name: "Home")
        let noon: Int64 = 1_796_126_400_000
        let past = LayoutOperation.addTrigger(
            name: "Wake", homeID: home, kind: .timer(fireDateMs: noon - 60_000, timeZone: "UTC", recurrence: .none),
            actionSetIDs: [], enabled: true)
        #expect(throws: HomeError.self) { try past.refusePastOneOffTimer(in: graph, nowMs: noon) }
        do {
            try past.refusePastOneOffTimer(in: graph, nowMs: noon)
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(
                error.message == "trigger \"Wake\": its time, 11:59 today, has passed: it never fires "
                    + "(give a time to come, or a recurrence)")
        }
        for passing in [
            LayoutOperation.addTrigger(
                name: "Wake", homeID: home, kind: .timer(fireDateMs: noon + 60_000, timeZone: "UTC", recurrence: .none),
                actionSetIDs: [], enabled: true),
            .addTrigger(
                name: "Wake", homeID: home,
                kind: .timer(fireDateMs: noon - 60_000, timeZone: "UTC", recurrence: .daily),
                actionSetIDs: [], enabled: true),
            .addTrigger(
                name: "Wake", homeID: home, kind: .timer(fireDateMs: noon - 60_000, timeZone: "UTC", recurrence: .none),
                actionSetIDs: [], enabled: false),
        ] {
            try passing.refusePastOneOffTimer(in: graph, nowMs: noon)
        }
    }
}
