internal import Foundation

/// When a timer trigger fires: at its fire date, then every hour, day or week,
/// reckoned in its own time zone.
///
/// Days and weeks are calendar days in the trigger's IANA time zone, so "daily at
/// 07:00 Europe/Paris" stays at 07:00 local time across a daylight-saving change
/// (the gap between two firings is then 23 or 25 hours). Hours are real hours.
/// Each occurrence is reckoned from the fire date, not from the previous one, so a
/// time that does not exist on one day (02:30 when clocks spring forward, which
/// becomes 03:30) does not drag the following days with it.
package enum TimerSchedule {
    /// The first moment strictly after `afterMs` at which the timer fires, or nil
    /// if it never fires again (a one-off timer whose moment has passed).
    ///
    /// ```swift
    /// // Daily at 07:00 in Paris, from 2024-03-30 (the day before summer time):
    /// let next = TimerSchedule.nextFireDate(after: sundayAt06h00, fireDateMs: saturdayAt07h00,
    ///                                       timeZone: "Europe/Paris", recurrence: .daily)
    /// // next is Sunday 07:00 CEST: 23 hours after Saturday's firing.
    /// ```
    ///
    /// - Parameters:
    ///   - afterMs: milliseconds since the Unix epoch.
    ///   - fireDateMs: the first firing, milliseconds since the Unix epoch.
    ///   - timeZone: an IANA name; one Foundation does not know counts as UTC.
    ///   - recurrence: how often it repeats.
    package static func nextFireDate(
        after afterMs: Int64, fireDateMs: Int64, timeZone: String,
        recurrence: Recurrence
    ) -> Int64? {
        if fireDateMs > afterMs { return fireDateMs }
        // Any Int64 may come from a database written by another build: arithmetic
        // that would overflow means "never again", never a trap.
        let (elapsed, overflow) = afterMs.subtractingReportingOverflow(fireDateMs)
        if overflow { return nil }
        switch recurrence {
        case .none:
            return nil
        case .hourly:
            let hour: Int64 = 3_600_000
            let (hours, overflowMultiplying) = (elapsed / hour + 1).multipliedReportingOverflow(by: hour)
            let (next, overflowAdding) = fireDateMs.addingReportingOverflow(hours)
            return overflowMultiplying || overflowAdding ? nil : next
        case .daily:
            return nextCalendarOccurrence(
                after: afterMs, elapsed: elapsed, fireDateMs: fireDateMs, stepDays: 1,
                timeZone: timeZone)
        case .weekly:
            return nextCalendarOccurrence(
                after: afterMs, elapsed: elapsed, fireDateMs: fireDateMs, stepDays: 7,
                timeZone: timeZone)
        }
    }

    /// The time zone a trigger names, if Foundation knows it.
    static func timeZone(named name: String) -> TimeZone? {
        TimeZone(identifier: name)
    }

    /// Whether the system knows the IANA time zone `name`.
    package static func knowsTimeZone(_ name: String) -> Bool {
        timeZone(named: name) != nil
    }

    private static func nextCalendarOccurrence(
        after afterMs: Int64, elapsed: Int64, fireDateMs: Int64, stepDays: Int,
        timeZone: String
    ) -> Int64? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = Self.timeZone(named: timeZone) ?? TimeZone(identifier: "UTC") ?? calendar.timeZone
        let anchor = Date(timeIntervalSince1970: Double(fireDateMs) / 1000)
        func occurrence(_ index: Int) -> Int64? {
            let (days, overflow) = index.multipliedReportingOverflow(by: stepDays)
            guard !overflow, let date = calendar.date(byAdding: .day, value: days, to: anchor) else { return nil }
            return Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded())
        }
        // Daylight saving moves an occurrence by an hour at most, so starting one
        // period before the estimate finds it within three steps; a few more are
        // allowed, and past them (dates so far out that the calendar's arithmetic
        // loses precision) the timer never fires again rather than looping.
        let period = Int64(stepDays) * 86_400_000
        let first = max(0, Int(elapsed / period) - 1)
        for index in first..<(first + 8) {
            guard let candidate = occurrence(index) else { return nil }
            if candidate > afterMs { return candidate }
        }
        return nil
    }
}
