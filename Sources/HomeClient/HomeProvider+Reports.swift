internal import Foundation
public import HomeModel
internal import HomeWire
internal import Synchronization

/// Changes from the devices: what the provider reports to the daemon, and the ids
/// the daemon gave its accessories and characteristics.
extension HomeProvider {
    /// The daemon's id of a characteristic, once registered.
    public func id(of ref: CharacteristicRef) -> ObjectID? {
        state.withLock { $0.ids[ref] }
    }

    /// The daemon's id of an accessory, once registered.
    public func accessoryID(ofKey key: String) -> ObjectID? {
        state.withLock { $0.accessoryIDs[key] }
    }

    /// Waits until the provider has registered (again) since it was made: `count` = 1
    /// for the first registration, 2 for the one after a reconnection, …. Returns
    /// early if the task is cancelled.
    public func waitForRegistration(_ count: Int = 1) async {
        let waiterID = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state in
                    if state.registrations >= count || Task.isCancelled { return true }
                    state.waiters.append((count, waiterID, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.1 == waiterID }) else { return nil }
                return state.waiters.remove(at: index).2
            }
            waiter?.resume()
        }
    }

    func connectedClient() throws(HomeError) -> HomeClient {
        guard let client = state.withLock({ $0.client }) else {
            throw HomeError(.unavailable, "provider \"\(id)\" is not connected to homed")
        }
        return client
    }

    /// Reports values the devices now hold (one call for all of them).
    ///
    /// - Returns: the daemon's sequence number once they took effect.
    /// - Throws: UNAVAILABLE when not connected; the first value refused, if any.
    @discardableResult
    public func report(_ values: [CharacteristicRef: CharacteristicValue]) async throws(HomeError) -> UInt64 {
        try await report(inOrder: values.map { ($0.key, $0.value) })
    }

    /// Reports values in this order, in one call: the same characteristic may come
    /// more than once (readings a device buffered), each a change of its own.
    @discardableResult
    public func report(inOrder values: [(CharacteristicRef, CharacteristicValue)]) async throws(HomeError) -> UInt64 {
        let client = try connectedClient()
        let ids = state.withLock { $0.ids }
        var writes: [CharacteristicWrite] = []
        writes.reserveCapacity(values.count)
        for (ref, value) in values {
            guard let characteristicID = ids[ref] else {
                throw HomeError(.notFound, "provider \"\(id)\" registered no characteristic \(ref)")
            }
            writes.append(CharacteristicWrite(characteristicID: characteristicID, value: value))
        }
        let response = try await client.report(ValueReport(values: writes))
        if let refused = response.rejected.first, let error = refused.error { throw error }
        return response.seq
    }

    /// Says whether one of its accessories answers (a device that went offline).
    public func setReachable(_ reachable: Bool, accessoryKey: String) async throws(HomeError) {
        let client = try connectedClient()
        guard let accessoryID = accessoryID(ofKey: accessoryKey) else {
            throw HomeError(.notFound, "provider \"\(id)\" registered no accessory with key \"\(accessoryKey)\"")
        }
        let response = try await client.report(
            ValueReport(reachability: [ReachabilityChange(accessoryID: accessoryID, reachable: reachable)]))
        if let refused = response.rejected.first, let error = refused.error { throw error }
    }

    /// Adds or updates accessories (by key) and removes others, now and at every
    /// later registration.
    public func update(_ accessories: [ProvidedAccessory], removing removed: [String] = []) async throws(HomeError) {
        let client = state.withLock { state in
            for accessory in accessories {
                if let index = state.accessories.firstIndex(where: { $0.key == accessory.key }) {
                    state.accessories[index] = accessory
                } else {
                    state.accessories.append(accessory)
                }
            }
            state.accessories.removeAll { removed.contains($0.key) }
            return state.client
        }
        guard let client else { return }
        let response = try await client.registerAccessories(
            RegisterAccessoriesRequest(accessories: accessories, removeKeys: removed))
        install(response, client: client)
    }
}
