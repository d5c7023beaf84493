/// Where a home is, for the sun's times.
public struct GeoLocation: Hashable, Sendable {
    /// Degrees north (negative: south), -90…90.
    public var latitude: Double
    /// Degrees east (negative: west), -180…180.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Refuses a latitude or longitude out of range (or not a number), naming it.
    package func checked() throws(HomeError) -> GeoLocation {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw HomeError(.invalidArgument, "latitude \(formatNumber(latitude)) is outside -90…90 degrees")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw HomeError(.invalidArgument, "longitude \(formatNumber(longitude)) is outside -180…180 degrees")
        }
        return self
    }
}

/// "10m", "1h30m", "45s", "2h", "500ms" in milliseconds; nil if it is not one.
package func parseDurationMs(_ text: String) -> Int64? {
    var total: Int64 = 0
    var number: Int64?
    var index = text.startIndex
    var any = false
    while index < text.endIndex {
        let character = text[index]
        if let digit = character.wholeNumberValue, character.isASCII {
            let (shifted, overflow) = (number ?? 0).multipliedReportingOverflow(by: 10)
            if overflow || shifted > Int64.max / 1_000_000 { return nil }
            number = shifted + Int64(digit)
            index = text.index(after: index)
            continue
        }
        guard let value = number else { return nil }
        let rest = text[index...]
        let unit: Int64
        if rest.hasPrefix("ms") {
            unit = 1
            index = text.index(index, offsetBy: 2)
        } else {
            switch character {
            case "s": unit = 1000
            case "m": unit = 60_000
            case "h": unit = 3_600_000
            case "d": unit = 86_400_000
            default: return nil
            }
            index = text.index(after: index)
        }
        total += value * unit
        number = nil
        any = true
    }
    return any && number == nil ? total : nil
}

/// "1h15m", "30m", "45s", "500ms": the shortest form `parseDurationMs` reads back.
package func formatDurationMs(_ ms: UInt64) -> String {
    if ms == 0 { return "0s" }
    if ms % 1000 != 0 { return "\(ms)ms" }
    var seconds = ms / 1000
    var text = ""
    for (unit, size) in [("d", UInt64(86_400)), ("h", 3600), ("m", 60), ("s", 1)] where seconds >= size {
        text += "\(seconds / size)\(unit)"
        seconds %= size
    }
    return text
}
