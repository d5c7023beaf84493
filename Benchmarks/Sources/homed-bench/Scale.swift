internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeServer
internal import HomeStorage
@_spi(Wire) internal import HomeTesting
@_spi(Wire) internal import HomeWire

/// `homed-bench scale [--accessories N]`: the generated scale home (10 characteristics
/// per accessory) saved to a fresh SQLite file, loaded back, and served to a client.
enum Scale {
    static func run(accessories: Int) async throws {
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let databasePath = directory + "/scale.sqlite"
        let clock = ContinuousClock()
        print("homed-bench scale: \(accessories) accessories, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let rssStart = residentKiB()

        // Build and save in a scope of their own, so the built graph is gone before loading.
        do {
            var start = clock.now
            let built = ScaleHome.make(accessories: accessories)
            let buildTime = clock.now - start
            print(row("build", "\(ms(buildTime)) (\(built.characteristicCount) characteristics)"))
            start = clock.now
            let database = try HomeDatabase.open(path: databasePath)
            try database.saveLayout(from: HomeGraph(), to: built)
            database.close()
            let size = (try? FileManager.default.attributesOfItem(atPath: databasePath)[.size] as? Int) ?? 0
            print(
                row(
                    "save (fresh file)", "\(ms(clock.now - start)) (open + saveLayout + close; \(size / 1024) KiB file)"
                ))
        }

        let rssBefore = residentKiB()
        var start = clock.now
        let database = try HomeDatabase.open(path: databasePath)
        let openTime = clock.now - start
        let graph = try database.load()
        let loadTime = clock.now - start
        let rssAfter = residentKiB()
        print(
            row("load", "\(ms(loadTime)) (open \(ms(openTime)) + load(); \(graph.characteristicCount) characteristics)")
        )
        print(
            row(
                "VmRSS",
                "\(rssStart) KiB at start, \(rssBefore) KiB before load, \(rssAfter) KiB after load "
                    + "(+\(rssAfter - rssBefore) KiB for the loaded graph; allocator may reuse freed build memory)"))

        let server = try await Bench.startServer(directory: directory + "/srv", graph: graph)
        let rssServed = residentKiB()
        let client = try await HomeClient.connect(to: server.configuration.socketPath, name: "scale")

        start = clock.now
        let subscription = client.subscribe(SubscribeRequest(snapshot: true))
        var snapshotCharacteristics = 0
        var pages = 0
        var sawEnd = false
        var firstPage: Duration?
        for try await message in subscription {
            if !message.snapshot.isEmpty {
                pages += 1
                snapshotCharacteristics += message.snapshot.count
                if firstPage == nil { firstPage = clock.now - start }
            }
            if message.marker?.kind == .snapshotEnd {
                sawEnd = true
                break
            }
        }
        let snapshotTime = clock.now - start
        print(
            row(
                "subscribe snapshot",
                "\(ms(snapshotTime)) to SNAPSHOT_END (\(snapshotCharacteristics) characteristics in \(pages) pages"
                    + (firstPage.map { "; first page after \(ms($0))" } ?? "") + (sawEnd ? ")" : "; NO snapshotEnd)")))

        start = clock.now
        do {
            let home = try await client.getHome()
            print(
                row(
                    "GetHome",
                    "\(ms(clock.now - start)) OK (\(home.graph.characteristicCount) characteristics, "
                        + "in pages of up to \(HomeClient.homePageSize) accessories from one snapshot)"))
        } catch {
            print(row("GetHome", "\(ms(clock.now - start)) refused: \(error)"))
        }
        let rssEnd = residentKiB()
        print(
            row(
                "VmRSS serving",
                "\(rssServed) KiB with the server up, \(rssEnd) KiB after snapshot + GetHome (client side in-process)"))
        await client.close()
        await server.stop()
        database.close()
    }
}

extension HomeGraph {
    var characteristicCount: Int { characteristics.count }
}

func ms(_ duration: Duration) -> String { String(format: "%.1f ms", nanoseconds(duration) / 1e6) }
