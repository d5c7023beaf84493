/// A numeric characteristic's values over one slice of time (5 minutes or an
/// hour): kept longer than the events themselves, so that a week or a year can be
/// drawn without reading every change. Occurrences (a button press) and values
/// that are not numbers are never rolled up.
public struct RollupPoint: Sendable, Hashable {
    package static let widthsMs: [Int64] = [300_000, 3_600_000]

    public var characteristicID: ObjectID
    /// 300 000 (5 minutes) or 3 600 000 (an hour).
    public var widthMs: Int64
    /// Where the slice starts (ms since the epoch, a multiple of `widthMs`).
    public var startMs: Int64
    public var count: Int64
    public var min: Double
    public var max: Double
    public var sum: Double
    /// The last value in the slice, and when it came.
    public var last: Double
    public var lastMs: Int64

    public var mean: Double { count == 0 ? 0 : sum / Double(count) }

    public init(
        characteristicID: ObjectID, widthMs: Int64, startMs: Int64, count: Int64, min: Double, max: Double,
        sum: Double, last: Double, lastMs: Int64
    ) {
        self.characteristicID = characteristicID
        self.widthMs = widthMs
        self.startMs = startMs
        self.count = count
        self.min = min
        self.max = max
        self.sum = sum
        self.last = last
        self.lastMs = lastMs
    }

    /// The slice of `widthMs` a value at `timeMs` falls in, holding that value alone.
    package init(characteristicID: ObjectID, widthMs: Int64, value: Double, at timeMs: Int64) {
        let start = timeMs - ((timeMs % widthMs) + widthMs) % widthMs
        self.init(
            characteristicID: characteristicID, widthMs: widthMs, startMs: start, count: 1, min: value, max: value,
            sum: value, last: value, lastMs: timeMs)
    }

    /// Adds another point of the same slice (a later one wins `last`).
    package mutating func merge(_ other: RollupPoint) {
        count += other.count
        min = Swift.min(min, other.min)
        max = Swift.max(max, other.max)
        sum += other.sum
        if other.lastMs >= lastMs {
            last = other.last
            lastMs = other.lastMs
        }
    }
}

/// Folds value events into rollup points: the daemon's side of the rollups, with
/// no I/O. Which characteristics count is the caller's to say (numbers, not
/// occurrences).
package struct RollupAccumulator: Sendable {
    package private(set) var points: [RollupPoint] = []
    private var index: [Key: Int] = [:]

    private struct Key: Hashable {
        var characteristicID: ObjectID
        var widthMs: Int64
        var startMs: Int64
    }

    package init() {}

    package mutating func add(characteristicID: ObjectID, value: Double, at timeMs: Int64) {
        for width in RollupPoint.widthsMs {
            let point = RollupPoint(characteristicID: characteristicID, widthMs: width, value: value, at: timeMs)
            let key = Key(characteristicID: characteristicID, widthMs: width, startMs: point.startMs)
            if let at = index[key] {
                points[at].merge(point)
            } else {
                index[key] = points.count
                points.append(point)
            }
        }
    }
}
