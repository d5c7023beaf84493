internal import Foundation

/// When a trigger is next due, and whether its time condition holds at a moment:
/// the calendar side of automation, pure (the engine passes the time in), shared
/// by the daemon and `homectl triggers` (its "next fire" column).
///
/// Days and windows are reckoned on the local calendar of the condition's (or the
/// trigger's) IANA time zone; one Foundation does not know counts as UTC.
package enum TriggerSchedule {
    /// The first moment strictly after `afterMs` at which a timer or sun trigger is
    /// due, or nil: an event trigger, a one-off timer that has passed, a sun
    /// trigger without a location, or (in polar regions) no sun event on any
    /// allowed day within a year.
    ///
    /// A timer is due at its occurrences that fall on one of its condition's days;
    /// a sun trigger at the sun's event plus its offset, each allowed local day the
    /// event happens (none on a day of polar day or night).
    package static func nextFire(of trigger: Trigger, location: GeoLocation?, after afterMs: Int64) -> Int64? {
        let days = trigger.condition.days
        switch trigger.kind {
        case .event:
            return nil
        case .timer(let fireDateMs, let timeZone, let recurrence):
            let calendar = Self.calendar(timeZone)
            var after = afterMs
            // An hourly timer restricted to one day a week is due within 7 × 24 steps.
            for _ in 0..<(7 * 24 + 2) {
                guard
                    let next = TimerSchedule.nextFireDate(
                        after: after, fireDateMs: fireDateMs, timeZone: timeZone, recurrence: recurrence)
                else { return nil }
                if days == .everyDay || days.contains(weekday(of: next, in: calendar)) { return next }
                after = next
            }
            return nil
        case .sun(let event, let offsetMs, let timeZone):
            guard let location else { return nil }
            let calendar = Self.calendar(timeZone)
            // The day whose event, moved by the offset, could still come after
            // `afterMs`: start a day before that, and look a year ahead at most
            // (polar night lasts months, never a year).
            guard var day = calendar.startOfDay(for: date(afterMs - offsetMs)).addingDays(-1, calendar) else {
                return nil
            }
            for _ in 0..<370 {
                if days.contains(weekday(of: ms(day), in: calendar)),
                    let noon = day.addingHours(12, calendar),
                    let eventMs = SunCalculator.day(near: ms(noon), at: location).time(of: event),
                    eventMs + offsetMs > afterMs
                {
                    return eventMs + offsetMs
                }
                guard let next = day.addingDays(1, calendar) else { return nil }
                day = next
            }
            return nil
        }
    }

    /// The moment the sun trigger's event happens on the local day of `ms` (for
    /// `homectl triggers`: today's actual time), or nil on a day it does not.
    package static func sunTime(
        _ event: SunEvent, offsetMs: Int64, timeZone: String, location: GeoLocation, onDayOf ms: Int64
    ) -> Int64? {
        let calendar = Self.calendar(timeZone)
        guard let noon = calendar.startOfDay(for: date(ms)).addingHours(12, calendar) else { return nil }
        return SunCalculator.day(near: Self.ms(noon), at: location).time(of: event).map { $0 + offsetMs }
    }

    /// Why the condition stops a firing at `nowMs`, or nil when it holds.
    ///
    /// The days are those of the local date at `nowMs`. A window's ends are that
    /// day's moments; when its end comes before its start it crosses midnight, and
    /// holds from the start to midnight and from midnight to the end. On a day
    /// without a sunrise or sunset (polar day or night), the sun's ends are taken
    /// so that the sun's window is as the sun is: in polar night "sunset–sunrise"
    /// holds all day and "sunrise–sunset" never; in polar day the reverse.
    package static func whyNot(_ condition: TimeCondition, at nowMs: Int64, location: GeoLocation?) -> String? {
        if condition.isAlways { return nil }
        let calendar = Self.calendar(condition.timeZone)
        let now = date(nowMs)
        let today = weekday(of: nowMs, in: calendar)
        if !condition.days.contains(today) {
            let name = Weekdays.names[(1...7).first { Weekdays(isoWeekday: $0) == today }.map { $0 - 1 } ?? 0]
            return "today (\(name)) is not one of its days (\(condition.days.text))"
        }
        guard let window = condition.window else { return nil }
        let midnight = calendar.startOfDay(for: now)
        let startMs = ms(midnight)
        let endMs = midnight.addingDays(1, calendar).map(ms) ?? startMs + 86_400_000
        let noonMs = midnight.addingHours(12, calendar).map(ms) ?? startMs + 43_200_000
        func moment(_ time: DayTime) -> Int64? {
            switch time {
            case .clock(let msOfDay):
                // Through the calendar: on a day with a daylight-saving change the
                // clock's 07:00 is not 7 × 3600 s after midnight.
                let seconds = Int(msOfDay / 1000)
                return calendar.date(
                    bySettingHour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60, of: midnight
                ).map(ms)
            case .sun(let event, let offsetMs):
                guard let location else { return nil }
                switch SunCalculator.day(near: noonMs, at: location) {
                case .risesAndSets(let sunrise, let sunset):
                    return (event == .sunrise ? sunrise : sunset) + offsetMs
                case .alwaysUp:
                    return event == .sunrise ? startMs : endMs
                case .alwaysDown:
                    return event == .sunrise ? endMs : startMs
                }
            }
        }
        guard let from = moment(window.from), let to = moment(window.to) else {
            return "the home has no location, so the sun's times are unknown"
        }
        let inside = from <= to ? (from <= nowMs && nowMs < to) : (nowMs >= from || nowMs < to)
        return inside ? nil : "it is outside its window \(window.from.text)–\(window.to.text)"
    }

    /// The day of the week of a moment, on a calendar.
    static func weekday(of ms: Int64, in calendar: Calendar) -> Weekdays {
        // Foundation numbers Sunday 1 … Saturday 7.
        let weekday = calendar.component(.weekday, from: date(ms))
        return Weekdays(isoWeekday: weekday == 1 ? 7 : weekday - 1)
    }

    static func calendar(_ timeZone: String) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimerSchedule.timeZone(named: timeZone) ?? TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }

    private static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
    private static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}

extension Date {
    fileprivate func addingDays(_ days: Int, _ calendar: Calendar) -> Date? {
        calendar.date(byAdding: .day, value: days, to: self)
    }

    fileprivate func addingHours(_ hours: Int, _ calendar: Calendar) -> Date? {
        calendar.date(bySettingHour: hours, minute: 0, second: 0, of: self)
    }
}
