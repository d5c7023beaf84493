internal import HomeModel

/// How the requests waiting for one provider's answers are shared among the
/// callers, so that no caller can deny another's writes through a slow provider.
///
/// One budget of waiting requests shared by everyone let a viewer that asked for
/// thousands of fresh reads fill it, and every other client's write failed. So:
/// fresh reads (which viewers may ask for) may fill only part of the budget, and
/// the rest is kept for writes; and one connection may hold only a share of it,
/// whatever it asks. A value with no I/O: `ProviderHub` asks it under its lock.
///
/// It counts commands, not items: a call's reads or writes of one provider's
/// characteristics are one command, however many characteristics it names.
struct ProviderBudget: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// A fresh read (and the read after a registration).
        case read
        case write
    }

    struct Limits: Hashable, Sendable {
        /// Requests of all kinds that may wait for the provider at once.
        var total: Int
        /// Of those, how many may be reads: the rest is kept for writes.
        var reads: Int
        /// How many one connection may hold, reads and writes together.
        var perConnection: Int

        /// 4 096 in all; reads at most half of them, one connection a quarter.
        static let standard = Limits(total: 4_096, reads: 2_048, perConnection: 1_024)
    }

    /// Why a request may not wait now.
    enum Refusal: Hashable, Sendable {
        /// The provider has `limits.total` requests waiting.
        case full
        /// It has `limits.reads` reads waiting.
        case readsFull
        /// The asking connection has `limits.perConnection` requests waiting for it.
        case connectionFull
    }

    let limits: Limits
    private(set) var reads = 0
    private(set) var writes = 0
    /// Waiting requests by the connection that asked; no entry at 0.
    private(set) var byConnection: [UInt64: Int] = [:]

    init(limits: Limits = .standard) {
        self.limits = limits
    }

    var waiting: Int { reads + writes }

    /// Why `kind` from `connectionID` may not wait now; nil when it may.
    func refusal(of kind: Kind, from connectionID: UInt64) -> Refusal? {
        if waiting >= limits.total { return .full }
        if kind == .read && reads >= limits.reads { return .readsFull }
        if byConnection[connectionID, default: 0] >= limits.perConnection { return .connectionFull }
        return nil
    }

    /// Counts a request that now waits (after `refusal` said it may).
    mutating func take(_ kind: Kind, from connectionID: UInt64) {
        switch kind {
        case .read: reads += 1
        case .write: writes += 1
        }
        byConnection[connectionID, default: 0] += 1
    }

    /// Counts a request that no longer waits (answered, or timed out).
    mutating func release(_ kind: Kind, from connectionID: UInt64) {
        switch kind {
        case .read: reads = max(reads - 1, 0)
        case .write: writes = max(writes - 1, 0)
        }
        let left = byConnection[connectionID, default: 0] - 1
        byConnection[connectionID] = left > 0 ? left : nil
    }

    /// What a refused caller is told: what is full, whose, and the limit.
    func error(_ refusal: Refusal, provider: String, connectionID: UInt64) -> HomeError {
        let retry = "; retry when it has answered some"
        switch refusal {
        case .full:
            return HomeError(
                .resourceExhausted,
                "provider \"\(provider)\" has \(waiting) requests waiting for answers, as many as may wait" + retry)
        case .readsFull:
            return HomeError(
                .resourceExhausted,
                "provider \"\(provider)\" has \(reads) fresh reads waiting for answers, as many as may wait "
                    + "(\(limits.reads) of its \(limits.total) requests; the others are kept for writes)" + retry)
        case .connectionFull:
            return HomeError(
                .resourceExhausted,
                "connection \(connectionID) has \(byConnection[connectionID, default: 0]) requests waiting for "
                    + "provider \"\(provider)\", its share (\(limits.perConnection) of the provider's "
                    + "\(limits.total))" + retry)
        }
    }
}
