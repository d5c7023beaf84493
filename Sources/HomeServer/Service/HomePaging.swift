internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// A connection's GetHome in pages: every page is cut from the snapshot taken for
/// the first, so the pages put together are one consistent home at one sequence
/// number. One per connection; a new first page replaces it, the last page ends it.
struct HomePaging {
    /// Counts this connection's pagings, so an old paging's token is never taken
    /// for the current one's.
    let number: Int
    let graph: HomeGraph
    let seq: UInt64
    let homeIDs: [ObjectID]
    /// The accessories before this position were sent.
    let offset: Int

    var accessoryCount: Int {
        homeIDs.reduce(0) { $0 + (graph.homes[$1]?.accessoryIDs.count ?? 0) }
    }

    /// What the client sends to ask for the page at `offset`.
    var token: String { "\(number).\(offset)" }

    /// Encodes the page of up to `pageSize` accessories at `offset`.
    ///
    /// - Returns: the paging that continues after it, nil after the last page.
    func encodePage(pageSize: Int, journalID: String, into buffer: inout ByteBuffer) -> HomePaging? {
        let end = min(offset + pageSize, accessoryCount)
        let next =
            end < accessoryCount
            ? HomePaging(number: number, graph: graph, seq: seq, homeIDs: homeIDs, offset: end) : nil
        GetHomeResponse.encodePage(
            graph: graph, homeIDs: homeIDs, accessories: offset..<end, withTables: offset == 0,
            seq: seq, journalID: journalID, nextPageToken: next?.token ?? "", into: &buffer)
        return next
    }
}
