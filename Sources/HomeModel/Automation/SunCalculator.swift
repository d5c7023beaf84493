internal import Foundation

/// Sunrise and sunset at a place on a day, computed here from the sun's position.
///
/// Written by hand (NOAA's published solar-position equations, as in its solar
/// calculator) because no maintained Swift package for it is among the project's
/// dependencies, and the equations are short. Accurate to about a minute between
/// ±72° latitude; near the poles the times are less exact, and on a day the sun
/// stays up or down the answer says so instead of giving a time. Rise and set are
/// when the sun's upper edge crosses the horizon, with standard refraction (the
/// sun's centre at 90.833° from the zenith).
package enum SunCalculator {
    /// The sun's day at a place.
    package enum Day: Hashable, Sendable {
        /// Rises and sets, in milliseconds since the Unix epoch.
        case risesAndSets(sunriseMs: Int64, sunsetMs: Int64)
        /// Polar day: up all day, no sunrise or sunset.
        case alwaysUp
        /// Polar night: down all day, no sunrise or sunset.
        case alwaysDown

        package func time(of event: SunEvent) -> Int64? {
            guard case .risesAndSets(let sunrise, let sunset) = self else { return nil }
            return event == .sunrise ? sunrise : sunset
        }
    }

    /// The sun's day around the solar noon nearest `noonMs` (a local noon).
    package static func day(near noonMs: Int64, at location: GeoLocation) -> Day {
        // Two passes: the first finds the solar noon, the second computes the
        // sun's position at it (the declination changes little in a day).
        var solarNoonMs = noonMs
        var hourAngle = 0.0
        for _ in 0..<2 {
            let position = sunPosition(atMs: solarNoonMs)
            let minutesAfterUTCMidnight = 720 - 4 * location.longitude - position.equationOfTimeMinutes
            let dayMs: Int64 = 86_400_000
            let offsetMs = Int64((minutesAfterUTCMidnight * 60_000).rounded())
            // The UTC day whose solar noon is nearest the local noon.
            let dayIndex = ((Double(noonMs - offsetMs) / Double(dayMs))).rounded()
            solarNoonMs = Int64(dayIndex) * dayMs + offsetMs
            let latitude = location.latitude * .pi / 180
            let declination = position.declinationDegrees * .pi / 180
            let zenith = 90.833 * Double.pi / 180
            let cosine = cos(zenith) / (cos(latitude) * cos(declination)) - tan(latitude) * tan(declination)
            if cosine > 1 { return .alwaysDown }
            if cosine < -1 { return .alwaysUp }
            hourAngle = acos(cosine) * 180 / .pi
        }
        let halfDayMs = Int64((hourAngle * 4 * 60_000).rounded())
        return .risesAndSets(sunriseMs: solarNoonMs - halfDayMs, sunsetMs: solarNoonMs + halfDayMs)
    }

    /// The sun's declination and the equation of time at a moment.
    private static func sunPosition(atMs ms: Int64) -> (declinationDegrees: Double, equationOfTimeMinutes: Double) {
        let julianDay = Double(ms) / 86_400_000 + 2_440_587.5
        let t = (julianDay - 2_451_545) / 36_525  // Julian centuries since J2000.0
        func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
        let meanLongitude = (280.46646 + t * (36_000.76983 + t * 0.000_303_2)).truncatingRemainder(dividingBy: 360)
        let meanAnomaly = 357.52911 + t * (35_999.05029 - 0.000_153_7 * t)
        let eccentricity = 0.016_708_634 - t * (0.000_042_037 + 0.000_000_126_7 * t)
        let m = radians(meanAnomaly)
        let centre =
            sin(m) * (1.914_602 - t * (0.004_817 + 0.000_014 * t)) + sin(2 * m) * (0.019_993 - 0.000_101 * t)
            + sin(3 * m) * 0.000_289
        let omega = radians(125.04 - 1934.136 * t)
        let apparentLongitude = meanLongitude + centre - 0.005_69 - 0.004_78 * sin(omega)
        let meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.000_59 - t * 0.001_813))) / 60) / 60
        let obliquity = radians(meanObliquity + 0.002_56 * cos(omega))
        let declination = asin(sin(obliquity) * sin(radians(apparentLongitude)))
        let y = pow(tan(obliquity / 2), 2)
        let l0 = radians(meanLongitude)
        let equation =
            y * sin(2 * l0) - 2 * eccentricity * sin(m) + 4 * eccentricity * y * sin(m) * cos(2 * l0)
            - 0.5 * y * y * sin(4 * l0) - 1.25 * eccentricity * eccentricity * sin(2 * m)
        return (declination * 180 / .pi, 4 * equation * 180 / .pi)
    }
}
