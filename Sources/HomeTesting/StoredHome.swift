public import HomeModel
public import HomeServer
public import HomeStorage

// What benchmarks (another package) need of the storage seams, which are the
// package's own (`package`): a store backed by a SQLite file, as `homed` runs
// one, and generated history written straight to the file.

extension HomeStore {
    /// A store whose layout and values are made durable in `database`; with
    /// `history`, every committed event is kept there too.
    public convenience init(graph: HomeGraph, database: HomeDatabase, history: Bool = false) {
        self.init(graph: graph, persistence: database, history: history ? StoredHistory(storage: database) : nil)
    }
}

extension HomeDatabase {
    /// Appends one commit's events, numbered and consecutive, kept until `keepUntilMs`.
    public func appendEvents(_ events: [HomeEvent], keepUntilMs: Int64) throws(HomeError) {
        try appendEvents(events, keepUntilMs: keepUntilMs, values: [])
    }
}

/// The home `homed --demo` serves, as a graph.
public func demoHome(nowMs: Int64 = 0) -> HomeGraph {
    DemoHome.make(nowMs: nowMs)
}
