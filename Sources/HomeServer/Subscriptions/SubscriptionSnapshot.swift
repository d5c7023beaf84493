internal import HomeModel

/// What a subscription stream sends, in order.
enum SinkItem: Equatable {
    case event(QueuedEvent)
    case marker(StreamMarker)
    case snapshotPage([Characteristic])

    static let snapshotPageSize = 256

    var isEvent: Bool {
        if case .event = self { true } else { false }
    }
}

/// The current state of everything a subscription covers, as stream items.
enum SubscriptionSnapshot {
    /// An optional leading marker, snapshot pages (every readable characteristic the
    /// scope covers, in home, accessory, service order), then SNAPSHOT_END at `seq`.
    static func items(
        for scope: SubscriptionScope, in graph: HomeGraph, seq: UInt64,
        leading: StreamMarker?
    ) -> [SinkItem] {
        var items: [SinkItem] = leading.map { [.marker($0)] } ?? []
        var page: [Characteristic] = []
        for homeID in graph.homeOrder {
            guard let home = graph.homes[homeID] else { continue }
            for accessoryID in home.accessoryIDs {
                guard let accessory = graph.accessories[accessoryID] else { continue }
                for serviceID in accessory.serviceIDs {
                    guard let service = graph.services[serviceID] else { continue }
                    for characteristicID in service.characteristicIDs {
                        guard let characteristic = graph.characteristics[characteristicID],
                            characteristic.properties.readable, scope.covers(characteristic, in: graph)
                        else { continue }
                        page.append(characteristic)
                        if page.count == SinkItem.snapshotPageSize {
                            items.append(.snapshotPage(page))
                            page = []
                        }
                    }
                }
            }
        }
        if !page.isEmpty { items.append(.snapshotPage(page)) }
        items.append(.marker(StreamMarker(kind: .snapshotEnd, seq: seq)))
        return items
    }
}
