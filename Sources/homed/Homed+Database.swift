internal import HomeModel
internal import HomeServer
internal import HomeStorage
internal import Logging

#if canImport(Glibc)
    internal import Glibc
#endif

extension Homed {
    /// Opens the database (unless `--in-memory`) and loads the home from it; with
    /// `--demo`, a database without homes gets the demo home, saved at once.
    func openHome(socketPath: String, logger: Logger) throws(HomeError) -> (HomeDatabase?, HomeGraph) {
        // First the socket: a second daemon must hear about the first one, not about
        // the database the first one holds. This also creates the socket's directory.
        try HomeServer.checkSocketAvailable(socketPath)
        if inMemory {
            return (nil, demo ? DemoHome.make(nowMs: nowMs()) : HomeGraph())
        }
        let path: String
        if let db {
            path = db
        } else {
            let directory = String(socketPath[..<(socketPath.lastIndex(of: "/") ?? socketPath.startIndex)])
            path = (directory.isEmpty ? "" : directory + "/") + "homed.sqlite"
        }
        let database = try HomeDatabase.open(path: path)
        do {
            var graph = try database.load { skipped in
                logger.warning("skipped a saved row", metadata: ["database": "\(path)", "row": "\(skipped)"])
            }
            if demo && graph.homes.isEmpty {
                let demoHome = DemoHome.make(nowMs: nowMs())
                try database.saveLayout(from: graph, to: demoHome)
                graph = demoHome
                logger.info("created the demo home", metadata: ["database": "\(path)"])
            }
            logger.info(
                "opened the database",
                metadata: [
                    "database": "\(path)", "homes": "\(graph.homes.count)",
                    "accessories": "\(graph.accessories.count)", "characteristics": "\(graph.characteristics.count)",
                ])
            return (database, graph)
        } catch {
            database.close()
            throw error
        }
    }
}
