public import HomeModel

/// The stored journal (see `HomeHistory`): one row per commit, appended in the
/// same call as the commit's value-log row would be, read by sequence number or
/// time, and purged a few rows at a time.
extension HomeDatabase: HomeHistory {
    package func storedJournal() throws(HomeError) -> StoredJournal? {
        try withConnection { connection throws(HomeError) -> StoredJournal? in
            let statement = try connection.prepare("SELECT value FROM meta WHERE key = 'journal_id'")
            guard try statement.step(doing: "reading the journal id"), !statement.isNull(0) else { return nil }
            let id = statement.string(0)
            let last = try connection.integer(
                "SELECT coalesce(max(last_seq), 0) FROM journal", doing: "reading the journal's last seq")
            return StoredJournal(id: id, lastSeq: UInt64(bitPattern: last))
        }
    }

    public func beginJournal(id: String) throws(HomeError) {
        try withConnection { connection throws(HomeError) in
            try connection.transaction(doing: "recording journal \(id)") { () throws(HomeError) in
                let current = try connection.prepare("SELECT value FROM meta WHERE key = 'journal_id'")
                let stored = try current.step(doing: "reading the journal id") ? current.string(0) : nil
                guard stored != id else { return }
                // Another journal's numbers mean nothing in this one.
                try connection.execute(
                    "DELETE FROM journal; DELETE FROM journal_subjects; DELETE FROM meta WHERE key = 'rollup_seq'",
                    doing: "forgetting journal \(stored ?? "")")
                let upsert = try connection.prepare(
                    "INSERT INTO meta (key, value) VALUES ('journal_id', ?) "
                        + "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                upsert.bind(1, id)
                try upsert.run(doing: "recording journal \(id)")
            }
        }
    }

    package func appendEvents(_ events: [HomeEvent], keepUntilMs: Int64, values: [SavedValue]) throws(HomeError) {
        guard let first = events.first, let last = events.last else { return }
        try withConnection { connection throws(HomeError) in
            // The commit and what it is about, in one transaction: both or neither.
            try connection.transaction(doing: "storing events \(first.seq)–\(last.seq) in the journal") {
                () throws(HomeError) in
                if !values.isEmpty { try appendValues(values, timeMs: first.timeMs, on: connection) }
                try insertEvents(events, keepUntilMs: keepUntilMs, on: connection)
            }
        }
    }

    /// A commit's events as the journal's row and their subjects' index rows, in
    /// a transaction its caller holds.
    func insertEvents(_ events: [HomeEvent], keepUntilMs: Int64, on connection: Connection) throws(HomeError) {
        guard let first = events.first, let last = events.last else { return }
        let insert = try connection.statement(
            "INSERT INTO journal (seq, last_seq, time_ms, keep_until_ms, events) VALUES (?, ?, ?, ?, ?)")
        insert.bind(1, first.seq)
        insert.bind(2, last.seq)
        insert.bind(3, first.timeMs)
        insert.bind(4, keepUntilMs)
        insert.bind(5, JournalRecord.encode(events))
        try insert.run(doing: "storing events \(first.seq)–\(last.seq) in the journal")
        let subject = try connection.statement(
            "INSERT OR IGNORE INTO journal_subjects (subject_id, commit_seq) VALUES (?, ?)")
        var seen = Set<ObjectID>()
        var previous: ObjectID?
        for event in events {
            // A batch is mostly one characteristic's changes: each looked at once.
            if case .value(let change) = event.body {
                if change.characteristicID == previous { continue }
                previous = change.characteristicID
            }
            for id in event.subjects where seen.insert(id).inserted {
                subject.bind(1, id)
                subject.bind(2, first.seq)
                try subject.run(doing: "indexing events \(first.seq)–\(last.seq)")
            }
        }
    }

    package func events(_ query: HistoryQuery) throws(HomeError) -> HistoryPage {
        if !query.subjects.isEmpty { return try eventsBySubject(query) }
        return try withConnection { connection throws(HomeError) -> HistoryPage in
            var conditions: [String] = []
            var bindings: [Int64] = []
            if !query.subjects.isEmpty {
                // Through the subjects index: only the commits about these ids.
                conditions.append(
                    "seq IN (SELECT commit_seq FROM journal_subjects WHERE subject_id IN ("
                        + query.subjects.map { _ in "?" }.joined(separator: ", ") + "))")
                bindings.append(contentsOf: query.subjects.map { Int64(bitPattern: $0) })
            }
            if query.afterSeq > 0 {
                // The row holding afterSeq + 1 may begin before it.
                let start = try connection.prepare("SELECT seq FROM journal WHERE seq <= ? ORDER BY seq DESC LIMIT 1")
                start.bind(1, query.afterSeq + 1)
                let from = try start.step(doing: "finding event \(query.afterSeq + 1)") ? start.int64(0) : 0
                conditions.append("seq >= ?")
                bindings.append(from)
            }
            if let before = query.beforeSeq {
                conditions.append("seq < ?")
                bindings.append(Int64(bitPattern: before))
            }
            if let since = query.sinceMs {
                conditions.append("time_ms >= ?")
                bindings.append(since)
            }
            if let until = query.untilMs {
                conditions.append("time_ms < ?")
                bindings.append(until)
            }
            let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            let order = query.newestFirst ? "DESC" : "ASC"
            let statement = try connection.prepare(
                "SELECT seq, time_ms, events FROM journal\(whereClause) ORDER BY seq \(order) LIMIT ?")
            for (index, value) in bindings.enumerated() { statement.bind(Int32(index + 1), value) }
            statement.bind(Int32(bindings.count + 1), max(query.commitLimit, 1))
            var events: [HomeEvent] = []
            var rows = 0
            while try statement.step(doing: "reading the journal") {
                rows += 1
                let seq = UInt64(bitPattern: statement.int64(0))
                var decoded = try JournalRecord.decode(statement.bytes(2), firstSeq: seq, timeMs: statement.int64(1))
                let before = query.beforeSeq ?? .max
                decoded.removeAll { $0.seq <= query.afterSeq || $0.seq >= before }
                if query.newestFirst { decoded.reverse() }
                events.append(contentsOf: decoded)
            }
            return HistoryPage(events: events, truncated: rows >= max(query.commitLimit, 1))
        }
    }

    /// A page about some subjects with no time bounds ("the last change of X", "the
    /// last 100 events of this room"): each subject's commits read from its index
    /// range alone, at most a page of them each, merged in order, then the page's
    /// commits read by their key. A year of other commits is never touched.
    private func eventsBySubject(_ query: HistoryQuery) throws(HomeError) -> HistoryPage {
        try withConnection { connection throws(HomeError) -> HistoryPage in
            let limit = max(query.commitLimit, 1)
            let order = query.newestFirst ? "DESC" : "ASC"
            let candidates = try connection.statement(
                "SELECT commit_seq FROM journal_subjects WHERE subject_id = ? AND commit_seq >= ? AND commit_seq < ? "
                    + "ORDER BY commit_seq \(order) LIMIT ?")
            // A commit may begin before afterSeq + 1 and still hold it.
            var from: Int64 = 0
            if query.afterSeq > 0 {
                let start = try connection.statement(
                    "SELECT seq FROM journal WHERE seq <= ? ORDER BY seq DESC LIMIT 1")
                start.bind(1, query.afterSeq + 1)
                if try start.step(doing: "finding event \(query.afterSeq + 1)") { from = start.int64(0) }
                _ = try start.step(doing: "finding event \(query.afterSeq + 1)")
            }
            var to = query.beforeSeq.map { Int64(bitPattern: $0) } ?? .max
            // Times bound the commits' numbers: the first commit stamped at or after
            // each bound, by the time index. (The time of each event is checked again
            // below; only a clock set back, stamping later commits earlier, could put
            // one out of these bounds.)
            let firstAt = try connection.statement(
                "SELECT seq FROM journal WHERE time_ms >= ? ORDER BY time_ms, seq LIMIT 1")
            func firstCommit(at timeMs: Int64) throws(HomeError) -> Int64? {
                firstAt.bind(1, timeMs)
                defer { _ = try? firstAt.step(doing: "finding the first commit at \(timeMs)") }
                return try firstAt.step(doing: "finding the first commit at \(timeMs)") ? firstAt.int64(0) : nil
            }
            if let since = query.sinceMs {
                guard let first = try firstCommit(at: since) else { return HistoryPage(events: [], truncated: false) }
                from = max(from, first)
            }
            if let until = query.untilMs, let first = try firstCommit(at: until) { to = min(to, first) }
            var seqs = Set<Int64>()
            // A subject with a full page may have more: the page is then not the last.
            var anyFull = false
            for subject in Set(query.subjects) {
                candidates.bind(1, subject)
                candidates.bind(2, from)
                candidates.bind(3, to)
                candidates.bind(4, limit)
                var count = 0
                while try candidates.step(doing: "reading the history's index") {
                    seqs.insert(candidates.int64(0))
                    count += 1
                }
                anyFull = anyFull || count == limit
            }
            let ordered = query.newestFirst ? seqs.sorted(by: >) : seqs.sorted()
            let page = ordered.prefix(limit)
            let row = try connection.statement("SELECT time_ms, events FROM journal WHERE seq = ?")
            var events: [HomeEvent] = []
            let before = query.beforeSeq ?? .max
            for seq in page {
                row.bind(1, seq)
                guard try row.step(doing: "reading the journal") else { continue }
                var decoded = try JournalRecord.decode(
                    row.bytes(1), firstSeq: UInt64(bitPattern: seq), timeMs: row.int64(0))
                _ = try row.step(doing: "reading the journal")
                decoded.removeAll {
                    $0.seq <= query.afterSeq || $0.seq >= before || $0.timeMs < (query.sinceMs ?? .min)
                        || $0.timeMs >= (query.untilMs ?? .max)
                }
                if query.newestFirst { decoded.reverse() }
                events.append(contentsOf: decoded)
            }
            return HistoryPage(events: events, truncated: ordered.count > limit || anyFull)
        }
    }

    public func firstSeq(atOrAfter timeMs: Int64) throws(HomeError) -> UInt64? {
        try withConnection { connection throws(HomeError) -> UInt64? in
            let statement = try connection.prepare(
                "SELECT seq FROM journal WHERE time_ms >= ? ORDER BY seq LIMIT 1")
            statement.bind(1, timeMs)
            return try statement.step(doing: "finding the first event at \(timeMs)")
                ? UInt64(bitPattern: statement.int64(0)) : nil
        }
    }

    public func oldestStoredSeq() throws(HomeError) -> UInt64? {
        try withConnection { connection throws(HomeError) -> UInt64? in
            let statement = try connection.prepare("SELECT seq FROM journal ORDER BY seq LIMIT 1")
            return try statement.step(doing: "finding the oldest stored event")
                ? UInt64(bitPattern: statement.int64(0)) : nil
        }
    }

    public func purgeEvents(expiredBy nowMs: Int64, limit: Int) throws(HomeError) -> Int {
        try withConnection { connection throws(HomeError) -> Int in
            try connection.transaction(doing: "purging expired events") { () throws(HomeError) -> Int in
                try connection.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS purged (seq INTEGER PRIMARY KEY)", doing: "purging expired events")
                let pick = try connection.statement(
                    "INSERT INTO temp.purged SELECT seq FROM journal WHERE keep_until_ms <= ? "
                        + "ORDER BY keep_until_ms LIMIT ?")
                pick.bind(1, nowMs)
                pick.bind(2, limit)
                try pick.run(doing: "choosing expired events")
                try connection.statement(
                    "DELETE FROM journal_subjects WHERE commit_seq IN (SELECT seq FROM temp.purged)"
                ).run(doing: "purging the index of expired events")
                try connection.statement("DELETE FROM journal WHERE seq IN (SELECT seq FROM temp.purged)")
                    .run(doing: "purging expired events")
                let deleted = Int(try connection.integer("SELECT changes()", doing: "counting purged events"))
                try connection.statement("DELETE FROM temp.purged").run(doing: "purging expired events")
                return deleted
            }
        }
    }

    /// How many commits the stored journal holds (for tests and `homectl stats`).
    public func journalRows() throws(HomeError) -> Int {
        try withConnection { connection throws(HomeError) -> Int in
            Int(try connection.integer("SELECT count(*) FROM journal", doing: "counting the journal"))
        }
    }

    public func rollupWatermark() throws(HomeError) -> UInt64 {
        try withConnection { connection throws(HomeError) -> UInt64 in
            UInt64(
                bitPattern: try connection.integer(
                    "SELECT coalesce((SELECT value FROM meta WHERE key = 'rollup_seq'), 0)",
                    doing: "reading the rollups' watermark"))
        }
    }

    public func applyRollups(_ points: [RollupPoint], throughSeq: UInt64) throws(HomeError) {
        try withConnection { connection throws(HomeError) in
            try connection.transaction(doing: "storing rollups through \(throughSeq)") { () throws(HomeError) in
                let upsert = try connection.statement(
                    """
                    INSERT INTO rollups (characteristic_id, width_ms, start_ms, count, min, max, sum, last, last_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (characteristic_id, width_ms, start_ms) DO UPDATE SET
                        count = count + excluded.count, min = min(min, excluded.min), max = max(max, excluded.max),
                        sum = sum + excluded.sum,
                        last = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last ELSE last END,
                        last_ms = max(last_ms, excluded.last_ms)
                    """)
                for point in points {
                    upsert.bind(1, point.characteristicID)
                    upsert.bind(2, point.widthMs)
                    upsert.bind(3, point.startMs)
                    upsert.bind(4, point.count)
                    upsert.bind(5, point.min)
                    upsert.bind(6, point.max)
                    upsert.bind(7, point.sum)
                    upsert.bind(8, point.last)
                    upsert.bind(9, point.lastMs)
                    try upsert.run(doing: "storing a rollup of characteristic \(point.characteristicID)")
                }
                let mark = try connection.statement(
                    "INSERT INTO meta (key, value) VALUES ('rollup_seq', ?) "
                        + "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                mark.bind(1, throughSeq)
                try mark.run(doing: "moving the rollups' watermark to \(throughSeq)")
            }
        }
    }

    public func rollups(characteristicID: ObjectID, widthMs: Int64, sinceMs: Int64, untilMs: Int64, limit: Int)
        throws(HomeError) -> [RollupPoint]
    {
        try withConnection { connection throws(HomeError) -> [RollupPoint] in
            let select = try connection.statement(
                "SELECT start_ms, count, min, max, sum, last, last_ms FROM rollups "
                    + "WHERE characteristic_id = ? AND width_ms = ? AND start_ms >= ? AND start_ms < ? "
                    + "ORDER BY start_ms LIMIT ?")
            select.bind(1, characteristicID)
            select.bind(2, widthMs)
            select.bind(3, sinceMs)
            select.bind(4, untilMs)
            select.bind(5, limit)
            var points: [RollupPoint] = []
            while try select.step(doing: "reading the rollups of characteristic \(characteristicID)") {
                points.append(
                    RollupPoint(
                        characteristicID: characteristicID, widthMs: widthMs, startMs: select.int64(0),
                        count: select.int64(1), min: select.double(2), max: select.double(3), sum: select.double(4),
                        last: select.double(5), lastMs: select.int64(6)))
            }
            return points
        }
    }

    public func purgeRollups(before beforeMs: Int64, limit: Int) throws(HomeError) -> Int {
        try withConnection { connection throws(HomeError) -> Int in
            let delete = try connection.statement(
                "DELETE FROM rollups WHERE (characteristic_id, width_ms, start_ms) IN "
                    + "(SELECT characteristic_id, width_ms, start_ms FROM rollups WHERE start_ms < ? LIMIT ?)")
            delete.bind(1, beforeMs)
            delete.bind(2, limit)
            try delete.run(doing: "purging old rollups")
            return Int(try connection.integer("SELECT changes()", doing: "counting purged rollups"))
        }
    }
}
