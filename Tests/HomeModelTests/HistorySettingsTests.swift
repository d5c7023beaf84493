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
