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
    ///
    /// Called with the instance lock held, so no other daemon is at this socket.
    func openHome(paths: DaemonPaths, activated: Bool, logger: Logger) throws(HomeError) -> (HomeDatabase?, HomeGraph) {
        // A live daemon on the socket without our lock (an older homed) is refused too;
        // a socket systemd passed is ours, and its queue may hold the first client.
        if !activated { try HomeServer.checkSocketAvailable(paths.socket.path) }
        guard let path = paths.database?.path else {
            return (nil, demo ? DemoHome.make(nowMs: SystemAutomationClock().nowMs) : HomeGraph())
        }
        if let directory = path.lastIndex(of: "/").map({ String(path[..<$0]) }), !directory.isEmpty {
            try makeDirectories(directory)
        }
        if let former = paths.formerDefaultDatabase, exists(former), !exists(path) {
            try HomeDatabase.move(from: former, to: path)
            logger.notice(
                "moved the database from the old default location beside the socket to the state directory",
                metadata: ["from": "\(former)", "to": "\(path)"])
        }
        try refuseSymbolicLink(path)
        let database = try HomeDatabase.open(path: path)
        do {
            var graph = try database.load { skipped in
                logger.warning("skipped a saved row", metadata: ["database": "\(path)", "row": "\(skipped)"])
            }
            if demo && graph.homes.isEmpty {
                let demoHome = DemoHome.make(nowMs: SystemAutomationClock().nowMs)
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

    /// A database that is a symbolic link is refused: homed would write wherever it
    /// points (a file of another program, another user's), with its own rights.
    private func refuseSymbolicLink(_ path: String) throws(HomeError) {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return }
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink(path, &target, target.count - 1)
        let pointsTo =
            length > 0
            ? " (to \(String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)))" : ""
        throw HomeError(
            .failedPrecondition,
            "the database \(path) is a symbolic link\(pointsTo); homed opens only the file itself: give --db the real path"
        )
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Creates a directory and its missing parents, 0700 (the database is nobody else's).
    private func makeDirectories(_ directory: String) throws(HomeError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw HomeError(.failedPrecondition, "\(directory) exists and is not a directory")
            }
            return
        }
        if let parent = directory.lastIndex(of: "/").map({ String(directory[..<$0]) }), !parent.isEmpty {
            try makeDirectories(parent)
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw HomeError(
                .failedPrecondition,
                "cannot create the database's directory \(directory): \(String(cString: strerror(errno)))")
        }
    }
}
