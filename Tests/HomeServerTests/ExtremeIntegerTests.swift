import HomeModel
import Testing

@testable import HomeServer

/// Client-supplied integers at the extremes meet arithmetic without a trap.
@Suite("integers at the extremes")
struct ExtremeIntegerTests {
    static let extremes: [Int64] = [.min, .min + 1, -1, 0, 1, 1_700_000_000_000, .max - 1, .max]

    @Test("a timer's next fire date never traps, whatever its fire date and the time now")
    func timerSchedule() {
        for fireDate in Self.extremes {
            for now in Self.extremes {
                for recurrence in [Recurrence.none, .hourly, .daily, .weekly] {
                    let next = TimerSchedule.nextFireDate(
                        after: now, fireDateMs: fireDate, timeZone: "UTC",
                        recurrence: recurrence)
                    if let next { #expect(next > now, "\(fireDate) \(now) \(recurrence)") }
                }
            }
        }
        // The crash loop's own case: a date near Int64.min, reckoned from now.
        #expect(
            TimerSchedule.nextFireDate(
                after: 1_700_000_000_000, fireDateMs: .min + 5, timeZone: "UTC",
                recurrence: .hourly) == nil)
    }

    @Test("a timer trigger dated outside 1970…9999 is refused, naming the value and the range")
    func fireDateRange() throws {
        var graph = DemoHome.make(nowMs: 0)
        let home = try #require(graph.homeOrder.first)
        for date in [Int64.min, -1, TriggerKind.fireDateRange.upperBound + 1, .max] {
            let error = #expect(throws: HomeError.self) {
                _ = try graph.addTrigger(
                    name: "Bad \(date)", homeID: home,
                    kind: .timer(fireDateMs: date, timeZone: "UTC", recurrence: .hourly))
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("fire_date_ms \(date) is outside 0…253402300799999") == true)
        }
        for date in [TriggerKind.fireDateRange.lowerBound, TriggerKind.fireDateRange.upperBound] {
            _ = try graph.addTrigger(
                name: "Edge \(date)", homeID: home,
                kind: .timer(fireDateMs: date, timeZone: "UTC", recurrence: .weekly))
        }
    }
}
