import Dispatch
import HomeModel
import Testing

@testable import HomeServer

/// A registration is planned on a snapshot, outside the store's lock, and installed
/// only if nothing committed meanwhile: whatever runs alongside it, the result is
/// the one a registration made alone, at one point in time, would give.
@Suite("registrations planned outside the store's lock")
struct RegistrationPlanningTests {
    static func lamp(_ key: String, room: String? = nil) -> ProvidedAccessory {
        ProvidedAccessory(
            key: key, name: "Lamp \(key)", category: .lightbulb, room: room,
            services: [
                ProvidedService(
                    type: "Lightbulb", characteristics: [ProvidedCharacteristic(type: "On", value: .bool(true))])
            ])
    }

    static func store() throws -> (HomeStore, home: ObjectID) {
        var graph = HomeGraph()
        let home = try graph.addHome(name: "Home")
        return (HomeStore(graph: graph), home)
    }

    static let origin = Origin(kind: .provider, connectionID: 2, name: "acme")

    /// Every event the journal holds, in order.
    static func events(_ store: HomeStore) -> [HomeEvent] {
        store.withState { $0.core.journal.events(after: 0) } ?? []
    }

    @Test("a plan made stale by a layout change is made again: the new accessory goes to the room made meanwhile")
    func stalePlanIsRedone() throws {
        let (store, home) = try Self.store()
        var plans = 0
        var porch: ObjectID = 0
        let outcome = try store.register(
            [Self.lamp("l1", room: "Porch")], removing: [], provider: "acme", homeID: nil, origin: Self.origin
        ) {
            plans += 1
            // Between the first plan (made when there was no Porch) and its commit.
            if plans == 1 {
                porch =
                    (try? store.changeLayout(.addRoom(name: "Porch", homeID: home), origin: .daemon))?.createdID ?? 0
            }
        }
        #expect(plans == 2)
        let graph = store.snapshot().graph
        let lampID = try #require(outcome.registration.accessoryIDs.first)
        #expect(graph.accessories[lampID]?.roomID == porch && porch != 0)
        #expect(lampID != porch, "ids are not given twice")
        try graph.checkIntegrity()
        let added = Self.events(store).compactMap { event -> (UInt64, ObjectKind)? in
            guard case .layout(let change) = event.body, change.action == .added else { return nil }
            return (event.seq, change.object)
        }
        #expect(added.map(\.1) == [.room, .accessory], "the room, then the accessory in it")
    }

    @Test("a graph that keeps changing under the plans: the registration is made under the lock, once")
    func fallsBackUnderTheLock() throws {
        let (store, home) = try Self.store()
        let room = try store.changeLayout(.addRoom(name: "Den", homeID: home), origin: .daemon).createdID
        var plans = 0
        let outcome = try store.register(
            [Self.lamp("l1")], removing: [], provider: "acme", homeID: nil, origin: Self.origin
        ) {
            plans += 1
            _ = try? store.changeLayout(.rename(id: room, name: "Den \(plans)"), origin: .daemon)
        }
        #expect(plans == HomeStore.registrationPlans)
        let graph = store.snapshot().graph
        #expect(graph.rooms[room]?.name == "Den \(HomeStore.registrationPlans)", "every change in between kept")
        #expect(
            graph.accessories.values.filter { $0.provider == "acme" }.map(\.id) == outcome.registration.accessoryIDs)
        try graph.checkIntegrity()
    }

    @Test(
        "registrations of several providers and layout changes at once: every one applied once, ids unique, no gap",
        arguments: 0..<5)
    func concurrentRegistrationsAndLayout(round: Int) throws {
        let (store, home) = try Self.store()
        let providers = 4
        let calls = 5
        let perCall = 20
        let rooms = 40
        // Workers 0..<providers register; the last one adds rooms and renames them.
        DispatchQueue.concurrentPerform(iterations: providers + 1) { worker in
            if worker < providers {
                for call in 0..<calls {
                    let keys = (0..<perCall).map { Self.lamp("p\(worker)-c\(call)-\($0)", room: "Room \($0 % rooms)") }
                    _ = try? store.register(
                        keys, removing: [], provider: "provider-\(worker)", homeID: nil,
                        origin: Origin(kind: .provider, connectionID: UInt64(worker + 10), name: "provider-\(worker)"))
                }
            } else {
                for index in 0..<rooms {
                    if let room = try? store.changeLayout(
                        .addRoom(name: "Room \(index)", homeID: home), origin: .daemon
                    )
                    .createdID {
                        _ = try? store.changeLayout(.rename(id: room, name: "Room \(index)!"), origin: .daemon)
                    }
                }
            }
        }
        let graph = store.snapshot().graph
        try graph.checkIntegrity()
        for worker in 0..<providers {
            let keys = Set(graph.accessoryIDs(ofProvider: "provider-\(worker)").keys)
            let expected = Set(
                (0..<calls).flatMap { call in (0..<perCall).map { "p\(worker)-c\(call)-\($0)" } })
            #expect(keys == expected, "provider-\(worker)'s accessories, each once")
        }
        #expect(graph.accessories.count == providers * calls * perCall)
        #expect(Set(graph.rooms.values.map(\.name)).isSuperset(of: (0..<rooms).map { "Room \($0)!" }))

        let events = Self.events(store)
        #expect(events.map(\.seq) == Array(1...store.lastSeq), "numbered without a gap")
        var addedAccessories: [ObjectID] = []
        for event in events {
            if case .layout(let change) = event.body, change.action == .added, change.object == .accessory {
                addedAccessories.append(change.objectID)
            }
        }
        #expect(addedAccessories.count == providers * calls * perCall)
        #expect(Set(addedAccessories) == Set(graph.accessories.keys), "one event per accessory, for the one kept")
    }
}
