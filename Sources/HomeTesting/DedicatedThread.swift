internal import Foundation

/// Runs blocking work (spawning and waiting for processes, polling with sleeps) on
/// a thread of its own and awaits it, so that a test doing it leaves the
/// concurrency pool free: on a two-core machine the pool has two threads, and two
/// blocking tests on them starve every other test's tasks (a client misses its
/// hello deadline, a daemon's stream backs up).
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
