public import HomeModel

/// Values: appended to the value log on every acknowledged change, folded into the
/// characteristics' rows from time to time (see `HomePersistence`).
///
/// The file is in WAL mode with `synchronous=NORMAL` between layout saves: a
/// commit is written to the log file before it returns (it survives `kill -9`)
/// but not synced, which costs a few microseconds instead of a disk flush; the
/// next layout save (`synchronous=FULL`) syncs everything before it too.
extension HomeDatabase: HomePersistence {
    /// One commit in one transaction: a layout commit's rows, the value log folded
    /// and its events (`saveLayout`); otherwise, with events, the journal's row and
    /// the value log's (`appendEvents`); without, the value log's alone.
    package func append(_ record: CommitRecord) throws(HomeError) {
        if let layout = record.layout {
            try saveLayout(
                from: layout.before, to: layout.after, values: layout.unfolded, events: record.events,
                keepUntilMs: record.keepUntilMs)
        } else if !record.events.isEmpty {
            try appendEvents(record.events, keepUntilMs: record.keepUntilMs, values: record.values)
        } else {
            try appendValues(record.values, timeMs: record.timeMs)
        }
    }

    package func appendValues(_ changes: [SavedValue], timeMs: Int64) throws(HomeError) {
        if changes.isEmpty { return }
        try withConnection { connection throws(HomeError) in try appendValues(changes, timeMs: timeMs, on: connection) }
    }

    /// The value log's row, on a connection its caller holds (alone, or in the
    /// transaction that stores the same commit's events).
    func appendValues(_ changes: [SavedValue], timeMs: Int64, on connection: Connection) throws(HomeError) {
        let insert = try connection.statement("INSERT INTO value_log (time_ms, changes) VALUES (?, ?)")
        insert.bind(1, timeMs)
        insert.bind(2, ValueLogRecord.encode(changes))
        try insert.run(doing: "logging \(changes.count) changed values")
    }

    public func foldValueLog(into characteristics: [Characteristic]) throws(HomeError) {
        try withConnection { connection throws(HomeError) in
            try connection.transaction(doing: "folding the value log") { () throws(HomeError) in
                try ValueLogWriter(connection: connection).fold(into: characteristics)
            }
        }
    }

    /// How many rows the value log holds (for tests and `homectl stats`).
    public func valueLogRows() throws(HomeError) -> Int {
        try withConnection { connection throws(HomeError) in
            Int(try connection.integer("SELECT count(*) FROM value_log", doing: "counting the value log"))
        }
    }
}

/// Writes values into the characteristics' rows and empties the log, inside a
/// transaction its caller opened.
struct ValueLogWriter {
    let connection: Connection

    func fold(into characteristics: [Characteristic]) throws(HomeError) {
        let update = try connection.statement(
            "UPDATE characteristics SET value_type = ?, value = ?, last_updated_ms = ? WHERE id = ?")
        for characteristic in characteristics {
            update.bind(1, 2, characteristic.value)
            update.bind(3, characteristic.lastUpdatedMs)
            update.bind(4, characteristic.id)
            try update.run(doing: "saving the value of characteristic \(characteristic.id)")
        }
        try connection.statement("DELETE FROM value_log").run(doing: "emptying the value log")
    }
}

/// Reads the value log back over the characteristics the tables hold.
struct ValueLogReplay {
    let connection: Connection

    /// Applies every logged change, in order, to `characteristics`; a change to a
    /// characteristic that is no longer there is skipped.
    ///
    /// - Returns: the positions in `characteristics` of those it changed.
    func apply(to characteristics: inout [Characteristic]) throws(HomeError) -> Set<Int> {
        var position: [ObjectID: Int] = [:]
        var changed = Set<Int>()
        let statement = try connection.prepare("SELECT id, time_ms, changes FROM value_log ORDER BY id")
        while try statement.step(doing: "reading the value log") {
            if position.isEmpty {
                position.reserveCapacity(characteristics.count)
                for (index, characteristic) in characteristics.enumerated() { position[characteristic.id] = index }
            }
            let timeMs = statement.int64(1)
            for change in try ValueLogRecord.decode(statement.bytes(2), row: statement.int64(0)) {
                guard let index = position[change.characteristicID] else { continue }
                characteristics[index].value = change.value
                characteristics[index].lastUpdatedMs = timeMs
                changed.insert(index)
            }
        }
        return changed
    }
}
