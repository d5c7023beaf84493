#if HOMED_PTHREAD_LOCKS
    #if canImport(Glibc)
        internal import Glibc
    #endif
#else
    internal import Synchronization
#endif

/// A value behind a lock: the daemon's lock for state that event loops and tasks
/// share. Mutex's API (typed-throws `withLock`), stored inline like a Mutex.
///
/// It is Synchronization's `Mutex`, a futex, unless the build defines
/// HOMED_PTHREAD_LOCKS (`Scripts/sanitize.sh thread` does): then a pthread mutex.
/// ThreadSanitizer cannot see the futex's ordering, so every access it guards would
/// be reported as a race; the pthread mutex it sees, but it costs the daemon ~10 %
/// of its event rate (homed-bench, Scripts/compare-bench.py), so only sanitized
/// builds pay for it.
struct Locked<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    #if HOMED_PTHREAD_LOCKS
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let value: UnsafeMutablePointer<Value>

        init(_ value: consuming sending Value) {
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            self.value = .allocate(capacity: 1)
            self.value.initialize(to: value)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            value.deinitialize(count: 1)
            value.deallocate()
        }

        borrowing func withLock<Result: ~Copyable, Failure: Error>(
            _ body: (inout sending Value) throws(Failure) -> sending Result
        ) throws(Failure) -> sending Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    #else
        private let mutex: Mutex<Value>

        init(_ value: consuming sending Value) {
            mutex = Mutex(value)
        }

        borrowing func withLock<Result: ~Copyable, Failure: Error>(
            _ body: (inout sending Value) throws(Failure) -> sending Result
        ) throws(Failure) -> sending Result {
            try mutex.withLock(body)
        }
    #endif
}
