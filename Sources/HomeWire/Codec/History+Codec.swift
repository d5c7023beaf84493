internal import HomeModel

extension RollupPoint: WireConvertible {
    var wire: Proto.RollupPoint {
        Proto.RollupPoint(
            characteristicID: characteristicID, widthMs: widthMs, startMs: startMs, count: UInt64(Swift.max(count, 0)),
            min: min, max: max, sum: sum, last: last, lastMs: lastMs)
    }

    init(wire: Proto.RollupPoint) {
        self.init(
            characteristicID: wire.characteristicID, widthMs: wire.widthMs, startMs: wire.startMs,
            count: Int64(clamping: wire.count), min: wire.min, max: wire.max, sum: wire.sum, last: wire.last,
            lastMs: wire.lastMs)
    }
}
