public import HomeModel

extension HomeDatabase {
    /// Makes the layout of `new` durable, given that `old` is what is stored: one
    /// transaction writes the rows that differ (`LayoutDiff`), so a small change to a
    /// large home writes a few rows. Values are not part of it, except that a new
    /// characteristic is stored with its initial value, and that `values` — the
    /// characteristics changed since the value log was last folded — are saved and
    /// the log emptied in the same transaction (so that a row written here is never
    /// older than a logged change replayed over it).
    ///
    /// When this returns, the change is on disk, against power loss too (the
    /// transaction commits with `synchronous=FULL`); if it throws, nothing was written.
    ///
    /// - Throws: `.internal` naming the file and SQLite's reason if a write fails
    ///   (`.resourceExhausted` for a full disk); `.failedPrecondition` if closed.
    ///
    /// - Parameters:
    ///   - events: the commit's events, stored in the journal in the same
    ///     transaction (a daemon that keeps a history), kept until `keepUntilMs`.
    public func saveLayout(
        from old: HomeGraph, to new: HomeGraph, values: [Characteristic] = [], events: [HomeEvent] = [],
        keepUntilMs: Int64 = 0
    ) throws(HomeError) {
        let diff = LayoutDiff(from: old, to: new)
        if diff.isEmpty && values.isEmpty && events.isEmpty { return }
        try withConnection { connection throws(HomeError) in
            try connection.execute("PRAGMA synchronous = FULL", doing: "asking for a synced commit")
            defer { try? connection.execute("PRAGMA synchronous = NORMAL", doing: "back to log-only commits") }
            try connection.transaction(doing: "saving the layout") { () throws(HomeError) in
                try LayoutWriter(connection: connection, diff: diff, graph: new).write()
                try ValueLogWriter(connection: connection).fold(into: values)
                try insertEvents(events, keepUntilMs: keepUntilMs, on: connection)
            }
        }
    }
}

/// Writes a `LayoutDiff`'s rows, taking their contents from the new graph.
///
/// Foreign keys are checked at commit, so the tables are written in any order.
/// The tables' writers are in HomeDatabase+SaveDevices.swift (homes to
/// characteristics) and HomeDatabase+SaveAutomations.swift (service groups,
/// action sets, triggers).
struct LayoutWriter {
    let connection: Connection
    let diff: LayoutDiff
    let graph: HomeGraph

    func write() throws(HomeError) {
        try writeHomes()
        try writeRooms()
        try writeZones()
        try writeAccessories()
        try writeServices()
        try writeCharacteristics()
        try writeServiceGroups()
        try writeActionSets()
        try writeTriggers()
        if diff.nextIDChanged {
            let update = try connection.statement("UPDATE meta SET value = ? WHERE key = 'next_id'")
            update.bind(1, graph.nextID)
            try update.run(doing: "saving the next id")
        }
    }

    // MARK: Helpers

    /// The new position of an inserted child.
    func position(_ column: LayoutDiff.PositionColumn, _ id: ObjectID) throws(HomeError) -> Int64 {
        guard let position = diff.position(column, of: id) else {
            throw HomeError(.internal, "cannot save the layout: object \(id) is new but no parent lists it")
        }
        return position
    }

    func insert(
        _ rows: LayoutDiff.Rows, _ sql: String,
        bind: (Statement, ObjectID) throws(HomeError) -> Void
    ) throws(HomeError) {
        guard !rows.inserted.isEmpty else { return }
        let statement = try connection.statement(sql)
        for id in rows.inserted {
            try bind(statement, id)
            try statement.run(doing: "saving new object \(id)")
        }
    }

    func update(_ rows: LayoutDiff.Rows, _ sql: String, bind: (Statement, ObjectID) -> Void) throws(HomeError) {
        guard !rows.updated.isEmpty else { return }
        let statement = try connection.statement(sql)
        for id in rows.updated {
            bind(statement, id)
            try statement.run(doing: "saving changed object \(id)")
        }
    }

    /// Deletes removed rows and moves the rows whose position changed.
    func finish(_ rows: LayoutDiff.Rows, table: String, _ column: LayoutDiff.PositionColumn)
        throws(HomeError)
    {
        if !rows.removed.isEmpty {
            let delete = try connection.statement("DELETE FROM \(table) WHERE id = ?")
            for id in rows.removed {
                delete.bind(1, id)
                try delete.run(doing: "removing object \(id)")
            }
        }
        try updatePositions(column, inserted: rows.inserted, "UPDATE \(table) SET position = ? WHERE id = ?")
    }

    func updatePositions(_ column: LayoutDiff.PositionColumn, inserted: [ObjectID], _ sql: String)
        throws(HomeError)
    {
        guard let positions = diff.positions[column], positions.count > 0 else { return }
        // Inserted rows were written with their position already.
        let inserted = Set(inserted)
        let statement = try connection.statement(sql)
        for (id, position) in positions where !inserted.contains(id) {
            statement.bind(1, position)
            statement.bind(2, id)
            try statement.run(doing: "moving object \(id)")
        }
    }

    /// Replaces the link rows of each owner in `owners` with its list in the new graph.
    func rewriteLinks<Link>(
        _ owners: [ObjectID], rows: LayoutDiff.Rows, table: String, owner: String,
        insert sql: String, links: (ObjectID) -> [Link],
        bind: (Statement, Link) -> Void
    ) throws(HomeError) {
        guard !owners.isEmpty else { return }
        let inserted = Set(rows.inserted)
        let delete = try connection.statement("DELETE FROM \(table) WHERE \(owner) = ?")
        let insert = try connection.statement(sql)
        for id in owners {
            if !inserted.contains(id) {
                delete.bind(1, id)
                try delete.run(doing: "rewriting the \(table) of \(id)")
            }
            for (position, link) in links(id).enumerated() {
                insert.bind(1, id)
                insert.bind(2, position)
                bind(insert, link)
                try insert.run(doing: "saving the \(table) of \(id)")
            }
        }
    }
}
