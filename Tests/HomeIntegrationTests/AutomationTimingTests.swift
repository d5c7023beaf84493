import Foundation
import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Logging
import Testing

@testable import HomeServer

/// Milliseconds since the epoch of an ISO 8601 UTC time.
private func ms(_ iso: String) -> Int64 {
    guard let date = ISO8601DateFormatter().date(from: iso) else { fatalError("bad test time \(iso)") }
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}

private let minute: Int64 = 60_000
private let hour: Int64 = 3_600_000

/// Value changes, firings, scene runs and audit notes (where firings say why).
private let withNotes: [EventKind] = [.valueChanged, .triggerFired, .actionSetExecuted, .audit]

extension HomeEvent {
    /// The audit note's action and detail, if it is one.
    fileprivate var note: AuditNote? { if case .audit(let note) = body { note } else { nil } }
}

extension DemoFixture {
    /// A trigger "Lamp on" that runs `scene` when the lamp goes on, and undoes it an hour later.
    fileprivate func lampOnUndoneAfterAnHour(_ scene: ObjectID) async throws -> ObjectID {
        try await client.addTrigger(
            name: "Lamp on", homeID: id,
            kind: .event(characteristicID: on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
            actionSetIDs: [scene], end: TriggerEnd(afterMs: hour, whenEventEnds: false)
        ).createdID
    }

    /// The lamp off, a scene "Dim" and a trigger "On for 10m" that runs it once
    /// the lamp has been on for ten minutes.
    fileprivate func dimAfterTenMinutesOn() async throws -> (scene: ObjectID, trigger: ObjectID) {
        _ = try await client.write(.bool(false), to: on)
        let scene = try await scene("Dim", [(brightness, .int(10))])
        let trigger = try await client.addTrigger(
            name: "On for 10m", homeID: id,
            kind: .event(characteristicID: on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
            actionSetIDs: [scene], holdMs: 10 * minute
        ).createdID
        return (scene, trigger)
    }
}

@Suite("automation across time, by an injected clock", .timeLimit(.safetyNet))
struct AutomationTimingTests {
    @Test("a value held for its duration fires once; leaving it restarts the wait")
    func holdRestarts() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let (scene, trigger) = try await home.dimAfterTenMinutesOn()
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client, kinds: withNotes)

            _ = try await client.write(.bool(true), to: home.on)
            try await clock.waitForSleeper(untilMs: start + 10 * minute)
            clock.advance(to: start + 5 * minute)
            _ = try await client.write(.bool(false), to: home.on)
            _ = try await client.write(.bool(true), to: home.on)
            try await clock.waitForSleeper(untilMs: start + 15 * minute)
            clock.advance(to: start + 10 * minute)
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger], "not 10 min after the first")

            clock.advance(to: start + 15 * minute)
            let fired = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(fired.firings == [trigger])
            #expect(
                fired.contains {
                    $0.note?.action == "trigger-fired" && $0.note?.detail.contains("held for its duration") == true
                })
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger], "once")
            await client.close()
        }
    }

    @Test(
        "a clock set back while a hold is pending: the hold completes by real time, and its note says the clock moved")
    func holdByRealTime() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let (scene, trigger) = try await home.dimAfterTenMinutesOn()
            var log = try await EventLog(client, kinds: withNotes)
            _ = try await client.write(.bool(true), to: home.on)
            try await clock.waitForSleeper(untilMs: start + 10 * minute)
            clock.advance(to: start + 4 * minute)
            // Set back an hour, four minutes in: six minutes of real time are left.
            clock.jump(to: start - 56 * minute)
            try await clock.waitForSleeper(untilMs: start - 50 * minute)
            clock.advance(to: start - 50 * minute)
            let fired = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(fired.firings == [trigger])
            #expect(
                fired.contains {
                    $0.note?.detail.contains(
                        "the wall clock moved back by 1h meanwhile: it held its duration by real time")
                        == true
                }, "\(fired.compactMap(\.note))")
            await client.close()
        }
    }

    @Test("a firing a time condition stops is in the history with its reason, and runs nothing")
    func conditionStopRecorded() async throws {
        let wednesday = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: wednesday)) { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            let trigger = try await client.addTrigger(
                name: "Weekend lamp", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
                condition: TimeCondition(days: [.saturday, .sunday], timeZone: "UTC")
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client, kinds: withNotes)

            _ = try await client.write(.bool(true), to: home.on)
            let events = try await log.events(through: sentinel)
            #expect(events.firings == [sentinel.trigger])
            let note = try #require(events.compactMap(\.note).first { $0.action == "trigger-not-fired" })
            #expect(note.detail.contains("trigger \(trigger) \"Weekend lamp\""))
            #expect(note.detail.contains("today (wed) is not one of its days (sat,sun)"))

            // The history keeps it: read back from the past, by the trigger's id.
            var filter = SubscriptionFilter()
            filter.kinds = [.audit]
            let past = try await client.readHistory(ReadHistoryRequest(filter: filter, limit: 100, newestFirst: true))
            #expect(past.events.contains { $0.note?.action == "trigger-not-fired" })
            await client.close()
        }
    }

    @Test("a timer whose characteristic condition does not hold at its time runs nothing, and the history says why")
    func timerConditionStops() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            let scene = try await home.scene("Dim", [(home.brightness, .int(5))])
            try await client.addTrigger(
                name: "If lit", homeID: home.id,
                kind: .timer(fireDateMs: start + minute, timeZone: "UTC", recurrence: .none), actionSetIDs: [scene],
                conditions: [CharacteristicCondition(characteristicID: home.on, comparison: .equal, value: .bool(true))]
            )
            var log = try await EventLog(client, kinds: withNotes)
            try await clock.waitForSleeper(untilMs: start + minute)
            clock.advance(to: start + minute)
            let events = try await log.events { $0.note?.action == "trigger-not-fired" }
            #expect(events.firings.isEmpty)
            #expect(
                events.last?.note?.detail.contains(
                    "its condition \(home.graph.path(of: home.on) ?? "?") == true does not hold (it is false)") == true,
                "\(String(describing: events.last?.note?.detail))")
            await client.close()
        }
    }

    @Test("07:00 on mon-fri, armed on a Friday afternoon, is next due on Monday")
    func weekdaysSkipWeekend() async throws {
        let friday = ms("2024-05-03T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: friday)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            try await client.addTrigger(
                name: "Workdays", homeID: home.id,
                kind: .timer(fireDateMs: ms("2024-05-03T07:00:00Z"), timeZone: "UTC", recurrence: .daily),
                condition: TimeCondition(days: try Weekdays(parsing: "mon-fri"), timeZone: "UTC"))
            try await clock.waitForSleeper(untilMs: ms("2024-05-06T07:00:00Z"))
            await client.close()
        }
    }

    /// Runs `body` with a daily timer armed from `start` by the injected clock, a
    /// log of firings and a sentinel (to show what did not fire).
    private func withDailyTimer(
        from start: Int64, firstAt fireDateMs: Int64, in timeZone: String,
        _ body: (ManualClock, inout EventLog, ObjectID, Sentinel) async throws -> Void
    ) async throws {
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let trigger = try await client.addTrigger(
                name: "Daily", homeID: home.id,
                kind: .timer(fireDateMs: fireDateMs, timeZone: timeZone, recurrence: .daily)
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client)
            try await body(clock, &log, trigger, sentinel)
            await client.close()
        }
    }

    @Test("02:30 Europe/Paris on the night 02:30 does not exist fires once, at 03:30 summer time, then Monday at 02:30")
    func springForwardFiresOnce() async throws {
        try await withDailyTimer(
            from: ms("2024-03-30T12:00:00Z"), firstAt: ms("2024-03-30T01:30:00Z"), in: "Europe/Paris"
        ) { clock, log, trigger, sentinel in
            try await clock.waitForSleeper(untilMs: ms("2024-03-31T01:30:00Z"))
            clock.advance(to: ms("2024-03-31T01:30:00Z"))
            #expect(try await log.events { $0.body == .triggerFired(trigger) }.firings == [trigger])
            try await clock.waitForSleeper(untilMs: ms("2024-04-01T00:30:00Z"))
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])
        }
    }

    @Test("02:30 Europe/Paris on the night 02:30 comes twice fires once, at the first")
    func fallBackFiresOnce() async throws {
        try await withDailyTimer(
            from: ms("2024-10-26T12:00:00Z"), firstAt: ms("2024-10-26T00:30:00Z"), in: "Europe/Paris"
        ) { clock, log, trigger, sentinel in
            try await clock.waitForSleeper(untilMs: ms("2024-10-27T00:30:00Z"))  // 02:30 CEST
            clock.advance(to: ms("2024-10-27T00:30:00Z"))
            #expect(try await log.events { $0.body == .triggerFired(trigger) }.firings == [trigger])
            // The second 02:30 (CET, 01:30 UTC) passes without a firing: the next is Monday's.
            try await clock.waitForSleeper(untilMs: ms("2024-10-28T01:30:00Z"))
            clock.advance(to: ms("2024-10-27T01:30:00Z"))
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])
        }
    }

    @Test("a clock set back after a firing does not fire the trigger again when it passes the moment a second time")
    func clockSetBack() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withDailyTimer(from: start, firstAt: start + hour, in: "UTC") { clock, log, trigger, sentinel in
            try await clock.waitForSleeper(untilMs: start + hour)
            clock.advance(to: start + hour)
            #expect(try await log.events { $0.body == .triggerFired(trigger) }.firings == [trigger])
            try await clock.waitForSleeper(untilMs: start + 25 * hour)
            clock.advance(to: start + 30 * minute)  // set back
            clock.advance(to: start + hour + minute)  // past 13:00 again
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])
            try await clock.waitForSleeper(untilMs: start + 25 * hour)
        }
    }

    @Test("an execute-once trigger fires, then disables itself; the next day it does not fire")
    func executeOnce() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let trigger = try await client.addTrigger(
                name: "Just once", homeID: home.id,
                kind: .timer(fireDateMs: start + hour, timeZone: "UTC", recurrence: .daily), executeOnce: true
            ).createdID
            var log = try await EventLog(client, kinds: [.triggerFired, .layoutChanged])
            try await clock.waitForSleeper(untilMs: start + hour)
            clock.advance(to: start + hour)
            let events = try await log.events {
                if case .layout(let change) = $0.body { change.objectID == trigger } else { false }
            }
            #expect(events.firings == [trigger])
            #expect(events.last?.origin == Origin(kind: .automation, name: "Just once"))
            #expect(server.store.snapshot().graph.triggers[trigger]?.isEnabled == false)
            await client.close()
        }
    }

    @Test(
        "an end when the event ends: 5 minutes after the lamp goes off the scene's brightness is undone; back on before that, nothing is"
    )
    func undoWhenEventEnds() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            _ = try await client.write(.int(30), to: home.brightness)
            let scene = try await home.scene("Bright", [(home.brightness, .int(90))])
            let trigger = try await client.addTrigger(
                name: "Motion light", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
                actionSetIDs: [scene], end: TriggerEnd(afterMs: 5 * minute, whenEventEnds: true)
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client, kinds: withNotes)
            func brightness() -> CharacteristicValue? {
                server.store.snapshot().graph.characteristics[home.brightness]?.value
            }

            _ = try await client.write(.bool(true), to: home.on)
            _ = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(brightness() == .int(90))
            // Off, then on again within the five minutes: the undo is off, the light stays.
            _ = try await client.write(.bool(false), to: home.on)
            try await clock.waitForSleeper(untilMs: start + 5 * minute)
            clock.advance(to: start + 2 * minute)
            _ = try await client.write(.bool(true), to: home.on)
            _ = try await log.events { $0.body == .actionSetExecuted(scene) }
            clock.advance(to: start + 5 * minute)
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])
            #expect(brightness() == .int(90))

            // Off for good: five minutes later the brightness from before the first firing is back.
            _ = try await client.write(.bool(false), to: home.on)
            try await clock.waitForSleeper(untilMs: start + 10 * minute)
            clock.advance(to: start + 10 * minute)
            let ended = try await log.events { $0.note?.action == "trigger-ended" }
            #expect(
                ended.last?.note?.detail.contains("trigger \(trigger) \"Motion light\": undo 5m after it ends") == true)
            let brightnessPath = try #require(home.graph.path(of: home.brightness))
            #expect(ended.last?.note?.detail.contains("restored \(brightnessPath) 30%") == true, "\(ended)")
            #expect(
                ended.contains {
                    $0.body == .value(home.change(home.brightness, .int(30)))
                        && $0.origin == Origin(kind: .automation, name: "Motion light")
                })
            #expect(brightness() == .int(30))
            await client.close()
        }
    }

    @Test("a trigger's trace: each run with why it fired or not, its scenes' changes, its end; NOT_FOUND for none")
    func trace() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.int(30), to: home.brightness)
            _ = try await client.write(.bool(false), to: home.on)
            let scene = try await home.scene("Evening", [(home.brightness, .int(90))])
            // An action whose condition does not hold: the trace says it was not written, and why.
            let hue = home.graph.id("Living Room/Lamp/Hue")
            _ = try await client.changeLayout(
                .addAction(
                    CharacteristicWriteAction(characteristicID: hue, value: .float(120), onlyIf: .float(300)),
                    actionSetID: scene))
            let trigger = try await client.addTrigger(
                name: "Lamp on", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil,
                    conditions: [
                        CharacteristicCondition(characteristicID: home.brightness, comparison: .less, value: .int(95))
                    ]),
                actionSetIDs: [scene], end: TriggerEnd(afterMs: hour, whenEventEnds: false)
            ).createdID
            var log = try await EventLog(client, kinds: withNotes)
            _ = try await client.write(.bool(true), to: home.on)
            try await clock.waitForSleeper(untilMs: start + hour)
            clock.advance(to: start + hour)
            _ = try await log.events { $0.note?.action == "trigger-ended" }
            _ = try await client.write(.int(99), to: home.brightness)
            _ = try await client.write(.bool(false), to: home.on)
            _ = try await client.write(.bool(true), to: home.on)
            _ = try await log.events { $0.note?.action == "trigger-not-fired" }

            let runs = try await client.traceTrigger(trigger).runs
            #expect(runs.count == 2, "\(runs)")
            let stopped = try #require(runs.first)
            #expect(!stopped.fired && stopped.cause.contains("does not hold (it is 99%)"), "\(stopped.cause)")
            let fired = try #require(runs.last)
            let onPath = try #require(home.graph.path(of: home.on))
            let brightnessPath = try #require(home.graph.path(of: home.brightness))
            #expect(fired.fired && fired.cause.hasPrefix("\(onPath) true (event "), "\(fired.cause)")
            #expect(fired.cause.contains("; \(brightnessPath) < 95% held (it was 30%)"), "\(fired.cause)")
            // The undo's write is the automation's change too.
            #expect(
                fired.steps.map(\.kind) == ["fired", "changed", "scene", "not-written", "changed", "ended"],
                "\(fired.steps)")
            let hueWrite = try #require(fired.steps.first { $0.kind == "not-written" })
            #expect(hueWrite.detail.contains("scene \"Evening\" did not write \(home.graph.path(of: hue) ?? "?")"))
            #expect(fired.steps.contains { $0.kind == "changed" && $0.detail == "\(brightnessPath) 90%" && $0.seq > 0 })
            #expect(fired.steps.last?.detail.contains("restored \(brightnessPath) 30%") == true)
            #expect(try await client.traceTrigger(trigger, limit: 1).runs.count == 1)

            let missing = await #expect(throws: HomeError.self) { try await client.traceTrigger(999_999) }
            #expect(missing?.code == .notFound && missing?.message == "no trigger 999999")
            await client.close()
        }
    }

    @Test("an end after a duration keeps a value someone else changed since, and says so")
    func undoKeepsOthersChanges() async throws {
        let start = ms("2024-05-01T12:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: start)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.int(30), to: home.brightness)
            _ = try await client.write(.bool(false), to: home.on)
            let scene = try await home.scene("Evening", [(home.brightness, .int(90)), (home.on, .bool(true))])
            try await client.addTrigger(
                name: "For an hour", homeID: home.id,
                kind: .timer(fireDateMs: start + minute, timeZone: "UTC", recurrence: .none),
                actionSetIDs: [scene], end: TriggerEnd(afterMs: hour, whenEventEnds: false))
            var log = try await EventLog(client, kinds: withNotes)
            try await clock.waitForSleeper(untilMs: start + minute)
            clock.advance(to: start + minute)
            _ = try await log.events { $0.body == .actionSetExecuted(scene) }
            _ = try await client.write(.int(50), to: home.brightness)  // someone else
            try await clock.waitForSleeper(untilMs: start + minute + hour)
            clock.advance(to: start + minute + hour)
            let note = try #require(try await log.events { $0.note?.action == "trigger-ended" }.last?.note)
            let onPath = try #require(home.graph.path(of: home.on))
            let brightnessPath = try #require(home.graph.path(of: home.brightness))
            #expect(note.detail.contains("restored \(onPath) "), "\(note.detail)")
            #expect(note.detail.contains("kept, changed since by someone else: \(brightnessPath)"), "\(note.detail)")
            let graph = server.store.snapshot().graph
            #expect(graph.characteristics[home.brightness]?.value == .int(50))
            #expect(graph.characteristics[home.on]?.value == .bool(false))
            await client.close()
        }
    }

    @Test("sunset-30m in Berlin at midsummer is due at 21:03 local, fires, and says why in the history")
    func sunsetTrigger() async throws {
        let noon = ms("2024-06-21T10:00:00Z")
        try await withAutomation(clock: ManualClock(nowMs: noon)) { server, clock in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            try await client.setLocation(GeoLocation(latitude: 52.52, longitude: 13.405), ofHome: home.id)
            let trigger = try await client.addTrigger(
                name: "Porch", homeID: home.id, kind: .sun(.sunset, offsetMs: -30 * minute, timeZone: "Europe/Berlin")
            ).createdID
            var log = try await EventLog(client, kinds: withNotes)
            // Published sunset: 21:33 CEST (19:33 UTC); computed here within three minutes.
            let due = try await clock.waitForSleeper(in: ms("2024-06-21T19:00:00Z")...ms("2024-06-21T19:06:00Z"))
            clock.advance(to: due)
            let events = try await log.events { $0.body == .triggerFired(trigger) }
            #expect(
                events.contains { $0.note?.action == "trigger-fired" && $0.note?.detail.contains("sunset-30m") == true }
            )
            await client.close()
        }
    }
}

@Suite("automation after homed was down", .timeLimit(.safetyNet))
struct AutomationCatchUpTests {
    @Test("a daily timer missed three times while homed was down fires once at start with catch-up, never with skip")
    func catchUpOrSkip() async throws {
        // The history's times are the store's (the real clock): the test's clock starts there.
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        try await withPatientServer { server in
            let first = ManualClock(nowMs: start)
            var engine = try await Self.start(server, first, AutomationLimits())
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let trigger = try await client.addTrigger(
                name: "One o'clock", homeID: home.id,
                kind: .timer(fireDateMs: start + hour, timeZone: "UTC", recurrence: .daily)
            ).createdID
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client, kinds: withNotes)
            try await first.waitForSleeper(untilMs: start + hour)
            first.advance(to: start + hour)
            #expect(try await log.events { $0.body == .triggerFired(trigger) }.firings == [trigger])
            engine.cancel()
            _ = await engine.result

            // Down for three days and a bit: catch-up fires it once, at start.
            engine = try await Self.start(
                server, ManualClock(nowMs: start + 74 * hour), AutomationLimits(catchUpMissed: true))
            let caught = try await log.events(through: sentinel)
            #expect(caught.firings == [trigger, sentinel.trigger])
            #expect(caught.contains { $0.note?.detail.contains("missed while homed was down") == true })
            engine.cancel()
            _ = await engine.result

            // Down again, skip (the default): nothing at start.
            engine = try await Self.start(server, ManualClock(nowMs: start + 150 * hour), AutomationLimits())
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])
            engine.cancel()
            _ = await engine.result
            await client.close()
        }
    }

    @Test("a hold begun before a restart completes at the time it would have; a value changed while down cancels it")
    func holdAcrossRestart() async throws {
        // The journal's times are the store's (the real clock): the test's clocks start there.
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        try await withPatientServer { server in
            let first = ManualClock(nowMs: start)
            var engine = try await Self.start(server, first, AutomationLimits())
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let (scene, trigger) = try await home.dimAfterTenMinutesOn()
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client, kinds: withNotes)
            _ = try await client.write(.bool(true), to: home.on)
            // When the lamp came on by the store's clock, which a restarted engine reads
            // back from the journal (on a busy machine, well after `start`).
            let onMs = try #require(server.store.snapshot().graph.characteristics[home.on]?.lastUpdatedMs)
            try await first.waitForSleeper(untilMs: start + 10 * minute)
            first.advance(to: start + 5 * minute)
            engine.cancel()
            _ = await engine.result

            // Back five minutes later: the hold goes on from when the lamp came on, not from now.
            let second = ManualClock(nowMs: start + 5 * minute)
            engine = try await Self.start(server, second, AutomationLimits())
            let due = try await second.waitForSleeper(in: (onMs + 10 * minute)...(onMs + 11 * minute))
            second.advance(to: due - 1)
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger], "not before its time")
            second.advance(to: due)
            let fired = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(fired.firings == [trigger])
            #expect(
                fired.contains { $0.note?.detail.contains("held for its duration across a restart of homed") == true },
                "\(fired.compactMap(\.note))")
            engine.cancel()
            _ = await engine.result

            // Off and on again while it is down, then back: the new hold is from the new change.
            _ = try await client.write(.bool(false), to: home.on)
            engine = try await Self.start(server, ManualClock(nowMs: due + hour), AutomationLimits())
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger], "off: nothing held")
            engine.cancel()
            _ = await engine.result
            await client.close()
        }
    }

    @Test("an end begun before a restart undoes at its time; one due while homed was down at start, or is skipped")
    func endAcrossRestart() async throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        try await withPatientServer { server in
            var engine = try await Self.start(server, ManualClock(nowMs: start), AutomationLimits())
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.int(30), to: home.brightness)
            _ = try await client.write(.bool(false), to: home.on)
            let scene = try await home.scene("Evening", [(home.brightness, .int(90))])
            let trigger = try await home.lampOnUndoneAfterAnHour(scene)
            let sentinel = try await home.sentinel()
            var log = try await EventLog(client, kinds: withNotes)
            let brightness = { server.store.snapshot().graph.characteristics[home.brightness]?.value }
            let brightnessPath = try #require(home.graph.path(of: home.brightness))

            _ = try await client.write(.bool(true), to: home.on)
            _ = try await log.events { $0.body == .actionSetExecuted(scene) }
            #expect(brightness() == .int(90))
            engine.cancel()
            _ = await engine.result

            // Back half an hour later: the undo is an hour after the firing, not after the restart.
            let second = ManualClock(nowMs: start + 30 * minute)
            engine = try await Self.start(server, second, AutomationLimits())
            let due = try await second.waitForSleeper(in: (start + hour)...(start + 2 * hour))
            second.advance(to: due)
            let ended = try #require(try await log.events { $0.note?.action == "trigger-ended" }.last?.note)
            #expect(
                ended.detail.contains("trigger \(trigger) \"Lamp on\": undo after 1h (begun before homed restarted)"))
            #expect(ended.detail.contains("restored \(brightnessPath) 30%"), "\(ended.detail)")
            #expect(brightness() == .int(30))
            engine.cancel()
            _ = await engine.result

            // Fired again; homed down past its end: undone at start by default ...
            try await Self.fireThenStop(server, home, scene: scene, at: start, log: &log)
            engine = try await Self.start(server, ManualClock(nowMs: start + 3 * hour), AutomationLimits())
            _ = try await log.events { $0.note?.action == "trigger-ended" }
            #expect(brightness() == .int(30))
            engine.cancel()
            _ = await engine.result

            // ... and with missed ends skipped, left as it is, with a note that says so.
            try await Self.fireThenStop(server, home, scene: scene, at: start, log: &log)
            engine = try await Self.start(
                server, ManualClock(nowMs: start + 3 * hour), AutomationLimits(runMissedEnds: false))
            let skipped = try #require(try await log.events { $0.note?.action == "trigger-ended" }.last?.note)
            #expect(skipped.detail.contains("skipped, it was due"), "\(skipped.detail)")
            #expect(brightness() == .int(90))
            #expect(try await log.events(through: sentinel).firings == [sentinel.trigger])
            engine.cancel()
            _ = await engine.result
            await client.close()
        }
    }

    @Test(
        "an execute-once trigger that fired before a restart is disabled at start; a command it ran is noted as interrupted"
    )
    func onceAndCommandAcrossRestart() async throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        try await withPatientServer { server in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let trigger = try await client.addTrigger(
                name: "Once", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
                executeOnce: true, command: TriggerCommand(program: "/bin/sleep", arguments: ["30"], timeoutMs: 60_000)
            ).createdID
            var log = try await EventLog(client, kinds: [.audit, .layoutChanged])
            // What a kill -9 right after the firing leaves: the firing journaled, the
            // trigger still enabled, its command's end never noted.
            let origin = Origin.automation(name: "Once", triggerChain: [trigger])
            server.store.audit("trigger-fired", detail: "trigger \(trigger) \"Once\": its event", origin: origin)
            _ = server.store.recordTriggerFired(trigger, origin: origin)
            let engine = try await Self.start(server, ManualClock(nowMs: start), AutomationLimits())
            let notes = try await log.events { event in
                if case .layout(let change) = event.body, change.objectID == trigger { return true }
                return false
            }
            #expect(server.store.snapshot().graph.triggers[trigger]?.isEnabled == false)
            let interrupted = try await log.events { $0.note?.action == "trigger-command" } + notes
            #expect(
                interrupted.contains {
                    $0.note?.detail.contains("/bin/sleep 30 was interrupted: homed stopped while it ran") == true
                },
                "\(interrupted.compactMap(\.note))")
            engine.cancel()
            _ = await engine.result

            // Started again: both are done, nothing is noted twice.
            let again = try await Self.start(server, ManualClock(nowMs: start), AutomationLimits())
            let journal = try server.store.pastEvents(HistoryQuery(subjects: [trigger])).events
            #expect(journal.filter { $0.note?.detail.contains("was interrupted") == true }.count == 1)
            #expect(journal.filter { if case .layout = $0.body { true } else { false } }.count == 2, "added, disabled")
            again.cancel()
            _ = await again.result
            await client.close()
        }
    }

    @Test("an end carried over a restart restores a value the history never had: the firing's note carries it")
    func endRestoresUnjournaledValue() async throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        try await withPatientServer { server in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            // The demo's seed brightness: never written, so no change of it is journaled.
            let seeded = try #require(server.store.snapshot().graph.characteristics[home.brightness]?.value)
            let journaled = try server.store.pastEvents(HistoryQuery(subjects: [home.brightness])).events
            #expect(!journaled.contains { if case .value = $0.body { true } else { false } })
            let scene = try await home.scene("Bright", [(home.brightness, .int(seeded == .int(100) ? 5 : 100))])
            let trigger = try await home.lampOnUndoneAfterAnHour(scene)
            var log = try await EventLog(client, kinds: withNotes)
            try await Self.fireThenStop(server, home, scene: scene, at: start, log: &log)
            let fired = try server.store.pastEvents(HistoryQuery(subjects: [trigger])).events.compactMap(\.note)
                .filter { $0.action == "trigger-fired" }
            #expect(fired.map(\.values) == [[home.brightness: seeded]])

            let later = ManualClock(nowMs: start + 30 * minute)
            let engine = try await Self.start(server, later, AutomationLimits())
            later.advance(to: try await later.waitForSleeper(in: (start + hour)...(start + 2 * hour)))
            let ended = try #require(try await log.events { $0.note?.action == "trigger-ended" }.last?.note)
            #expect(ended.detail.contains("restored"), "\(ended.detail)")
            #expect(server.store.snapshot().graph.characteristics[home.brightness]?.value == seeded)
            engine.cancel()
            _ = await engine.result
            await client.close()
        }
    }

    /// Turns the lamp off, starts an engine at `nowMs`, turns the lamp on, waits for
    /// `scene` to run and stops the engine: homed stopped with the firing's end to come.
    private static func fireThenStop(
        _ server: TestServer, _ home: DemoFixture, scene: ObjectID, at nowMs: Int64, log: inout EventLog
    ) async throws {
        _ = try await home.client.write(.bool(false), to: home.on)
        let engine = try await start(server, ManualClock(nowMs: nowMs), AutomationLimits())
        _ = try await home.client.write(.bool(true), to: home.on)
        _ = try await log.events { $0.body == .actionSetExecuted(scene) }
        engine.cancel()
        _ = await engine.result
    }

    /// Starts an engine on the server's store and returns once it has armed its timers.
    private static func start(_ server: TestServer, _ clock: ManualClock, _ limits: AutomationLimits) async throws
        -> Task<Void, any Error>
    {
        var logger = Logger(label: "automation-test")
        logger.logLevel = .critical
        let (ready, readiness) = AsyncStream.makeStream(of: Void.self)
        let engine = AutomationEngine(
            store: server.store, clock: clock, limits: limits, logger: logger, onReady: { readiness.finish() })
        let task = Task { try await engine.run() }
        for await _ in ready {}
        return task
    }
}
