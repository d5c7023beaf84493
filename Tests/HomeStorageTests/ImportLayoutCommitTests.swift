import Foundation
import HomeConfig
import HomeModel
import HomeServer
import HomeTesting
import Testing

@testable import HomeStorage

/// `ImportLayout`'s commit on a store backed by SQLite with its history on: the
/// whole file is one commit, durable and journaled as one; a file whose later step
/// fails leaves the home, the database and the journal as they were.
@Suite("a layout file imported in one commit", .timeLimit(.safetyNet))
struct ImportLayoutCommitTests {
    private static let file = """
        homes:
          - name: "Demo Home"
            rooms: ["Attic", "Cellar"]
            zones:
              - name: "Up"
                rooms: ["Attic"]
            scenes:
              - name: "Night"
                actions:
                  - characteristic: "Living Room/Lamp/Lightbulb/On"
                    value: false
        """

    @Test("every step is in one journal row, and reopened, the database has them all")
    func oneCommit() throws {
        let scratch = try Scratch()
        let path = scratch.file("homed.sqlite")
        let before: UInt64
        do {
            let database = try HomeDatabase.open(path: path)
            defer { database.close() }
            try database.saveLayout(from: HomeGraph(), to: demoHome())
            let store = HomeStore(graph: demoHome(), database: database, history: true)
            before = store.lastSeq
            let file = try LayoutFile.parse(Self.file, source: "home.yaml")
            let (plan, seq) = try store.importLayout(file, checkedPrograms: [], origin: Origin(kind: .client))
            #expect(plan.steps.map(\.text).count == 6, "\(plan.steps.map(\.text))")
            let commit = try database.events(HistoryQuery(afterSeq: before, commitLimit: 1)).events
            #expect(commit.count == plan.events.count && commit.last?.seq == seq, "one row holds every event")
        }
        let database = try HomeDatabase.open(path: path)
        defer { database.close() }
        let graph = try database.load()
        #expect(["Attic", "Cellar"].allSatisfy { name in graph.rooms.values.contains { $0.name == name } })
        #expect(graph.actionSets.values.contains { $0.name == "Night" && $0.actions.count == 1 })
    }

    @Test("a file whose last step fails changes nothing: not the graph, not the database, not the journal")
    func allOrNothing() throws {
        let scratch = try Scratch()
        let path = scratch.file("homed.sqlite")
        let database = try HomeDatabase.open(path: path)
        defer { database.close() }
        try database.saveLayout(from: HomeGraph(), to: demoHome())
        let store = HomeStore(graph: demoHome(), database: database, history: true)
        let (graph, seq) = store.snapshot()
        let bad = Self.file.replacingOccurrences(of: "value: false", with: "value: \"off\"")
        let file = try LayoutFile.parse(bad, source: "home.yaml")
        #expect(throws: HomeError.self) {
            try store.importLayout(file, checkedPrograms: [], origin: Origin(kind: .client))
        }
        do {
            _ = try store.importLayout(file, checkedPrograms: [], origin: Origin(kind: .client))
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("homes[0].scenes[0].actions[0]"), "\(error.message)")
        }
        #expect(store.snapshot().graph == graph && store.lastSeq == seq)
        #expect(try database.load() == graph)
    }

    @Test("a plan that would add a trigger whose program was not checked is refused: the home changed meanwhile")
    func uncheckedProgram() throws {
        let store = HomeStore(graph: demoHome())
        let withCommand =
            Self.file + """

                    triggers:
                      - name: "Porch"
                        scenes: ["Night"]
                        timer:
                          fire_date: "2030-01-01T07:00:00Z"
                          time_zone: "UTC"
                        run:
                          program: "/bin/true"
                """
        let file = try LayoutFile.parse(withCommand, source: "home.yaml")
        #expect(throws: HomeError(.aborted, "the home changed while the file was being checked: import it again")) {
            try store.importLayout(file, checkedPrograms: [], origin: Origin(kind: .client))
        }
        #expect(try store.importLayout(file, checkedPrograms: ["/bin/true"], origin: Origin(kind: .client)).seq > 0)
    }
}
