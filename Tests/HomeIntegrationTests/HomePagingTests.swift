import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import NIOCore
import Testing

/// GetHome in pages: a home larger than a frame arrives whole and consistent.
@Suite("GetHome in pages", .timeLimit(.safetyNet))
struct HomePagingTests {
    /// A frame limit the demo home as one response exceeds, but each accessory alone fits.
    static func frameLimit(for graph: HomeGraph) -> Int {
        var whole = ByteBuffer()
        GetHomeResponse.encodeHomes(
            graph: graph, homeIDs: graph.homeOrder, seq: 0, journalID: "0123456789abcdef0123456789abcdef",
            into: &whole)
        let accessories = graph.homeOrder.reduce(0) { $0 + (graph.homes[$1]?.accessoryIDs.count ?? 0) }
        let largestPage =
            (0..<accessories).map { position -> Int in
                var page = ByteBuffer()
                GetHomeResponse.encodePage(
                    graph: graph, homeIDs: graph.homeOrder, accessories: position..<(position + 1),
                    withTables: position == 0, seq: 0, journalID: "0123456789abcdef0123456789abcdef",
                    nextPageToken: "99.99", into: &page)
                return page.readableBytes
            }.max() ?? 0
        return max(largestPage + 64, whole.readableBytes / 2)
    }

    @Test(
        "a home over the frame limit: one response is refused naming paging, HomeClient.getHome gets it whole in pages")
    func largerThanAFrame() async throws {
        let graph = DemoHome.make(nowMs: 1_700_000_000_000)
        let limit = Self.frameLimit(for: graph)
        try await withPatientServer(graph: graph, configure: { $0.maxFrameSize = limit }) { server in
            let client = try await server.connect()
            let refused = await #expect(throws: HomeError.self) {
                _ = try await client.call(HomeMethods.getHome, GetHomeRequest())
            }
            #expect(refused?.code == .resourceExhausted)
            #expect(refused?.message.contains("page_size") == true)
            let home = try await client.getHome()
            #expect(home.graph == server.store.snapshot().graph)
            #expect(home.seq == server.store.lastSeq)
            await client.close()
        }
    }

    @Test("every page comes from the snapshot of the first: a change between pages is not in them")
    func pagesShareOneSnapshot() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let before = server.store.snapshot()
            let brightness = try before.graph.resolve(path: "Living Room/Lamp/Brightness")
            var assembler = GetHomeAssembler()
            var token = try assembler.add(try await client.call(HomeMethods.getHome, GetHomeRequest(pageSize: 1)))
            #expect(!token.isEmpty)
            let write = try await client.write(.int(7), to: brightness)
            var pages = 1
            while !token.isEmpty {
                token = try assembler.add(
                    try await client.call(HomeMethods.getHome, GetHomeRequest(pageSize: 1, pageToken: token)))
                pages += 1
            }
            let home = try assembler.response()
            #expect(pages == before.graph.accessories.count)
            #expect(home.graph == before.graph, "the write after the first page is not in any page")
            #expect(home.seq == before.seq && write.seq > home.seq)
            await client.close()
        }
    }

    @Test("a page token that does not continue this connection's paging is FAILED_PRECONDITION naming it")
    func staleToken() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let stray = await #expect(throws: HomeError.self) {
                _ = try await client.call(HomeMethods.getHome, GetHomeRequest(pageSize: 2, pageToken: "7.2"))
            }
            #expect(stray?.code == .failedPrecondition)
            #expect(stray?.message.contains("'7.2'") == true)
            // A new first page ends the paging before it: its token no longer works.
            var first = GetHomeAssembler()
            let token = try first.add(try await client.call(HomeMethods.getHome, GetHomeRequest(pageSize: 2)))
            var second = GetHomeAssembler()
            _ = try second.add(try await client.call(HomeMethods.getHome, GetHomeRequest(pageSize: 2)))
            let replaced = await #expect(throws: HomeError.self) {
                _ = try await client.call(HomeMethods.getHome, GetHomeRequest(pageSize: 2, pageToken: token))
            }
            #expect(replaced?.code == .failedPrecondition)
            // Another connection cannot continue this one's paging either.
            let other = try await server.connect()
            let foreign = await #expect(throws: HomeError.self) {
                _ = try await other.call(HomeMethods.getHome, GetHomeRequest(pageSize: 2, pageToken: token))
            }
            #expect(foreign?.code == .failedPrecondition)
            await other.close()
            await client.close()
        }
    }
}
