internal import Foundation

#if canImport(Glibc)
    internal import Glibc
#endif

/// Wall-clock time for the automation engine: what time it is, a clock that never
/// jumps, and a way to wait for a moment. Tests drive a manual one, so a daily
/// timer fires without waiting a day.
public protocol AutomationClock: Sendable {
    /// Milliseconds since the Unix epoch.
    var nowMs: Int64 { get }

    /// Milliseconds on a clock that only moves forward, at the pace of real time
    /// (from an arbitrary start): a hold (`--for 10m`) lasts its duration by it,
    /// whatever is done to the wall clock meanwhile.
    var monotonicMs: Int64 { get }

    /// Returns once `nowMs` has reached `deadlineMs`, or earlier when the wall
    /// clock jumps (set back or forward): the engine then looks again at what is due.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled.
    func sleep(untilMs deadlineMs: Int64) async throws
}

/// The system's real-time clock.
///
/// A timer is a moment on the wall clock, not a duration: if the clock is set or
/// the machine sleeps, the deadline stays where it was. So a long wait is cut into
/// slices, after each of which the wall clock is read again.
public struct SystemAutomationClock: AutomationClock {
    /// The longest single slice of a wait: how late a timer can be after the wall
    /// clock jumped forward.
    let sliceMs: Int64
    /// How far the wall clock may drift from the monotonic one over a slice before
    /// it counts as a jump.
    static let jumpMs: Int64 = 1000

    public init() {
        self.sliceMs = 30_000
    }

    public var nowMs: Int64 { currentTimeMs() }

    public var monotonicMs: Int64 {
        // The boot-time clock counts a suspended machine's sleep too: a door open
        // across a suspend has been open all that time.
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    public func sleep(untilMs deadlineMs: Int64) async throws {
        while true {
            let (wallBefore, monotonicBefore) = (nowMs, monotonicMs)
            let remaining = deadlineMs - wallBefore
            if remaining <= 0 { return }
            try await Task.sleep(for: .milliseconds(min(remaining, sliceMs)))
            let drift = (nowMs - wallBefore) - (monotonicMs - monotonicBefore)
            if abs(drift) > Self.jumpMs { return }
        }
    }
}
