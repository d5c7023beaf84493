import HomeModel

@testable import HomeServer

/// Who serves each accessory, for a test's change that routes writes.
struct StubOwners: WriteOwners {
    var provider: (Accessory) -> String?
    var optimisticIDs: [String: Set<ObjectID>] = [:]

    /// Every accessory the daemon's own.
    static var none: StubOwners { StubOwners { _ in nil } }

    /// Every accessory served by `provider`.
    static func all(_ provider: String, optimistic: Set<ObjectID> = []) -> StubOwners {
        StubOwners(provider: { _ in provider }, optimisticIDs: [provider: optimistic])
    }

    func remoteProvider(of accessory: Accessory) -> String? { provider(accessory) }
    func optimistic(_ providerID: String) -> Set<ObjectID> { optimisticIDs[providerID] ?? [] }
}
