import Foundation
import Testing

@testable import HomeModel

/// Milliseconds since the epoch of an ISO 8601 time such as "2026-06-21T02:43:00Z".
private func ms(_ iso: String) -> Int64 {
    guard let date = ISO8601DateFormatter().date(from: iso) else { fatalError("bad test time \(iso)") }
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}

private let berlin = GeoLocation(latitude: 52.52, longitude: 13.405)
private let sydney = GeoLocation(latitude: -33.87, longitude: 151.21)
private let newYork = GeoLocation(latitude: 40.71, longitude: -74.01)
private let tromso = GeoLocation(latitude: 69.65, longitude: 18.96)
private let minute: Int64 = 60_000

/// Whether `actual` is within `tolerance` of `expected`.
private func near(_ actual: Int64?, _ expected: Int64, within tolerance: Int64 = 3 * minute) -> Bool {
    guard let actual else { return false }
    return abs(actual - expected) <= tolerance
}

@Suite("trigger times: days, times of day, durations")
struct TriggerTimeTextTests {
    @Test("days of the week read as ranges, lists and names, a range may wrap past Sunday, and read back")
    func weekdays() throws {
        #expect(try Weekdays(parsing: "mon-fri") == [.monday, .tuesday, .wednesday, .thursday, .friday])
        #expect(try Weekdays(parsing: "sat,sun") == [.saturday, .sunday])
        #expect(try Weekdays(parsing: "weekends") == [.saturday, .sunday])
        #expect(try Weekdays(parsing: "fri-mon") == [.friday, .saturday, .sunday, .monday])
        #expect(try Weekdays(parsing: "Monday,wed-fri") == [.monday, .wednesday, .thursday, .friday])
        #expect(try Weekdays(parsing: "mon-fri").text == "mon-fri")
        #expect(try Weekdays(parsing: "sat,sun").text == "sat,sun")
        #expect(try Weekdays(parsing: "mon,wed-fri").text == "mon,wed-fri")
        #expect(Weekdays.everyDay.text == "every day")
        #expect(throws: HomeError.self) { try Weekdays(parsing: "mon-fry") }
        do {
            _ = try Weekdays(parsing: "mon,funday")
            Issue.record("funday is no day")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("\"funday\" is not a day"))
        }
    }

    @Test("times of day and sun times read and read back; out-of-range ones are refused naming the text")
    func dayTimes() throws {
        #expect(try DayTime(parsing: "07:00") == .clock(msOfDay: 7 * 3_600_000))
        #expect(try DayTime(parsing: "23:59:59") == .clock(msOfDay: 86_399_000))
        #expect(try DayTime(parsing: "sunset-30m") == .sun(.sunset, offsetMs: -30 * minute))
        #expect(try DayTime(parsing: "sunrise+1h15m") == .sun(.sunrise, offsetMs: 75 * minute))
        #expect(try DayTime(parsing: "sunset") == .sun(.sunset, offsetMs: 0))
        for text in ["07:00", "22:30:15", "sunset-30m", "sunrise+1h15m", "sunset"] {
            #expect(try DayTime(parsing: text).text == text)
        }
        for bad in ["24:00", "7", "07:60", "noon", "sunset+2d", "sunset30m", "sunrise-"] {
            do {
                _ = try DayTime(parsing: bad)
                Issue.record("\(bad) was taken")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains("\"\(bad)\""), "\(error.message)")
            }
        }
    }

    @Test("durations: units add up; zero, negative or unitless text is no duration above 0")
    func durations() {
        #expect(parseDurationMs("10m") == 600_000)
        #expect(parseDurationMs("1h30m") == 5_400_000)
        #expect(parseDurationMs("45s") == 45_000)
        #expect(parseDurationMs("500ms") == 500)
        #expect(parseDurationMs("0s") == 0)
        #expect(parseDurationMs("-5m") == nil)
        #expect(parseDurationMs("10") == nil)
        #expect(parseDurationMs("") == nil)
        #expect(formatDurationMs(5_400_000) == "1h30m")
        #expect(formatDurationMs(500) == "500ms")
    }
}

@Suite("sunrise and sunset, computed here")
struct SunCalculatorTests {
    private func day(_ iso: String, _ zone: String, _ location: GeoLocation) -> SunCalculator.Day {
        // The local noon of the day.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: ISO8601DateFormatter().date(from: iso)!)!
        return SunCalculator.day(near: Int64(noon.timeIntervalSince1970 * 1000), at: location)
    }

    @Test(
        "Berlin at midsummer, Sydney in its winter, New York at midwinter: within three minutes of the published times")
    func knownTimes() {
        // Published: Berlin 21 June, 04:43 and 21:33 CEST; Sydney 21 June, 07:00 and
        // 16:54 AEST; New York 21 December, 07:17 and 16:32 EST.
        let berlinDay = day("2026-06-21T10:00:00Z", "Europe/Berlin", berlin)
        #expect(near(berlinDay.time(of: .sunrise), ms("2026-06-21T02:43:00Z")))
        #expect(near(berlinDay.time(of: .sunset), ms("2026-06-21T19:33:00Z")))
        let sydneyDay = day("2026-06-21T02:00:00Z", "Australia/Sydney", sydney)
        #expect(near(sydneyDay.time(of: .sunrise), ms("2026-06-20T21:00:00Z")))
        #expect(near(sydneyDay.time(of: .sunset), ms("2026-06-21T06:54:00Z")))
        let newYorkDay = day("2026-12-21T17:00:00Z", "America/New_York", newYork)
        #expect(near(newYorkDay.time(of: .sunrise), ms("2026-12-21T12:17:00Z")))
        #expect(near(newYorkDay.time(of: .sunset), ms("2026-12-21T21:32:00Z")))
    }

    @Test("in Tromsø the sun stays up at midsummer and down at midwinter: no sunrise or sunset those days")
    func polar() {
        #expect(day("2026-06-21T10:00:00Z", "Europe/Oslo", tromso) == .alwaysUp)
        #expect(day("2026-12-21T10:00:00Z", "Europe/Oslo", tromso) == .alwaysDown)
        #expect(day("2026-12-21T10:00:00Z", "Europe/Oslo", tromso).time(of: .sunrise) == nil)
    }
}

@Suite("when a trigger is next due")
struct TriggerScheduleTests {
    private func trigger(_ kind: TriggerKind, days: Weekdays = .everyDay) -> Trigger {
        Trigger(
            id: 1, homeID: 1, name: "T", kind: kind, condition: TimeCondition(days: days, timeZone: "Europe/Berlin"))
    }

    @Test("07:00 on mon-fri: from Friday morning to Monday, the weekend skipped")
    func weekdaysOnly() {
        let first = ms("2026-11-23T06:00:00Z")  // Monday 07:00 CET
        let timer = trigger(
            .timer(fireDateMs: first, timeZone: "Europe/Berlin", recurrence: .daily),
            days: try! Weekdays(parsing: "mon-fri"))
        #expect(
            TriggerSchedule.nextFire(of: timer, location: nil, after: ms("2026-11-26T07:00:00Z"))
                == ms("2026-11-27T06:00:00Z"))
        #expect(
            TriggerSchedule.nextFire(of: timer, location: nil, after: ms("2026-11-27T06:00:00Z"))
                == ms("2026-11-30T06:00:00Z"))
    }

    @Test("02:30 daily on the night clocks skip 02:30 fires once, at 03:30 summer time, then at 02:30 again")
    func springForward() {
        // Europe/Berlin skips 02:00–03:00 on Sunday 29 March 2026.
        let first = ms("2026-03-27T01:30:00Z")  // Friday 02:30 CET
        let timer = trigger(.timer(fireDateMs: first, timeZone: "Europe/Berlin", recurrence: .daily))
        let saturday = ms("2026-03-28T01:30:00Z")
        let sunday = TriggerSchedule.nextFire(of: timer, location: nil, after: saturday)
        #expect(sunday == ms("2026-03-29T01:30:00Z"), "03:30 CEST, the documented time")
        let monday = sunday.flatMap { TriggerSchedule.nextFire(of: timer, location: nil, after: $0) }
        #expect(monday == ms("2026-03-30T00:30:00Z"), "02:30 CEST")
    }

    @Test("02:30 daily on the night 02:30 comes twice fires once, at the first")
    func fallBack() {
        // Europe/Berlin repeats 02:00–03:00 on Sunday 25 October 2026.
        let first = ms("2026-10-23T00:30:00Z")  // Friday 02:30 CEST
        let timer = trigger(.timer(fireDateMs: first, timeZone: "Europe/Berlin", recurrence: .daily))
        let sunday = TriggerSchedule.nextFire(of: timer, location: nil, after: ms("2026-10-24T12:00:00Z"))
        #expect(sunday == ms("2026-10-25T00:30:00Z"), "02:30 CEST, the first 02:30")
        let next = sunday.flatMap { TriggerSchedule.nextFire(of: timer, location: nil, after: $0) }
        #expect(next == ms("2026-10-26T01:30:00Z"), "not 02:30 CET the same night, but Monday's")
    }

    @Test("sunset-30m in Berlin is due half an hour before today's sunset, and tomorrow's after it")
    func sunWithOffset() {
        let sunset = trigger(.sun(.sunset, offsetMs: -30 * minute, timeZone: "Europe/Berlin"))
        let today = TriggerSchedule.nextFire(of: sunset, location: berlin, after: ms("2026-06-21T12:00:00Z"))
        #expect(near(today, ms("2026-06-21T19:03:00Z")))
        let tomorrow = today.flatMap { TriggerSchedule.nextFire(of: sunset, location: berlin, after: $0) }
        #expect(near(tomorrow, ms("2026-06-22T19:03:00Z")))
        #expect(TriggerSchedule.nextFire(of: sunset, location: nil, after: 0) == nil, "no location, no sun")
    }

    @Test("a sunset trigger in Tromsø at midsummer is next due when the sun sets again, in late July")
    func polarDaySkipsDays() {
        let sunset = trigger(.sun(.sunset, offsetMs: 0, timeZone: "Europe/Oslo"))
        let next = TriggerSchedule.nextFire(of: sunset, location: tromso, after: ms("2026-06-21T12:00:00Z"))
        #expect(next.map { $0 > ms("2026-07-15T00:00:00Z") && $0 < ms("2026-08-01T00:00:00Z") } == true)
    }

    @Test("a window across midnight holds from its start to its end; outside it the reason names the window")
    func windowAcrossMidnight() throws {
        let night = TimeCondition(
            window: (try DayTime(parsing: "22:00"), try DayTime(parsing: "06:00")), timeZone: "Europe/Berlin")
        #expect(TriggerSchedule.whyNot(night, at: ms("2026-11-26T22:00:00Z"), location: nil) == nil)  // 23:00
        #expect(TriggerSchedule.whyNot(night, at: ms("2026-11-26T04:59:00Z"), location: nil) == nil)  // 05:59
        #expect(
            TriggerSchedule.whyNot(night, at: ms("2026-11-26T05:00:00Z"), location: nil)
                == "it is outside its window 22:00–06:00")  // 06:00
        #expect(TriggerSchedule.whyNot(night, at: ms("2026-11-26T11:00:00Z"), location: nil) != nil)
    }

    @Test("sunset to sunrise holds at night; in polar night all day, in polar day never")
    func sunWindow() throws {
        let dark = TimeCondition(
            window: (.sun(.sunset, offsetMs: 0), .sun(.sunrise, offsetMs: 0)), timeZone: "Europe/Oslo")
        #expect(TriggerSchedule.whyNot(dark, at: ms("2026-11-26T11:00:00Z"), location: berlin) != nil)
        #expect(TriggerSchedule.whyNot(dark, at: ms("2026-11-26T23:00:00Z"), location: berlin) == nil)
        #expect(TriggerSchedule.whyNot(dark, at: ms("2026-12-21T11:00:00Z"), location: tromso) == nil)
        #expect(TriggerSchedule.whyNot(dark, at: ms("2026-06-21T23:00:00Z"), location: tromso) != nil)
        #expect(
            TriggerSchedule.whyNot(dark, at: 0, location: nil)
                == "the home has no location, so the sun's times are unknown")
    }

    @Test("days: on a day not among them, the reason names the day")
    func days() throws {
        let weekend = TimeCondition(days: try Weekdays(parsing: "sat,sun"), timeZone: "Europe/Berlin")
        #expect(
            TriggerSchedule.whyNot(weekend, at: ms("2026-11-25T12:00:00Z"), location: nil)
                == "today (wed) is not one of its days (sat,sun)")
        #expect(TriggerSchedule.whyNot(weekend, at: ms("2026-11-28T12:00:00Z"), location: nil) == nil)
    }
}

@Suite("trigger times: bad input is refused, naming it, and nothing changes")
struct TriggerTimingRefusalTests {
    private func expectRefused(
        _ graph: HomeGraph, _ code: HomeError.Code, _ fragment: String,
        sourceLocation: SourceLocation = #_sourceLocation, _ operation: (inout HomeGraph) throws -> Void
    ) {
        var copy = graph
        do {
            try operation(&copy)
            Issue.record("expected a refusal with \(fragment)", sourceLocation: sourceLocation)
        } catch {
            let error = error as? HomeError
            #expect(error?.code == code, sourceLocation: sourceLocation)
            #expect(
                error?.message.contains(fragment) == true, "\(String(describing: error))",
                sourceLocation: sourceLocation)
        }
        let unchanged = copy == graph
        #expect(unchanged, "the refused operation changed the graph", sourceLocation: sourceLocation)
    }

    @Test("time zones, locations, sun triggers without one, holds, windows and days")
    func refusals() throws {
        var graph = DemoHome.make(nowMs: 0)
        let on = id(graph, "Living Room/Lamp/On")
        let doorbell = id(graph, "Hallway/Doorbell/ProgrammableSwitchEvent")
        let lampOn = TriggerKind.event(
            characteristicID: on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: [])
        expectRefused(graph, .invalidArgument, "\"Mars/Olympus_Mons\" is not one this system knows") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "Mars/Olympus_Mons", recurrence: .daily))
        }
        expectRefused(graph, .failedPrecondition, "home \"Demo Home\" has none") {
            _ = try $0.addTrigger(name: "T", homeID: 1, kind: .sun(.sunset, offsetMs: 0, timeZone: "UTC"))
        }
        expectRefused(graph, .invalidArgument, "latitude 91 is outside -90…90") {
            _ = try $0.setLocation(GeoLocation(latitude: 91, longitude: 0), ofHome: 1)
        }
        expectRefused(graph, .invalidArgument, "longitude -181 is outside -180…180") {
            _ = try $0.setLocation(GeoLocation(latitude: 0, longitude: -181), ofHome: 1)
        }
        expectRefused(graph, .invalidArgument, "a hold of -1 ms is not a duration; give one above 0") {
            _ = try $0.addTrigger(name: "T", homeID: 1, kind: lampOn, holdMs: -1)
        }
        expectRefused(graph, .invalidArgument, "only an event trigger can wait") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .daily), holdMs: 60_000)
        }
        expectRefused(graph, .invalidArgument, "reports occurrences, which do not last") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1,
                kind: .event(characteristicID: doorbell, value: nil, rangeMin: nil, rangeMax: nil, conditions: []),
                holdMs: 60_000)
        }
        expectRefused(graph, .invalidArgument, "allows no day of the week") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: lampOn, condition: TimeCondition(days: [], timeZone: "UTC"))
        }
        expectRefused(graph, .invalidArgument, "the condition of trigger \"T\" needs an IANA time zone") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: lampOn, condition: TimeCondition(days: .monday, timeZone: "Nowhere"))
        }
        expectRefused(graph, .invalidArgument, "the window 22:00–22:00 is empty") {
            let ten = DayTime.clock(msOfDay: 22 * 3_600_000)
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: lampOn, condition: TimeCondition(window: (ten, ten), timeZone: "UTC"))
        }
        expectRefused(graph, .failedPrecondition, "needs the home's location") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: lampOn,
                condition: TimeCondition(
                    window: (.sun(.sunset, offsetMs: 0), .sun(.sunrise, offsetMs: 0)), timeZone: "UTC"))
        }

        expectRefused(graph, .invalidArgument, "only an event trigger has an event that ends") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .daily),
                end: TriggerEnd(afterMs: 0, whenEventEnds: true))
        }
        expectRefused(graph, .invalidArgument, "fires on any change, so its event never ends") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1,
                kind: .event(characteristicID: on, value: nil, rangeMin: nil, rangeMax: nil, conditions: []),
                end: TriggerEnd(afterMs: 0, whenEventEnds: true))
        }
        expectRefused(graph, .invalidArgument, "undoing -5 ms after is not a duration") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: lampOn, end: TriggerEnd(afterMs: -5, whenEventEnds: false))
        }

        let identify = id(graph, "Living Room/Lamp/Identify")
        expectRefused(graph, .invalidArgument, "cannot be read, so no condition can test it") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .daily),
                conditions: [
                    CharacteristicCondition(characteristicID: identify, comparison: .equal, value: .bool(true))
                ])
        }
        expectRefused(graph, .invalidArgument, "an event trigger's conditions are part of its event") {
            _ = try $0.addTrigger(
                name: "T", homeID: 1, kind: lampOn,
                conditions: [CharacteristicCondition(characteristicID: on, comparison: .equal, value: .bool(true))])
        }

        // With a location, a sun trigger is taken, and the location cannot be cleared under it.
        _ = try graph.setLocation(berlin, ofHome: 1)
        let porch = try graph.addTrigger(
            name: "Porch", homeID: 1, kind: .sun(.sunset, offsetMs: -30 * minute, timeZone: "Europe/Berlin"))
        expectRefused(graph, .invalidArgument, "its triggers \"Porch\" use the sun's times") {
            _ = try $0.setLocation(nil, ofHome: 1)
        }
        // A change refused in one part changes no part.
        expectRefused(graph, .invalidArgument, "an offset of 172800000 ms from sunset is more than a day") {
            _ = try $0.setTrigger(
                porch, kind: .sun(.sunset, offsetMs: 2 * 86_400_000, timeZone: "Europe/Berlin"),
                condition: TimeCondition(days: .monday, timeZone: "Europe/Berlin"), holdMs: 0)
        }
        #expect(
            try graph.setTrigger(
                porch, kind: .sun(.sunrise, offsetMs: 0, timeZone: "Europe/Berlin"),
                condition: TimeCondition(days: .monday, timeZone: "Europe/Berlin"), holdMs: 0
            ).count == 1)
        #expect(graph.triggers[porch]?.condition.days == .monday)
        try graph.checkIntegrity()
    }
}
