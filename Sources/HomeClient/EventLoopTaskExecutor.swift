internal import NIOCore

/// Runs Swift tasks on a connection's event loop thread.
///
/// A call made from a task that prefers this executor writes its request on the
/// event loop without a thread hop, and resumes on the same thread when the answer
/// is read: a round trip then costs the two wake-ups a C client pays, not four.
/// Use it for latency-sensitive loops:
///
/// ```swift
/// await withTaskExecutorPreference(client.taskExecutor) {
///     for id in ids { _ = try await client.read([id]) }
/// }
/// ```
/// Work run there must not block: it shares the thread with the connection's I/O.
public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `eventLoop` is itself Sendable; the class has no mutable state.
    private let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
