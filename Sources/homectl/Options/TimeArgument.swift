internal import Foundation
internal import HomeModel

/// A point in time as people write it after --since and --until: how long ago
/// (`10m`, `2h`, `3d`, `1h30m`), a local date (`2026-11-20`: its midnight), a local
/// date and time (`2026-11-20T14:00`, `2026-11-20 14:00:05`), a time today
/// (`14:02`), or an ISO 8601 instant with its zone (`2026-11-20T13:00:00Z`).
enum TimeArgument {
    /// Now, in ms since the epoch.
    static func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// - Returns: ms since the epoch, or nil when `text` is none of those forms.
    static func parse(_ text: String, nowMs: Int64) -> Int64? {
        if let ago = DurationText.milliseconds(text) { return nowMs - ago }
        if let instant = ISO8601DateFormatter().date(from: text) {
            return Int64((instant.timeIntervalSince1970 * 1000).rounded())
        }
        let formats = [
            "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd",
        ]
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone.current
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        // A time of day: today's, local.
        for format in ["HH:mm:ss", "HH:mm"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone.current
            formatter.dateFormat = format
            guard let time = formatter.date(from: text) else { continue }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone.current
            let now = Date(timeIntervalSince1970: Double(nowMs) / 1000)
            let parts = calendar.dateComponents([.hour, .minute, .second], from: time)
            guard
                let today = calendar.date(
                    bySettingHour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0, of: now)
            else { return nil }
            return Int64((today.timeIntervalSince1970 * 1000).rounded())
        }
        return nil
    }

    /// Parses `text` given after `option`, refusing what is not a time and a time
    /// in the future.
    static func past(_ text: String, option: String, nowMs: Int64) throws(HomeError) -> Int64 {
        guard let ms = parse(text, nowMs: nowMs) else {
            throw HomeError(
                .invalidArgument,
                "\(option) '\(text)' is not a time: write how long ago (10m, 2h, 3d), a date (2026-11-20), "
                    + "a date and time (2026-11-20T14:00) or a time today (14:02)")
        }
        guard ms <= nowMs else {
            throw HomeError(.invalidArgument, "\(option) '\(text)' is in the future (\(isoTime(ms)))")
        }
        return ms
    }
}
