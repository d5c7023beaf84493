internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

extension HomeService {
    /// The whole home (or every home), in one response or, with a page size, in
    /// pages all cut from one snapshot (see `HomePaging`).
    func getHome(_ request: GetHomeRequest, context: CallContext) throws(HomeError) -> GetHomePage {
        let session = context.session.value
        let paging: HomePaging
        if request.pageToken.isEmpty {
            let (graph, seq) = store.snapshot()
            let homeIDs = try homes(request.homeID, in: graph)
            if request.pageSize == 0 {
                var payload = ByteBuffer()
                GetHomeResponse.encodeHomes(
                    graph: graph, homeIDs: homeIDs, seq: seq, journalID: store.journalID, into: &payload)
                return GetHomePage(encoded: payload)
            }
            session.pagings += 1
            paging = HomePaging(number: session.pagings, graph: graph, seq: seq, homeIDs: homeIDs, offset: 0)
        } else {
            guard let current = session.homePaging, current.token == request.pageToken else {
                throw HomeError(
                    .failedPrecondition,
                    "page token '\(request.pageToken)' does not continue this connection's GetHome "
                        + "(a token lasts until the last page or a new first page); start again without a token")
            }
            paging = current
        }
        var payload = ByteBuffer()
        session.homePaging = paging.encodePage(
            pageSize: Int(max(request.pageSize, 1)), journalID: store.journalID,
            into: &payload)
        return GetHomePage(encoded: payload)
    }

    func listAccessories(_ request: ListAccessoriesRequest, context: CallContext) throws(HomeError)
        -> ListAccessoriesResponse
    {
        let (graph, _) = store.snapshot()
        return ListAccessoriesResponse(graph: graph, homeIDs: try homes(request.homeID, in: graph))
    }

    /// The catalog: it is static.
    func listTypes(_ request: ListTypesRequest, context: CallContext) -> ListTypesResponse {
        .standard
    }

    /// The homes a request names: one, or 0 for every home.
    private func homes(_ homeID: ObjectID, in graph: HomeGraph) throws(HomeError) -> [ObjectID] {
        guard homeID != 0 else { return graph.homeOrder }
        guard graph.homes[homeID] != nil else { throw HomeError(.notFound, "no home with id \(homeID)") }
        return [homeID]
    }
}
