import Testing

@testable import HomeModel

@Suite("Home graph: a conditional write's condition")
struct WriteConditionTests {
    /// The demo home with the lamp's brightness (80) last changed at seq 12.
    private static func home() -> (graph: HomeGraph, brightness: ObjectID) {
        var graph = DemoHome.make(nowMs: 100)
        let brightness = id(graph, "Living Room/Lamp/Brightness")
        graph.markChanged(at: graph.characteristics.index(forKey: brightness)!, seq: 12)
        return (graph, brightness)
    }

    @Test("the value it holds, in any kind its format takes, and the seq of its last change hold")
    func holds() throws {
        let (graph, brightness) = Self.home()
        try graph.checkCondition(WriteCondition(value: .int(80)), for: brightness, journalID: "j1")
        try graph.checkCondition(WriteCondition(value: .uint(80)), for: brightness, journalID: "j1")
        try graph.checkCondition(WriteCondition(seq: 12), for: brightness, journalID: "j1")
        try graph.checkCondition(
            WriteCondition(value: .int(80), seq: 12, journalID: "j1"), for: brightness, journalID: "j1")
        let on = id(graph, "Living Room/Lamp/On")
        try graph.checkCondition(WriteCondition(value: .int(1)), for: on, journalID: "j1")
        try graph.checkCondition(WriteCondition(seq: 0), for: on, journalID: "j1")
    }

    @Test("another value: FAILED_PRECONDITION naming the current value and its seq")
    func otherValue() {
        let (graph, brightness) = Self.home()
        let error = #expect(throws: HomeError.self) {
            try graph.checkCondition(WriteCondition(value: .int(30)), for: brightness, journalID: "j1")
        }
        #expect(error?.code == .failedPrecondition)
        #expect(
            error?.message
                == "characteristic \(brightness) (Brightness) is 80, last changed at seq 12, not 30 as the write "
                + "expected; nothing written")
    }

    @Test("another seq, or a seq of another journal: FAILED_PRECONDITION naming the current value and seq")
    func otherSeq() {
        let (graph, brightness) = Self.home()
        let stale = #expect(throws: HomeError.self) {
            try graph.checkCondition(WriteCondition(seq: 11), for: brightness, journalID: "j1")
        }
        #expect(stale?.code == .failedPrecondition)
        #expect(stale?.message.contains("is 80, last changed at seq 12, not at seq 11") == true)
        let restarted = #expect(throws: HomeError.self) {
            try graph.checkCondition(WriteCondition(seq: 12, journalID: "j0"), for: brightness, journalID: "j1")
        }
        #expect(restarted?.code == .failedPrecondition)
        #expect(restarted?.message.contains("journal j0") == true)
        #expect(restarted?.message.contains("it is 80, last changed at seq 12") == true)
    }

    @Test("both given: both must hold")
    func both() {
        let (graph, brightness) = Self.home()
        #expect(throws: HomeError.self) {
            try graph.checkCondition(WriteCondition(value: .int(80), seq: 3), for: brightness, journalID: "j1")
        }
        #expect(throws: HomeError.self) {
            try graph.checkCondition(WriteCondition(value: .int(81), seq: 12), for: brightness, journalID: "j1")
        }
    }

    @Test("an expected value its format cannot hold: INVALID_ARGUMENT, not a failed condition")
    func wrongKind() {
        let (graph, brightness) = Self.home()
        let error = #expect(throws: HomeError.self) {
            try graph.checkCondition(WriteCondition(value: .string("bright")), for: brightness, journalID: "j1")
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("\"bright\"") == true)
    }

    @Test("the change seq is a stamp of the running daemon: a graph differing only in it is equal")
    func seqIsNotPartOfTheHome() {
        let (graph, brightness) = Self.home()
        let fresh = DemoHome.make(nowMs: 100)
        #expect(graph == fresh)
        #expect(graph.characteristic(brightness)?.changeSeq == 12)
        #expect(fresh.characteristic(brightness)?.changeSeq == 0)
    }
}
