import Foundation
import HomeModel
import Testing

@testable import HomeServer

/// Milliseconds since the epoch of an ISO 8601 UTC time such as "2024-03-31T05:00:00Z".
private func ms(_ iso: String) -> Int64 {
    guard let date = ISO8601DateFormatter().date(from: iso) else { fatalError("bad test time \(iso)") }
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}

@Suite("timer recurrence")
struct TimerScheduleTests {
    @Test("daily at 07:00 Europe/Paris stays at 07:00 local time when summer time starts and ends")
    func dailyAcrossDST() {
        // Saturday 30 March 2024 07:00 CET is 06:00 UTC; on Sunday clocks go forward.
        let first = ms("2024-03-30T06:00:00Z")
        func next(after: Int64, from anchor: Int64 = first) -> Int64? {
            TimerSchedule.nextFireDate(after: after, fireDateMs: anchor, timeZone: "Europe/Paris", recurrence: .daily)
        }
        #expect(next(after: first - 1) == first)
        #expect(next(after: first) == ms("2024-03-31T05:00:00Z"), "Sunday 07:00 CEST: 23 hours later")
        #expect(next(after: ms("2024-03-31T05:00:00Z")) == ms("2024-04-01T05:00:00Z"))
        #expect(next(after: ms("2024-06-15T12:00:00Z")) == ms("2024-06-16T05:00:00Z"))
        // Clocks go back on Sunday 27 October: 07:00 CET is 06:00 UTC again, 25 hours later.
        #expect(next(after: ms("2024-10-26T05:00:00Z")) == ms("2024-10-27T06:00:00Z"))
        #expect(next(after: ms("2024-10-27T06:00:00Z")) == ms("2024-10-28T06:00:00Z"))
    }

    @Test("a daily time that does not exist on the day clocks spring forward does not drag the next days")
    func nonexistentLocalTime() {
        // 02:30 Europe/Paris, from Saturday 30 March 2024 (01:30 UTC); Sunday has no 02:30.
        let first = ms("2024-03-30T01:30:00Z")
        let sunday = TimerSchedule.nextFireDate(
            after: first, fireDateMs: first, timeZone: "Europe/Paris",
            recurrence: .daily)
        let monday = sunday.flatMap {
            TimerSchedule.nextFireDate(after: $0, fireDateMs: first, timeZone: "Europe/Paris", recurrence: .daily)
        }
        #expect(sunday.map { $0 > first && $0 < ms("2024-03-31T12:00:00Z") } == true)
        #expect(monday == ms("2024-04-01T00:30:00Z"), "Monday 02:30 CEST")
    }

    @Test("weekly keeps the local time and weekday across a DST change")
    func weeklyAcrossDST() {
        let first = ms("2024-03-30T06:00:00Z")  // Saturday 07:00 CET
        #expect(
            TimerSchedule.nextFireDate(
                after: first, fireDateMs: first, timeZone: "Europe/Paris",
                recurrence: .weekly) == ms("2024-04-06T05:00:00Z"))
        #expect(
            TimerSchedule.nextFireDate(
                after: ms("2024-04-10T00:00:00Z"), fireDateMs: first,
                timeZone: "Europe/Paris", recurrence: .weekly) == ms("2024-04-13T05:00:00Z"))
    }

    @Test("hourly counts real hours, so the hour clocks skip is not fired twice or missed")
    func hourlyAcrossDST() {
        let first = ms("2024-03-31T00:00:00Z")  // 01:00 CET; 02:00 CET becomes 03:00 CEST
        #expect(
            TimerSchedule.nextFireDate(
                after: first, fireDateMs: first, timeZone: "Europe/Paris",
                recurrence: .hourly) == ms("2024-03-31T01:00:00Z"))
        #expect(
            TimerSchedule.nextFireDate(
                after: ms("2024-03-31T03:59:59Z"), fireDateMs: first,
                timeZone: "Europe/Paris", recurrence: .hourly) == ms("2024-03-31T04:00:00Z"))
    }

    @Test("a one-off timer fires at its moment and never after it")
    func oneOff() {
        let moment = ms("2024-05-01T10:00:00Z")
        #expect(
            TimerSchedule.nextFireDate(after: moment - 1, fireDateMs: moment, timeZone: "UTC", recurrence: .none)
                == moment)
        #expect(
            TimerSchedule.nextFireDate(after: moment, fireDateMs: moment, timeZone: "UTC", recurrence: .none) == nil)
    }

    @Test("a time zone Foundation does not know is reckoned in UTC")
    func unknownTimeZone() {
        let first = ms("2024-03-30T07:00:00Z")
        #expect(!TimerSchedule.knowsTimeZone("Mars/Olympus_Mons"))
        #expect(
            TimerSchedule.nextFireDate(
                after: first, fireDateMs: first, timeZone: "Mars/Olympus_Mons",
                recurrence: .daily) == ms("2024-03-31T07:00:00Z"))
    }
}

@Suite("timer table")
struct TimerTableTests {
    private func graph(with kinds: [(name: String, kind: TriggerKind, enabled: Bool)]) throws -> (HomeGraph, [ObjectID])
    {
        var graph = HomeGraph()
        let home = try graph.addHome(name: "Home")
        var ids: [ObjectID] = []
        for entry in kinds {
            ids.append(try graph.addTrigger(name: entry.name, homeID: home, kind: entry.kind, enabled: entry.enabled))
        }
        return (graph, ids)
    }

    @Test("a one-off timer in the past is never armed; a future one fires once")
    func oneOffs() throws {
        let now = ms("2024-05-01T12:00:00Z")
        let (graph, ids) = try graph(with: [
            ("past", .timer(fireDateMs: now - 60_000, timeZone: "UTC", recurrence: .none), true),
            ("future", .timer(fireDateMs: now + 60_000, timeZone: "UTC", recurrence: .none), true),
            ("disabled", .timer(fireDateMs: now + 30_000, timeZone: "UTC", recurrence: .none), false),
        ])
        var table = TimerTable()
        table.rescan(graph, nowMs: now)
        #expect(table.earliestMs == now + 60_000)
        #expect(table.takeDue(nowMs: now + 59_999).isEmpty)
        #expect(table.takeDue(nowMs: now + 60_000) == [TimerTable.Due(triggerID: ids[1], scheduledMs: now + 60_000)])
        #expect(table.earliestMs == nil)
        table.rescan(graph, nowMs: now + 70_000)
        #expect(table.earliestMs == nil, "an unchanged timer that fired is not armed again")
    }

    @Test("a recurring timer that missed several moments fires once, then resumes its rhythm")
    func missedMoments() throws {
        let start = ms("2024-05-01T07:00:00Z")
        let (graph, ids) = try graph(with: [
            ("hourly", .timer(fireDateMs: start, timeZone: "UTC", recurrence: .hourly), true)
        ])
        var table = TimerTable()
        table.rescan(graph, nowMs: start - 1000)
        let late = start + 3 * 3_600_000 + 5
        #expect(table.takeDue(nowMs: late) == [TimerTable.Due(triggerID: ids[0], scheduledMs: start)])
        #expect(table.earliestMs == start + 4 * 3_600_000)
    }

    @Test("a changed timer is armed anew; a renamed one keeps its place; a removed one is dropped")
    func changes() throws {
        let now = ms("2024-05-01T12:00:00Z")
        var (graph, ids) = try graph(with: [
            ("t", .timer(fireDateMs: now + 1000, timeZone: "UTC", recurrence: .none), true)
        ])
        var table = TimerTable()
        #expect(table.rescan(graph, nowMs: now) == ids)
        _ = try graph.renameTrigger(ids[0], to: "renamed")
        #expect(table.rescan(graph, nowMs: now).isEmpty)
        _ = try graph.setTrigger(ids[0], kind: .timer(fireDateMs: now + 5000, timeZone: "UTC", recurrence: .none))
        #expect(table.rescan(graph, nowMs: now) == ids)
        #expect(table.earliestMs == now + 5000)
        _ = try graph.removeTrigger(ids[0])
        table.rescan(graph, nowMs: now)
        #expect(table.armed.isEmpty)
    }
}

@Suite("event trigger rules")
struct EventTriggerRuleTests {
    @Test("a value trigger fires when the characteristic becomes the value, not when it already was")
    func valueTransition() {
        let rule = EventTriggerRule(triggerID: 1, characteristicID: 2, value: .bool(true))
        #expect(rule.fires(from: .bool(false), to: .bool(true)))
        #expect(rule.fires(from: nil, to: .bool(true)))
        #expect(!rule.fires(from: .bool(true), to: .bool(false)))
        #expect(!rule.fires(from: .bool(true), to: .bool(true)))
        #expect(rule.fires(from: .bool(true), to: .bool(true), occurrence: true), "every doorbell press counts")
    }

    @Test("a threshold fires on entering its range, not while inside it, and again after leaving it")
    func rangeTransition() {
        let rule = EventTriggerRule(triggerID: 1, characteristicID: 2, rangeMin: 25, rangeMax: 30)
        #expect(!rule.fires(from: .float(20), to: .float(24.9)))
        #expect(rule.fires(from: .float(24.9), to: .float(25)))
        #expect(!rule.fires(from: .float(25), to: .float(28)))
        #expect(!rule.fires(from: .float(28), to: .float(31)))
        #expect(rule.fires(from: .float(31), to: .float(30)))
        let above = EventTriggerRule(triggerID: 1, characteristicID: 2, rangeMin: 25)
        #expect(above.fires(from: nil, to: .float(1000)))
        #expect(!above.fires(from: .float(26), to: .float(1000)))
    }

    @Test("a trigger with neither value nor range fires on every change")
    func anyChange() {
        let rule = EventTriggerRule(triggerID: 1, characteristicID: 2)
        #expect(rule.fires(from: .int(1), to: .int(2)))
    }

    @Test("conditions compare numbers across representations and fail on a missing value")
    func conditions() {
        func holds(_ comparison: Comparison, _ value: CharacteristicValue, current: CharacteristicValue?) -> Bool {
            EventTriggerRule.holds(
                CharacteristicCondition(characteristicID: 9, comparison: comparison, value: value),
                current: current)
        }
        #expect(holds(.equal, .uint(1), current: .int(1)))
        #expect(holds(.equal, .bool(true), current: .bool(true)))
        #expect(holds(.notEqual, .string("a"), current: .string("b")))
        #expect(holds(.less, .float(20), current: .float(19.5)))
        #expect(!holds(.greaterOrEqual, .float(20), current: .float(19.5)))
        #expect(holds(.lessOrEqual, .int(3), current: .uint(3)))
        #expect(!holds(.equal, .bool(true), current: nil))
        #expect(!holds(.less, .string("b"), current: .string("a")), "strings have no order here")
    }
}
