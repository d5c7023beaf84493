internal import HomeModel

/// `homectl history … --plot`: a numeric characteristic's values over a period as
/// a block chart, for people who would rather look than read. Each column is a
/// slice of the period and shows the value in force at its end (values hold
/// until they change), so a door's 0/1 and a temperature read alike.
enum HistoryPlot {
    static let height = 8
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    static func draw(
        _ events: [HomeEvent], target: String, names: Names, sinceMs: Int64?, untilMs: Int64, width: Int = 64
    ) throws(HomeError) {
        let points: [(timeMs: Int64, value: Double)] = events.compactMap { event in
            guard case .value(let change) = event.body, let number = change.value.number else { return nil }
            return (event.timeMs, number)
        }
        guard let first = points.first else {
            throw HomeError(.notFound, "no numeric values of \(quote(target)) in this period to plot")
        }
        for line in lines(points, fromMs: sinceMs ?? first.timeMs, untilMs: untilMs, width: width) {
            Output.line(line)
        }
        if case .value(let change) = events.last(where: { if case .value = $0.body { true } else { false } })?.body {
            Output.line("\(names.place(of: change.characteristicID)): \(points.count) values")
        }
    }

    /// The chart's lines: rows from the top (the maximum) down, then the time axis.
    static func lines(_ points: [(timeMs: Int64, value: Double)], fromMs: Int64, untilMs: Int64, width: Int)
        -> [String]
    {
        let span = max(untilMs - fromMs, 1)
        var columns: [Double?] = Array(repeating: nil, count: width)
        var index = 0
        var current: Double?
        for column in 0..<width {
            // The last column takes everything up to the end, however late.
            let end = column == width - 1 ? Int64.max : fromMs + span * Int64(column + 1) / Int64(width)
            while index < points.count && points[index].timeMs <= end {
                current = points[index].value
                index += 1
            }
            columns[column] = current
        }
        let values = columns.compactMap { $0 }
        let low = values.min() ?? 0
        let high = values.max() ?? 0
        let range = high - low
        let label = { (value: Double) in value == value.rounded() ? String(Int64(value)) : String(format1(value)) }
        let gutter = max(label(high).count, label(low).count)
        var rows: [String] = []
        for row in (0..<height).reversed() {
            var text = ""
            for value in columns {
                guard let value else {
                    text.append(" ")
                    continue
                }
                // Eighths of a row filled below this point, from 1 (the minimum) up.
                let eighths =
                    range == 0 ? height * 4 : Int(((value - low) / range * Double(height * 8 - 1)).rounded()) + 1
                let filled = eighths - row * 8
                text.append(filled >= 8 ? "█" : filled <= 0 ? " " : blocks[filled - 1])
            }
            let side = row == height - 1 ? label(high) : row == 0 ? label(low) : ""
            rows.append(String(repeating: " ", count: gutter - side.count) + side + " ┤" + text)
        }
        let start = WatchText.clock(fromMs).prefix(5)
        let end = WatchText.clock(untilMs).prefix(5)
        let startDay = HistoryText.date(fromMs)
        let endDay = HistoryText.date(untilMs)
        let left = startDay == endDay ? String(start) : "\(startDay) \(start)"
        let right = startDay == endDay ? String(end) : "\(endDay) \(end)"
        let padding = max(1, width - left.count - right.count)
        rows.append(String(repeating: " ", count: gutter + 2) + left + String(repeating: " ", count: padding) + right)
        return rows
    }

    private static func format1(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int64(tenths)) : String(tenths)
    }
}

extension CharacteristicValue {
    /// The value as a number to plot: numbers as they are, a boolean as 0 or 1.
    var number: Double? {
        switch self {
        case .bool(let value): return value ? 1 : 0
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .float(let value): return value
        case .string, .data: return nil
        }
    }
}
