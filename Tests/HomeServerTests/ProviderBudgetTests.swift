import HomeModel
import Testing

@testable import HomeServer

/// The share of a provider's waiting requests each caller may hold: fresh reads
/// never take the room kept for writes, and no connection takes more than its share.
@Suite("a provider's budget of waiting requests")
struct ProviderBudgetTests {
    static func filled(_ kind: ProviderBudget.Kind, _ count: Int, from connectionID: UInt64) -> ProviderBudget {
        var budget = ProviderBudget()
        budget.fill(kind, count, from: connectionID)
        return budget
    }

    @Test("the standard limits: 4 096 in all, fresh reads at most 2 048, one connection at most 1 024")
    func standardLimits() {
        #expect(
            ProviderBudget.Limits.standard == ProviderBudget.Limits(total: 4_096, reads: 2_048, perConnection: 1_024))
    }

    @Test("one connection holds at most its share; another connection's write is still taken")
    func perConnectionShare() {
        let budget = Self.filled(.read, 1_024, from: 7)
        #expect(budget.refusal(of: .read, from: 7) == .connectionFull)
        #expect(budget.refusal(of: .write, from: 7) == .connectionFull, "writes and reads count together")
        #expect(budget.refusal(of: .write, from: 8) == nil)
        #expect(budget.refusal(of: .read, from: 8) == nil)
    }

    @Test("fresh reads fill at most half of the budget; writes still find room, from any connection")
    func readsLeaveRoomForWrites() {
        var budget = ProviderBudget()
        budget.fill(.read, 1_024, from: 1)
        budget.fill(.read, 1_024, from: 2)
        #expect(budget.reads == 2_048)
        #expect(budget.refusal(of: .read, from: 3) == .readsFull)
        #expect(budget.refusal(of: .write, from: 3) == nil)
        budget.fill(.write, 1_024, from: 3)
        budget.fill(.write, 1_024, from: 4)
        #expect(budget.waiting == 4_096)
        #expect(budget.refusal(of: .write, from: 5) == .full)
    }

    @Test("an answered or expired request gives its room back, to its connection and its kind")
    func release() {
        var budget = Self.filled(.read, 1_024, from: 7)
        budget.release(.read, from: 7)
        #expect(budget.refusal(of: .read, from: 7) == nil)
        #expect(budget.reads == 1_023 && budget.byConnection[7] == 1_023)
        for _ in 0..<1_023 { budget.release(.read, from: 7) }
        #expect(budget.waiting == 0 && budget.byConnection.isEmpty, "nothing is kept for a connection with none")
    }

    @Test("a refusal says what is full, whose, and the limit")
    func messages() {
        var budget = Self.filled(.read, 1_024, from: 7)
        #expect(
            budget.error(.connectionFull, provider: "acme", connectionID: 7)
                == HomeError(
                    .resourceExhausted,
                    "connection 7 has 1024 requests waiting for provider \"acme\", its share (1024 of the "
                        + "provider's 4096); retry when it has answered some"))
        budget.fill(.read, 1_024, from: 8)
        #expect(
            budget.error(.readsFull, provider: "acme", connectionID: 9)
                == HomeError(
                    .resourceExhausted,
                    "provider \"acme\" has 2048 fresh reads waiting for answers, as many as may wait (2048 of its "
                        + "4096 requests; the others are kept for writes); retry when it has answered some"))
        #expect(
            budget.error(.full, provider: "acme", connectionID: 9).message
                == "provider \"acme\" has 2048 requests waiting for answers, as many as may wait; "
                + "retry when it has answered some")
    }
}

extension ProviderBudget {
    /// Takes `count` requests, each after asking (as `ProviderHub.send` does).
    mutating func fill(_ kind: Kind, _ count: Int, from connectionID: UInt64) {
        for _ in 0..<count {
            guard refusal(of: kind, from: connectionID) == nil else { return }
            take(kind, from: connectionID)
        }
    }
}
