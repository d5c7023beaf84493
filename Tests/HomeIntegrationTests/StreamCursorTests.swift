import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

/// The client's resume bookkeeping, message by message (no daemon needed).
@Suite("stream cursor")
struct StreamCursorTests {
    static func value(_ seq: UInt64, _ characteristic: ObjectID, _ value: Int64) -> HomeEvent {
        HomeEvent(
            seq: seq, timeMs: 0, origin: .simulator,
            body: .value(
                ValueChange(
                    accessoryID: 1, serviceID: 2, characteristicID: characteristic, value: .int(value))))
    }

    static func message(_ events: [HomeEvent], resumeAfter: UInt64? = nil, marker: StreamMarker? = nil)
        -> SubscribeResponse
    {
        SubscribeResponse(journalID: "j", events: events, marker: marker, resumeAfter: resumeAfter)
    }

    @Test("without held values the resume point is the highest sequence number received")
    func plainStream() {
        var cursor = StreamCursor()
        #expect(cursor.resumeSeq == nil)
        #expect(cursor.accept(Self.message([], marker: StreamMarker(kind: .subscribed, seq: 4))).isEmpty)
        #expect(cursor.resumeSeq == 4)
        #expect(cursor.accept(Self.message([Self.value(5, 10, 1), Self.value(6, 11, 1)])).map(\.seq) == [5, 6])
        #expect(cursor.resumeSeq == 6)
        #expect(cursor.journalID == "j")
        // A resumed stream starts with SUBSCRIBED at the resume point: nothing changes.
        _ = cursor.accept(Self.message([], marker: StreamMarker(kind: .subscribed, seq: 6)))
        #expect(cursor.resumeSeq == 6)
    }

    @Test(
        "while a value is held the resume point stays below it, and the replay repeats nothing and regresses no value")
    func heldValues() {
        var cursor = StreamCursor(journalID: "j", resumeSeq: 4)
        // Characteristic 10 changed at 5 and 8, held back; 9 at 7 is held too.
        // 11 at 6, and 10's merged value at 8 once released while 9 is still held.
        #expect(cursor.accept(Self.message([Self.value(6, 11, 1)], resumeAfter: 4)).map(\.seq) == [6])
        #expect(cursor.accept(Self.message([Self.value(8, 10, 2)], resumeAfter: 6)).map(\.seq) == [8])
        #expect(cursor.resumeSeq == 6)
        #expect(cursor.highestSeq == 8)
        // Disconnected. The resume from 6 replays 7, 8 and newer; a new stream may
        // send 10's older value (5 is below the resume point, so not replayed here,
        // but 8 is), and 9's held value at 7 is new.
        _ = cursor.accept(Self.message([], marker: StreamMarker(kind: .subscribed, seq: 6)))
        let replay = cursor.accept(Self.message([Self.value(7, 9, 3), Self.value(8, 10, 2), Self.value(10, 11, 4)]))
        #expect(replay.map(\.seq) == [7, 10], "8 was delivered before the disconnect")
        #expect(cursor.resumeSeq == 10)
    }

    @Test("an older value of a characteristic whose later value was delivered is dropped on replay")
    func noStaleValue() {
        var cursor = StreamCursor(journalID: "j", resumeSeq: 2)
        // 10 held since 3; then 10's later value at 6 delivered (merged) while 20 is still held since 4.
        _ = cursor.accept(Self.message([Self.value(5, 30, 1)], resumeAfter: 2))
        _ = cursor.accept(Self.message([Self.value(6, 10, 9)], resumeAfter: 3))
        // A replay from 3 sends 10's change at 4... older than the 6 delivered: dropped.
        let replay = cursor.accept(
            Self.message([Self.value(4, 20, 1), Self.value(5, 30, 1), Self.value(6, 10, 9), Self.value(7, 10, 3)]))
        #expect(replay.map(\.seq) == [4, 7])
    }

    @Test("a resync or another journal forgets everything")
    func resyncForgets() {
        var cursor = StreamCursor(journalID: "j", resumeSeq: 2)
        _ = cursor.accept(Self.message([Self.value(5, 30, 1)], resumeAfter: 2))
        _ = cursor.accept(Self.message([], marker: StreamMarker(kind: .resync, seq: 50)))
        #expect(cursor.resumeSeq == 50)
        #expect(cursor.accept(Self.message([Self.value(5, 30, 1)])).count == 1, "a new start: nothing is remembered")
        var other = StreamCursor(journalID: "old", resumeSeq: 9)
        _ = other.accept(SubscribeResponse(journalID: "new", marker: StreamMarker(kind: .resync, seq: 3)))
        #expect(other.journalID == "new")
        #expect(other.resumeSeq == 3)
    }
}
