import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: the stored journal (history)")
struct HistoryStorageTests {
    static let client = Origin(kind: .client, connectionID: 7, name: "homectl")

    static func value(_ seq: UInt64, _ characteristicID: ObjectID, _ value: CharacteristicValue, timeMs: Int64)
        -> HomeEvent
    {
        HomeEvent(
            seq: seq, timeMs: timeMs, origin: client,
            body: .value(ValueChange(accessoryID: 2, serviceID: 3, characteristicID: characteristicID, value: value)))
    }

    @Test("every kind of event survives the journal record, with its commit's time and origin")
    func recordRoundTrip() throws {
        let origin = Origin(kind: .client, connectionID: 12, name: "Good Night", uid: 1000)
        let bodies: [HomeEvent.Body] = [
            .value(
                ValueChange(accessoryID: 1, serviceID: 2, characteristicID: 3, value: .string("Küche 🏠"), merged: 4)),
            .value(ValueChange(accessoryID: 1 << 40, serviceID: 2, characteristicID: .max, value: .float(-0.5))),
            .reachability(accessoryID: 9, reachable: false),
            .layout(
                LayoutChange(
                    action: .moved, object: .accessory, objectID: 12, homeID: 1, name: "Lamp", parentID: 5)),
            .primaryHome(1), .actionSetExecuted(30), .triggerFired(31),
            .audit(AuditNote(action: "provider-connected", detail: "provider \"sysfs\" connected")),
            // With values: tag 8, which only a note with values is written as.
            .audit(
                AuditNote(
                    action: "trigger-fired", detail: "trigger 31 \"Evening\": its event",
                    values: [3: .int(80), 1 << 40: .data([0, 255]), 2: .string("Küche")])),
        ]
        let events = bodies.enumerated().map { index, body in
            HomeEvent(seq: 100 + UInt64(index), timeMs: 1_700_000_000_123, origin: origin, body: body)
        }
        let decoded = try JournalRecord.decode(
            JournalRecord.encode(events), firstSeq: 100, timeMs: 1_700_000_000_123)
        #expect(decoded == events)
        // A note without values keeps tag 7, which builds before tag 8 read. The tag
        // follows the head: version, "client", connection 12, "Good Night", uid 1000: 23 bytes.
        #expect(JournalRecord.encode([events[7]])[23] == 7)
        #expect(JournalRecord.encode([events[8]])[23] == 8)
    }

    @Test("a damaged journal record is refused naming its row and the byte at fault")
    func damagedRecord() throws {
        let bytes = JournalRecord.encode([Self.value(5, 1, .int(3), timeMs: 0)])
        #expect(throws: HomeError(.dataLoss, "journal row 5 ends early, at byte \(bytes.count - 1)")) {
            try JournalRecord.decode(Array(bytes.dropLast()), firstSeq: 5, timeMs: 0)
        }
        #expect(throws: HomeError(.dataLoss, "journal row 5 has unknown version 9")) {
            try JournalRecord.decode([9], firstSeq: 5, timeMs: 0)
        }
        // The head: version, origin kind "client", connection 7, name "homectl", no uid: 18 bytes.
        #expect(throws: HomeError(.dataLoss, "journal row 5: unknown event tag 77 at byte 18")) {
            try JournalRecord.decode(Array(bytes.prefix(18)) + [77], firstSeq: 5, timeMs: 0)
        }
    }

    @Test("a journal is begun, appended to, read by seq and time either way, and found again on reopening")
    func appendAndRead() throws {
        let scratch = try Scratch()
        let path = scratch.file("homed.sqlite")
        do {
            let database = try HomeDatabase.open(path: path)
            defer { database.close() }
            #expect(try database.storedJournal() == nil)
            try database.beginJournal(id: "j1")
            #expect(try database.storedJournal() == StoredJournal(id: "j1", lastSeq: 0))
            // Three commits: seq 1–2 at t=1000, 3 at t=2000, 4–6 at t=3000.
            try database.appendEvents(
                [Self.value(1, 10, .int(1), timeMs: 1000), Self.value(2, 11, .int(2), timeMs: 1000)],
                keepUntilMs: 10_000, values: [])
            try database.appendEvents([Self.value(3, 10, .int(3), timeMs: 2000)], keepUntilMs: 20_000, values: [])
            try database.appendEvents(
                (4...6).map { Self.value($0, 12, .int(Int64($0)), timeMs: 3000) }, keepUntilMs: 30_000, values: [])
            #expect(try database.events(HistoryQuery()).events.map(\.seq) == [1, 2, 3, 4, 5, 6])
            // After a seq in the middle of a commit: that commit's later events only.
            #expect(try database.events(HistoryQuery(afterSeq: 4)).events.map(\.seq) == [5, 6])
            #expect(try database.events(HistoryQuery(afterSeq: 1, beforeSeq: 5)).events.map(\.seq) == [2, 3, 4])
            #expect(try database.events(HistoryQuery(sinceMs: 2000, untilMs: 3000)).events.map(\.seq) == [3])
            #expect(
                try database.events(HistoryQuery(beforeSeq: 5, newestFirst: true)).events.map(\.seq) == [4, 3, 2, 1])
            let page = try database.events(HistoryQuery(commitLimit: 2))
            #expect(page.events.map(\.seq) == [1, 2, 3] && page.truncated)
            // Through the index: only the commits about characteristic 11, or accessory 2.
            #expect(try database.events(HistoryQuery(subjects: [11])).events.map(\.seq) == [1, 2])
            #expect(
                try database.events(HistoryQuery(newestFirst: true, subjects: [12])).events.map(\.seq) == [6, 5, 4])
            #expect(try database.events(HistoryQuery(subjects: [99])).events.isEmpty)
            // With times too: the commits of the subject stamped in the bounds.
            #expect(try database.events(HistoryQuery(sinceMs: 2000, subjects: [10])).events.map(\.seq) == [3])
            #expect(try database.events(HistoryQuery(untilMs: 2000, subjects: [10])).events.map(\.seq) == [1, 2])
            #expect(try database.events(HistoryQuery(sinceMs: 3001, subjects: [12])).events.isEmpty)
            // Several subjects, a page of one commit, newest first: the newest commit
            // of either, and the page says more follow; then the next one back.
            let first = try database.events(HistoryQuery(newestFirst: true, commitLimit: 1, subjects: [10, 12]))
            #expect(first.events.map(\.seq) == [6, 5, 4] && first.truncated)
            let next = try database.events(
                HistoryQuery(beforeSeq: 4, newestFirst: true, commitLimit: 1, subjects: [10, 12]))
            #expect(next.events.map(\.seq) == [3] && next.truncated)
            // Commit 1 holds characteristic 10's event and 11's: both come (the caller
            // filters); a subject whose page was full may have more, so one more ask
            // finds there is none.
            let last = try database.events(
                HistoryQuery(beforeSeq: 3, newestFirst: true, commitLimit: 1, subjects: [10, 12]))
            #expect(last.events.map(\.seq) == [2, 1])
            let none = try database.events(
                HistoryQuery(beforeSeq: 1, newestFirst: true, commitLimit: 1, subjects: [10, 12]))
            #expect(none.events.isEmpty && !none.truncated)
            #expect(try database.events(HistoryQuery(subjects: [2])).events.count == 6)
            #expect(try database.firstSeq(atOrAfter: 1500) == 3)
            #expect(try database.firstSeq(atOrAfter: 3001) == nil)
            #expect(try database.oldestStoredSeq() == 1)
        }
        let reopened = try HomeDatabase.open(path: path)
        defer { reopened.close() }
        #expect(try reopened.storedJournal() == StoredJournal(id: "j1", lastSeq: 6))
        let events = try reopened.events(HistoryQuery(afterSeq: 5)).events
        #expect(events == [Self.value(6, 12, .int(6), timeMs: 3000)])
    }

    @Test("a purge deletes the expired commits only, a step at a time; a new journal forgets the old one's events")
    func purgeAndNewJournal() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        defer { database.close() }
        try database.beginJournal(id: "j1")
        for seq in UInt64(1)...5 {
            try database.appendEvents(
                [Self.value(seq, 10, .int(Int64(seq)), timeMs: Int64(seq))], keepUntilMs: Int64(seq) * 100, values: [])
        }
        #expect(try database.purgeEvents(expiredBy: 300, limit: 2) == 2)
        #expect(try database.purgeEvents(expiredBy: 300, limit: 2) == 1)
        #expect(try database.purgeEvents(expiredBy: 300, limit: 2) == 0)
        #expect(try database.events(HistoryQuery()).events.map(\.seq) == [4, 5])
        #expect(try database.oldestStoredSeq() == 4)
        // The index goes with its commits: each of the two left is about 10, 3 and 2.
        let indexed = try database.withConnection { connection throws(HomeError) in
            try connection.integer("SELECT count(*) FROM journal_subjects", doing: "counting")
        }
        #expect(indexed == 6)
        // A commit's values and events in one call: both stored, in one transaction.
        try database.appendEvents(
            [Self.value(6, 10, .int(6), timeMs: 6)], keepUntilMs: 1000,
            values: [SavedValue(characteristicID: 10, value: .int(6))])
        #expect(try database.valueLogRows() == 1 && database.journalRows() == 3)
        try database.beginJournal(id: "j1")
        #expect(try database.journalRows() == 3, "the same journal again keeps its events")
        try database.beginJournal(id: "j2")
        #expect(try database.journalRows() == 0)
        #expect(try database.storedJournal() == StoredJournal(id: "j2", lastSeq: 0))
    }

    @Test("rollups merge with the slices already stored, move their watermark, and are purged by age")
    func rollups() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        defer { database.close() }
        try database.beginJournal(id: "j1")
        #expect(try database.rollupWatermark() == 0)
        var first = RollupAccumulator()
        first.add(characteristicID: 5, value: 10, at: 1_000)
        first.add(characteristicID: 5, value: 14, at: 2_000)
        try database.applyRollups(first.points, throughSeq: 2)
        var second = RollupAccumulator()
        second.add(characteristicID: 5, value: 6, at: 3_000)
        second.add(characteristicID: 5, value: 40, at: 400_000)
        try database.applyRollups(second.points, throughSeq: 4)
        #expect(try database.rollupWatermark() == 4)
        let slices = try database.rollups(
            characteristicID: 5, widthMs: 300_000, sinceMs: 0, untilMs: .max, limit: 10)
        #expect(slices.map(\.startMs) == [0, 300_000])
        #expect(slices[0].count == 3 && slices[0].min == 6 && slices[0].max == 14 && slices[0].sum == 30)
        #expect(slices[0].last == 6 && slices[0].lastMs == 3_000)
        let hours = try database.rollups(characteristicID: 5, widthMs: 3_600_000, sinceMs: 0, untilMs: .max, limit: 10)
        #expect(hours.count == 1 && hours[0].count == 4 && hours[0].last == 40)
        #expect(try database.purgeRollups(before: 300_000, limit: 10) == 2)
        #expect(
            try database.rollups(characteristicID: 5, widthMs: 300_000, sinceMs: 0, untilMs: .max, limit: 10).map(
                \.startMs) == [300_000])
        try database.beginJournal(id: "j2")
        #expect(try database.rollupWatermark() == 0, "a new journal's numbers start over")
    }
}
