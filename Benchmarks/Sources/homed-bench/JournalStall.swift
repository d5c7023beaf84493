internal import HomeModel
internal import HomeServer
internal import HomeTesting

/// `homed-bench journal-stall [N]`: the time of each of N single-value writes to a
/// fresh store (default 200 000), as a publisher sees it under the store's lock,
/// with the slowest write near each power of two: a journal that grows by copying
/// shows there as a step every subscriber waits for.
enum JournalStall {
    static func run(count: Int) {
        let store = HomeStore(graph: demoHome(), journalCapacity: 100_000)
        let brightness = try! store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
        let clock = ContinuousClock()
        var times = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let write = CharacteristicWrite(characteristicID: brightness, value: .int(Int64(index % 2) + 10))
            let start = clock.now
            _ = store.write([write], origin: .simulator)
            times[index] = nanoseconds(clock.now - start)
        }
        let sorted = times.sorted()
        print("journal-stall: \(count) single writes to a fresh store (journal capacity 100 000)")
        print(row("p50 / p99", "\(us(sorted[count / 2])) / \(us(sorted[count * 99 / 100]))"))
        print(row("max", us(sorted[count - 1])))
        var power = 1024
        while power < count {
            // The write that made the journal hold `power + 1` events, and its neighbours.
            let window = times[max(0, power - 8)..<min(count, power + 8)]
            print(row("near 2^\(power.trailingZeroBitCount)", "slowest \(us(window.max() ?? 0))"))
            power *= 2
        }
    }
}
