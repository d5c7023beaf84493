/// How long the stored journal keeps events: one default, and overrides by
/// characteristic type (keep door and lock events a year) or accessory (drop a
/// chatty power meter after a day).
///
/// Events are stored one commit at a time, and a commit is kept as long as the
/// longest kept of its events: a provider reports one device's values per call,
/// so in practice each commit follows its own accessory's rule. Events that are
/// not about a characteristic (layout, reachability, scenes, triggers: the audit)
/// follow the default, or `auditMs` when it is longer.
package struct HistoryRetention: Sendable, Hashable {
    package static let defaultMs: Int64 = 10 * 24 * 3_600_000

    package var defaultMs: Int64
    /// By characteristic type: its full upper-case UUID.
    package var byType: [String: Int64]
    /// By accessory id.
    package var byAccessory: [ObjectID: Int64]
    /// For the events that are not values (who changed the layout, ran a scene).
    package var auditMs: Int64
    /// For the 5-minute and hourly rollups of numeric values: longer than the events.
    package var rollupMs: Int64

    package static let defaultRollupMs: Int64 = 400 * 24 * 3_600_000

    package init(
        defaultMs: Int64 = HistoryRetention.defaultMs, byType: [String: Int64] = [:],
        byAccessory: [ObjectID: Int64] = [:], auditMs: Int64 = HistoryRetention.defaultMs,
        rollupMs: Int64 = HistoryRetention.defaultRollupMs
    ) {
        self.rollupMs = rollupMs
        self.defaultMs = defaultMs
        self.byType = byType
        self.byAccessory = byAccessory
        self.auditMs = auditMs
    }

    /// Checks every duration: none may be 0 or negative (history off is said
    /// otherwise, not with a retention of nothing).
    ///
    /// - Throws: `.invalidArgument` naming the setting and its value.
    package func validate() throws(HomeError) {
        func check(_ value: Int64, _ what: String) throws(HomeError) {
            guard value > 0 else {
                throw HomeError(
                    .invalidArgument,
                    "history retention \(what) is \(value) ms: it must be positive "
                        + "(to keep no history, turn it off)")
            }
        }
        try check(defaultMs, "(the default)")
        try check(auditMs, "for audit events")
        try check(rollupMs, "for rollups")
        for (type, value) in byType.sorted(by: { $0.key < $1.key }) { try check(value, "for type \(type)") }
        for (id, value) in byAccessory.sorted(by: { $0.key < $1.key }) { try check(value, "for accessory \(id)") }
    }

    /// How long to keep the events of one commit.
    package func keepMs(for events: [HomeEvent], in graph: HomeGraph) -> Int64 {
        var keep: Int64 = 0
        for event in events {
            keep = max(keep, keepMs(for: event, in: graph))
        }
        return keep == 0 ? defaultMs : keep
    }

    private func keepMs(for event: HomeEvent, in graph: HomeGraph) -> Int64 {
        guard case .value(let change) = event.body else { return max(defaultMs, auditMs) }
        if byType.isEmpty && byAccessory.isEmpty { return defaultMs }
        if let kept = byAccessory[change.accessoryID] { return kept }
        if let characteristic = graph.characteristics[change.characteristicID] {
            if let kept = byType[characteristic.type.uuid.uppercased()] { return kept }
        }
        return defaultMs
    }
}
