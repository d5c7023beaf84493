internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

// How a layout command (homes, rooms, zones, rename, assign, groups, scenes,
// triggers) applies its change and reports it.

/// A layout change as applied: the graph it was computed from, the daemon's answer
/// and what `--json` output needs to describe its events.
struct AppliedChange {
    var before: HomeGraph
    var response: LayoutResponse
    var journalID: String
    var connectionID: UInt64

    /// Human lines (one per event, or "nothing changed"), or one JSON object.
    func print(_ options: ConnectionOptions) {
        if options.json {
            Output.structured(
                JSON.object([
                    ("seq", .uint(response.seq)),
                    ("created_id", response.createdID == 0 ? .null : .uint(response.createdID)),
                    (
                        "events",
                        .array(
                            response.events.map {
                                eventLine(
                                    $0, names: Names(graph: before), journal: journalID, ownConnection: connectionID)
                            })
                    ),
                ]), options)
            return
        }
        if response.events.isEmpty {
            Output.line("nothing changed (seq \(response.seq))")
            return
        }
        for event in response.events {
            Output.line("seq \(event.seq)  \(describe(event))")
        }
    }

    private func describe(_ event: HomeEvent) -> String {
        switch event.body {
        case .layout(let change):
            let object = "\(change.object.noun) \(quote(change.name)) (id \(change.objectID))"
            switch change.action {
            case .added: return "added \(object)"
            case .removed: return "removed \(object)"
            case .updated: return "updated \(object)"
            case .moved:
                let room = before.rooms[change.parentID]?.name ?? "room \(change.parentID)"
                return "moved \(object) to \(quote(room)) (id \(change.parentID))"
            }
        case .primaryHome(let id):
            let added = response.events.lazy.compactMap { event -> LayoutChange? in
                if case .layout(let change) = event.body, change.objectID == id { return change }
                return nil
            }.first
            let name = before.homes[id]?.name ?? added?.name ?? "?"
            return "primary home is now \(quote(name)) (id \(id))"
        case .value, .reachability, .actionSetExecuted, .triggerFired, .audit:
            return event.kind.rawValue
        }
    }
}

extension ConnectionOptions {
    /// Fetches the home, lets `operation` decide the change from it (resolving
    /// names), applies it and prints the outcome.
    func applyChange(_ operation: (HomeGraph) throws(HomeError) -> LayoutOperation) async throws {
        let applied = try await withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            let response = try await client.changeLayout(try operation(graph))
            return AppliedChange(
                before: graph, response: response, journalID: client.hello.journalID,
                connectionID: client.connectionID)
        }
        applied.print(self)
    }

    /// The whole home graph, for listings.
    func fetchGraph() async throws -> HomeGraph {
        try await withClient { client throws(HomeError) in try await client.getHome().graph }
    }
}
