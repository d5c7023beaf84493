#if canImport(Glibc)
    internal import Glibc
#endif

/// A value behind a pthread mutex: the daemon's lock for state that event loops and
/// tasks share.
///
/// Written here rather than using Synchronization's `Mutex` because that one is a
/// futex that ThreadSanitizer cannot see (every access it guards is reported as a
/// race, so `Scripts/sanitize.sh thread` could never be clean), and rather than
/// NIO's `NIOLockedValueBox` because that one cannot rethrow a typed error, which
/// the store's transactions do. The API is `Mutex`'s.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
