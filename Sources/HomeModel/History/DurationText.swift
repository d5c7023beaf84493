/// Durations as people write them on a command line or in a configuration file:
/// a whole number and a unit, `90s`, `10m`, `2h`, `10d`, `2w`, `1y` (365 days),
/// or several of them together (`1h30m`).
package enum DurationText {
    private static let unitsMs: [Character: Int64] = [
        "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000, "y": 365 * 86_400_000,
    ]

    /// The duration in milliseconds, or nil when `text` is not one (no unit, an
    /// unknown unit, a sign, nothing at all, or more than a thousand years).
    package static func milliseconds(_ text: String) -> Int64? {
        var total: Int64 = 0
        var number: Int64?
        for character in text {
            if let digit = character.wholeNumberValue, character.isASCII {
                let (shifted, overflow) = (number ?? 0).multipliedReportingOverflow(by: 10)
                guard !overflow, shifted <= Int64.max - Int64(digit) else { return nil }
                number = shifted + Int64(digit)
            } else if let unit = unitsMs[character], let value = number {
                let (part, overflow) = value.multipliedReportingOverflow(by: unit)
                guard !overflow else { return nil }
                total += part
                number = nil
            } else {
                return nil
            }
        }
        guard number == nil, !text.isEmpty, total <= 1000 * unitsMs["y"]! else { return nil }
        return total
    }

    /// "10d", "36h", "90m": the largest unit that divides the duration.
    package static func format(milliseconds: Int64) -> String {
        for (unit, size) in [
            ("y", unitsMs["y"]!), ("w", unitsMs["w"]!), ("d", unitsMs["d"]!), ("h", unitsMs["h"]!),
            ("m", unitsMs["m"]!), ("s", unitsMs["s"]!),
        ]
        where milliseconds >= size && milliseconds % size == 0 {
            return "\(milliseconds / size)\(unit)"
        }
        return "\(milliseconds)ms"
    }
}

extension HistoryRetention {
    /// Reads the settings of `history.*`: the default retention, the audit's, and
    /// overrides written `TYPE=DURATION` (a characteristic type's catalog name or
    /// UUID) or `accessory ID=DURATION`.
    ///
    /// - Throws: `.invalidArgument` naming the entry and what is wrong with it.
    package static func parse(
        default defaultText: String?, audit auditText: String?, rollups rollupText: String? = nil,
        keep entries: [String]
    ) throws(HomeError) -> HistoryRetention {
        func duration(_ text: String, _ what: String) throws(HomeError) -> Int64 {
            guard let ms = DurationText.milliseconds(text) else {
                throw HomeError(
                    .invalidArgument, "\(what): '\(text)' is not a duration (a number and a unit: 90m, 36h, 10d, 1y)")
            }
            return ms
        }
        var retention = HistoryRetention()
        if let defaultText { retention.defaultMs = try duration(defaultText, "history.retention") }
        retention.auditMs =
            try auditText.map { text throws(HomeError) in try duration(text, "history.audit_retention") }
            ?? retention.defaultMs
        if let rollupText { retention.rollupMs = try duration(rollupText, "history.rollup_retention") }
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
            guard parts.count == 2, !parts[0].isEmpty else {
                throw HomeError(
                    .invalidArgument, "history.keep entry '\(entry)': write TYPE=DURATION or 'accessory ID=DURATION'")
            }
            let keep = try duration(parts[1], "history.keep entry '\(entry)'")
            if parts[0].hasPrefix("accessory ") {
                guard let id = ObjectID(parts[0].dropFirst("accessory ".count).trimmingSpaces()) else {
                    throw HomeError(.invalidArgument, "history.keep entry '\(entry)': the accessory id is not a number")
                }
                retention.byAccessory[id] = keep
            } else if let type = HAPCatalog.characteristic(parts[0]) {
                retention.byType[type.uuid] = keep
            } else if let uuid = HAPCatalog.fullUUID(parts[0]) {
                retention.byType[uuid] = keep
            } else {
                throw HomeError(
                    .invalidArgument,
                    "history.keep entry '\(entry)': '\(parts[0])' is no characteristic type (a catalog name such as "
                        + "ContactSensorState, or a UUID)")
            }
        }
        try retention.validate()
        return retention
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
