import Testing

@testable import HomeModel

@Suite("History settings: durations and retention")
struct HistorySettingsTests {
    @Test(
        "durations as people write them",
        arguments: [
            ("90s", Int64(90_000)), ("10m", 600_000), ("2h", 7_200_000), ("1h30m", 5_400_000), ("10d", 864_000_000),
            ("2w", 1_209_600_000), ("1y", 31_536_000_000),
        ])
    func durations(text: String, ms: Int64) {
        #expect(DurationText.milliseconds(text) == ms)
    }

    @Test("what is not a duration", arguments: ["", "10", "m", "-5m", "10x", "1.5h", "5 m", "99999999999999999999y"])
    func notDurations(text: String) {
        #expect(DurationText.milliseconds(text) == nil)
    }

    @Test("a retention is formatted with its largest whole unit")
    func format() {
        #expect(DurationText.format(milliseconds: 864_000_000) == "10d")
        #expect(DurationText.format(milliseconds: 5_400_000) == "90m")
        #expect(DurationText.format(milliseconds: 31_536_000_000) == "1y")
    }

    @Test("overrides by type (name or UUID) and by accessory; a commit keeps its longest")
    func overrides() throws {
        let retention = try HistoryRetention.parse(
            default: "10d", audit: "30d",
            keep: ["ContactSensorState=1y", "accessory 12 = 1d", "00000025-0000-1000-8000-0026BB765291=2d"])
        #expect(retention.defaultMs == 864_000_000 && retention.auditMs == 2_592_000_000)
        #expect(retention.byType["0000006A-0000-1000-8000-0026BB765291"] == 31_536_000_000)
        #expect(retention.byType["00000025-0000-1000-8000-0026BB765291"] == 172_800_000)
        #expect(retention.byAccessory[12] == 86_400_000)
    }

    @Test("bad settings name the entry and what is wrong")
    func badSettings() {
        #expect(
            throws: HomeError(
                .invalidArgument,
                "history.retention: 'ten days' is not a duration (a number and a unit: 90m, 36h, 10d, 1y)")
        ) { try HistoryRetention.parse(default: "ten days", audit: nil, keep: []) }
        #expect(
            throws: HomeError(
                .invalidArgument,
                "history retention (the default) is 0 ms: it must be positive (to keep no history, turn it off)")
        ) { try HistoryRetention.parse(default: "0d", audit: nil, keep: []) }
        #expect(
            throws: HomeError(
                .invalidArgument,
                "history.keep entry 'Doorbell=1y': 'Doorbell' is no characteristic type (a catalog name such as "
                    + "ContactSensorState, or a UUID)")
        ) { try HistoryRetention.parse(default: nil, audit: nil, keep: ["Doorbell=1y"]) }
        #expect(
            throws: HomeError(
                .invalidArgument,
                "history.keep entry 'ContactSensorState': write TYPE=DURATION or 'accessory ID=DURATION'")
        ) { try HistoryRetention.parse(default: nil, audit: nil, keep: ["ContactSensorState"]) }
        #expect(
            throws: HomeError(.invalidArgument, "history.keep entry 'accessory x=1d': the accessory id is not a number")
        ) { try HistoryRetention.parse(default: nil, audit: nil, keep: ["accessory x=1d"]) }
    }
}

@Suite("Rollups: slices of numeric values")
struct RollupTests {
    @Test("a value falls in the 5-minute and the hourly slice that hold its time, before the epoch too")
    func slices() {
        let point = RollupPoint(characteristicID: 7, widthMs: 300_000, value: 21.5, at: 1_700_000_123_456)
        #expect(point.startMs == 1_700_000_100_000 && point.count == 1 && point.mean == 21.5)
        #expect(RollupPoint(characteristicID: 7, widthMs: 3_600_000, value: 1, at: -1).startMs == -3_600_000)
    }

    @Test("values of one slice merge: count, min, max, sum, and the latest as last whatever the order")
    func merge() {
        var accumulator = RollupAccumulator()
        accumulator.add(characteristicID: 7, value: 20, at: 1_000)
        accumulator.add(characteristicID: 7, value: 24, at: 3_000)
        accumulator.add(characteristicID: 7, value: 18, at: 2_000)
        accumulator.add(characteristicID: 8, value: 5, at: 1_000)
        accumulator.add(characteristicID: 7, value: 30, at: 300_000)  // the next 5 minutes, the same hour
        let fiveMinutes = accumulator.points.filter { $0.characteristicID == 7 && $0.widthMs == 300_000 }
        #expect(fiveMinutes.map(\.count) == [3, 1])
        #expect(fiveMinutes[0].min == 18 && fiveMinutes[0].max == 24 && fiveMinutes[0].sum == 62)
        #expect(fiveMinutes[0].last == 24 && fiveMinutes[0].lastMs == 3_000)
        let hour = accumulator.points.first { $0.characteristicID == 7 && $0.widthMs == 3_600_000 }
        #expect(hour?.count == 4 && hour?.max == 30 && hour?.last == 30)
        #expect(accumulator.points.count == 5)  // 7: two 5-minute slices and an hour; 8: one of each
    }
}
