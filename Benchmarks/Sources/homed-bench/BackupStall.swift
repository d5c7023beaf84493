internal import Foundation
internal import HomeModel
internal import HomeServer
internal import HomeStorage
internal import HomeTesting
internal import Synchronization

/// `homed-bench backup-stall`: the longest a writer waits while the daemon backs
/// up a large database. A store on a SQLite file of a generated home; one thread
/// writes single values as fast as it can (each appended to the value log, as
/// every acknowledged write is), timing each, while another takes the backup the
/// Backup call takes; then the same writer alone for as long, as the baseline.
enum BackupStall {
    static func run(accessories: Int) throws {
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let graph = ScaleHome.make(accessories: accessories)
        let database = try HomeDatabase.open(path: directory + "/homed.sqlite")
        try database.saveLayout(from: HomeGraph(), to: graph)
        let store = HomeStore(graph: graph, database: database)
        let brightness = try store.snapshot().graph.resolve(path: "Room 0/Bulb 0/Brightness")
        let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/homed.sqlite")[.size] as? Int) ?? 0
        print("backup-stall: a home of \(accessories) accessories, database \(size / 1_048_576) MiB (+ its log)")

        // During a backup.
        let done = Atomic<Bool>(false)
        let backupTime = Mutex<Double>(0)
        let copyPath = Mutex<String>("")
        let thread = Thread {
            let clock = ContinuousClock()
            let start = clock.now
            let copy = try? store.backupToTemporaryFile()
            backupTime.withLock { $0 = seconds(clock.now - start) }
            copyPath.withLock { $0 = copy?.path ?? "" }
            done.store(true, ordering: .releasing)
        }
        thread.start()
        let during = writes(to: brightness, in: store) { done.load(ordering: .acquiring) }
        let elapsed = backupTime.withLock { $0 }
        let copy = copyPath.withLock { $0 }
        let copySize = (try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0
        if !copy.isEmpty { unlink(copy) }
        // The same writer alone, for as long.
        let clock = ContinuousClock()
        let baselineStart = clock.now
        let alone = writes(to: brightness, in: store) { seconds(clock.now - baselineStart) >= elapsed }
        database.close()

        print(
            row(
                "backup",
                String(
                    format: "%.2f s, %d MiB copied in steps of %d pages", elapsed, copySize / 1_048_576,
                    HomeDatabase.backupPagesPerStep)))
        for (label, times) in [("during backup", during), ("alone", alone)] {
            let sorted = times.sorted()
            guard !sorted.isEmpty else { continue }
            print(
                row(
                    label,
                    "\(sorted.count) writes, p50 \(us(sorted[sorted.count / 2])), p99 "
                        + "\(us(sorted[sorted.count * 99 / 100])), max \(us(sorted[sorted.count - 1]))"))
        }
    }

    /// Single-value writes until `stop` says so, each timed.
    private static func writes(to characteristic: ObjectID, in store: HomeStore, until stop: () -> Bool) -> [Double] {
        let clock = ContinuousClock()
        var times: [Double] = []
        times.reserveCapacity(1 << 20)
        var index: Int64 = 0
        repeat {
            index += 1
            let write = CharacteristicWrite(characteristicID: characteristic, value: .int(index % 2 + 10))
            let start = clock.now
            _ = store.write([write], origin: .simulator)
            times.append(nanoseconds(clock.now - start))
            // The daemon folds the log every 500 ms; here every 20 000 writes, so the log stays small.
            if index % 20_000 == 0 { _ = try? store.foldValueLog() }
        } while !stop()
        return times
    }
}
