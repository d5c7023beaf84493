import Foundation
import HomeModel
import Testing

@testable import HomeStorage

/// The write-ahead log is copied into the file on a second connection, so that a
/// writer does not wait for it (`WALCheckpointer`); a writer that never pauses
/// copies the little that is left itself past a bound, so the log stays bounded.
@Suite("Storage: the log copied in the background")
struct CheckpointTests {
    /// One commit of about one page: a text value of 2 000 bytes.
    static func commit(_ seq: UInt64) -> HomeEvent {
        HistoryStorageTests.value(seq, 10, .string(String(repeating: "x", count: 2_000)), timeMs: Int64(seq))
    }

    static func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    @Test("commits past 1 000 pages of log are copied into the file without the writer; the log stays bounded")
    func copiedAndBounded() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let database = try HomeDatabase.open(path: file)
        try database.beginJournal(id: "j1")
        let fileBefore = Self.size(file)
        // Until the log holds about 1 200 pages: past the background copy's
        // threshold, short of the writer's own. Only a checkpoint writes the file.
        var seq: UInt64 = 0
        while Self.size(file + "-wal") < 1_200 * (4_096 + 24) {
            seq += 1
            try database.appendEvents([Self.commit(seq)], keepUntilMs: 1_000_000, values: [])
        }
        let deadline = Date().addingTimeInterval(patience)
        while Self.size(file) <= fileBefore + 100_000 && Date() < deadline { usleep(10_000) }
        #expect(
            Self.size(file) > fileBefore + 100_000,
            "nothing was copied into the file (\(Self.size(file)) bytes, \(fileBefore) before)")

        // Back to back, 8 000 commits more (some 24 000 pages): the log stays bounded,
        // at about twice the writer's bound (what is written while a background copy
        // is under way and the writer's own must wait for it). How far past the
        // writer's bound it goes is what the writer commits during one background
        // copy, which a busy machine slows (the copy syncs the file, the writer does
        // not): the check is three times the writer's bound, well short of the
        // 24 000 pages a log that is never started over would hold here.
        var largestLog = 0
        for _ in 1...8_000 {
            seq += 1
            try database.appendEvents([Self.commit(seq)], keepUntilMs: 1_000_000, values: [])
            largestLog = max(largestLog, Self.size(file + "-wal"))
        }
        let bound = 3 * Int(WALCheckpointer.writerPages) * (4_096 + 24)
        #expect(largestLog <= bound, "the log reached \(largestLog) bytes (bound \(bound))")
        #expect(try database.journalRows() == Int(seq))
        database.close()
        #expect(scratch.listing == ["homed.sqlite"], "closing copies the whole log and removes it")
        let reopened = try HomeDatabase.open(path: file)
        defer { reopened.close() }
        #expect(try reopened.journalRows() == Int(seq))
    }

    @Test("a copy starts once the log holds 1 000 pages more than the last copy left; none while one runs")
    func copyCadence() {
        var cadence = WALCopyCadence()
        func startsCopy(_ pages: Int32) -> Bool { cadence.startsCopy(afterCommitLeaving: pages, threshold: 1_000) }
        #expect(!startsCopy(999))
        #expect(startsCopy(1_000))
        // Steady writers keep the log past the threshold: no second copy while one runs…
        #expect(!startsCopy(1_100))
        cadence.copyEnded(copied: 1_000)
        // …nor after it, until 1 000 pages more.
        #expect(!startsCopy(1_999))
        #expect(startsCopy(2_000))
        // A copy that could not copy (the file busy) is asked again at the next commit.
        cadence.copyEnded(copied: nil)
        #expect(startsCopy(2_001))
        cadence.copyEnded(copied: 2_001)
        // The log started over: counted from its start again.
        #expect(!startsCopy(10))
        #expect(cadence.copiedPages == 0)
        #expect(startsCopy(1_010))
    }
}
