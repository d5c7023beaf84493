/// Wall-clock time for the automation engine: what time it is, and a way to wait
/// for a moment. Tests drive a manual one, so a daily timer fires without waiting a day.
public protocol AutomationClock: Sendable {
    /// Milliseconds since the Unix epoch.
    var nowMs: Int64 { get }

    /// Returns once `nowMs` has reached `deadlineMs`.
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

    public init() {
        self.sliceMs = 30_000
    }

    public var nowMs: Int64 { currentTimeMs() }

    public func sleep(untilMs deadlineMs: Int64) async throws {
        while true {
            let remaining = deadlineMs - nowMs
            if remaining <= 0 { return }
            try await Task.sleep(for: .milliseconds(min(remaining, sliceMs)))
        }
    }
}
