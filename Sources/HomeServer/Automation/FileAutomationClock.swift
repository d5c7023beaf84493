internal import Foundation
public import HomeModel

/// A clock for tests of a real daemon (`homed --test-clock-file PATH`): the time is
/// the number written in the file, milliseconds since the Unix epoch, and it moves
/// only when the test writes another. The store stamps its events by it and holds
/// last their duration by it, so a test can stop homed with `kill -9` at a moment
/// it chose and start it again at another, without waiting for either.
///
/// A test writes the file whole (a new file renamed over it); a read that finds
/// no number keeps the last time read.
public final class FileAutomationClock: AutomationClock {
    let path: String
    private let lastMs: Locked<Int64>
    /// How often a sleeper reads the file again.
    static let pollMs = 10

    /// - Throws: `.invalidArgument` when the file does not hold a time.
    public init(path: String) throws(HomeError) {
        guard let nowMs = Self.read(path) else {
            throw HomeError(
                .invalidArgument, "--test-clock-file \(path): the file must hold a time in milliseconds since the epoch"
            )
        }
        self.path = path
        self.lastMs = Locked(nowMs)
    }

    public var nowMs: Int64 {
        let read = Self.read(path)
        return lastMs.withLock { last in
            if let read { last = read }
            return last
        }
    }

    /// The file's time: a test moves it forward for real time to pass.
    public var monotonicMs: Int64 { nowMs }

    public func sleep(untilMs deadlineMs: Int64) async throws {
        var previous = nowMs
        while previous < deadlineMs {
            try await Task.sleep(for: .milliseconds(Self.pollMs))
            let now = nowMs
            // Set back: the engine looks again at what is due, as after a wall-clock jump.
            if now < previous { return }
            previous = now
        }
    }

    private static func read(_ path: String) -> Int64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
