import Foundation
import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

/// Notifications that never lose a change: each test a real scenario over the socket.
@Suite("notifications", .timeLimit(.safetyNet))
struct NotificationTests {
    /// Collects value events from a subscription until `done` says so.
    static func collect(
        _ iterator: inout HomeSubscription.AsyncIterator,
        until done: ([HomeEvent], [StreamMarker]) -> Bool
    ) async throws -> (events: [HomeEvent], markers: [StreamMarker], snapshot: [Characteristic]) {
        var events: [HomeEvent] = []
        var markers: [StreamMarker] = []
        var snapshot: [Characteristic] = []
        while !done(events, markers), let message = try await iterator.next() {
            if let marker = message.marker { markers.append(marker) }
            events += message.events
            snapshot += message.snapshot
        }
        return (events, markers, snapshot)
    }

    static func values(_ events: [HomeEvent], of id: ObjectID) -> [CharacteristicValue] {
        events.compactMap {
            if case .value(let change) = $0.body, change.characteristicID == id { change.value } else { nil }
        }
    }

    @Test(
        "a watcher sees another client's change with that client as origin; its own change is local, and absent when it excludes its own"
    )
    func origins() async throws {
        try await withPatientServer { server in
            let a = try await server.connect(name: "A")
            let b = try await server.connect(name: "B")
            let graph = try await a.getHome().graph
            let on = graph.id("Living Room/Lamp/On")
            let brightness = graph.id("Living Room/Lamp/Brightness")
            var all = a.subscribe(SubscribeRequest()).makeAsyncIterator()
            var others = a.subscribe(SubscribeRequest(excludeOwn: true)).makeAsyncIterator()
            _ = try await all.next()
            _ = try await others.next()

            _ = try await b.write(.bool(false), to: on)
            _ = try await a.write(.int(33), to: brightness)
            _ = try await b.write(.bool(true), to: on)

            let seen = try await Self.collect(&all) { events, _ in events.count >= 3 }.events
            #expect(
                seen.map(\.origin) == [
                    Origin(kind: .client, connectionID: b.connectionID, name: "B", uid: getuid()),
                    Origin(kind: .client, connectionID: a.connectionID, name: "A", uid: getuid()),
                    Origin(kind: .client, connectionID: b.connectionID, name: "B", uid: getuid()),
                ])
            #expect(seen[1].origin.connectionID == a.connectionID, "A can tell its own change (local) from B's")
            let filtered = try await Self.collect(&others) { events, _ in events.count >= 2 }.events
            #expect(filtered.map(\.origin.name) == ["B", "B"], "A's own change is left out")
            #expect(Self.values(filtered, of: on) == [.bool(false), .bool(true)])
            await a.close()
            await b.close()
        }
    }

    @Test("resuming after a disconnect replays exactly what was missed, in order, nothing twice")
    func resumeAfterDisconnect() async throws {
        try await withPatientServer { server in
            let writer = try await server.connect(name: "writer")
            let graph = try await writer.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let filter = SubscriptionFilter(characteristicIDs: [brightness])

            let first = try await server.connect(name: "watcher")
            var iterator = first.subscribe(SubscribeRequest(filter: filter)).makeAsyncIterator()
            _ = try await iterator.next()
            for level in 1...5 { _ = try await writer.write(.int(Int64(level)), to: brightness) }
            let before = try await Self.collect(&iterator) { events, _ in events.count >= 5 }.events
            let lastSeen = before.last!.seq
            await first.close()

            for level in 6...30 { _ = try await writer.write(.int(Int64(level)), to: brightness) }

            let second = try await server.connect(name: "watcher")
            var resumed = second.subscribe(
                SubscribeRequest(filter: filter, sinceSeq: lastSeen, journalID: first.hello.journalID)
            )
            .makeAsyncIterator()
            _ = try await writer.write(.int(31), to: brightness)  // live, after the replay
            let after = try await Self.collect(&resumed) { events, _ in events.count >= 26 }
            #expect(after.markers.first?.kind == .subscribed)
            #expect(!after.markers.contains { $0.kind == .resync })
            #expect(Self.values(before + after.events, of: brightness) == (1...31).map { .int(Int64($0)) })
            let seqs = (before + after.events).map(\.seq)
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
            await second.close()
            await writer.close()
        }
    }

    @Test("resuming from a journal the daemon no longer has: an explicit resync marker, then a fresh snapshot")
    func resumeUnknownJournal() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let on = graph.id("Living Room/Lamp/On")
            var iterator = client.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(characteristicIDs: [on]), sinceSeq: 12,
                    journalID: "a-journal-from-before-a-restart")
            )
            .makeAsyncIterator()
            let start = try await Self.collect(&iterator) { _, markers in markers.contains { $0.kind == .snapshotEnd } }
            // SUBSCRIBED always comes first: the stream is live, then the resync says why a snapshot follows.
            #expect(start.markers.map(\.kind).prefix(2) == [.subscribed, .resync])
            #expect(start.markers.dropFirst().first?.reason.contains("journal changed") == true)
            #expect(start.snapshot.map(\.id) == [on])
            #expect(start.snapshot.first?.value == graph.characteristics[on]?.value)
            await client.close()
        }
    }

    @Test("resuming past what the journal holds is a resync, never a silent gap")
    func resumeTooOld() async throws {
        try await withPatientServer(journalCapacity: 10) { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let hue = graph.id("Living Room/Lamp/Hue")
            _ = try await client.write(.float(1), to: hue)
            let seen = server.store.lastSeq
            for value in 2...30 { _ = try await client.write(.float(Double(value)), to: hue) }
            var iterator = client.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(characteristicIDs: [hue]),
                    sinceSeq: seen, journalID: client.hello.journalID)
            ).makeAsyncIterator()
            let start = try await Self.collect(&iterator) { _, markers in markers.contains { $0.kind == .snapshotEnd } }
            // SUBSCRIBED always comes first: the stream is live, then the resync says why a snapshot follows.
            #expect(start.markers.map(\.kind).prefix(2) == [.subscribed, .resync])
            #expect(start.markers.dropFirst().first?.reason.contains("no longer held") == true)
            #expect(start.snapshot.first?.value == .float(30))
            await client.close()
        }
    }

    @Test("the snapshot and the changes after it meet with no gap and no duplicate")
    func snapshotSeam() async throws {
        try await withPatientServer { server in
            let writer = try await server.connect(name: "writer")
            let watcher = try await server.connect(name: "watcher")
            let graph = try await writer.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let hammer = Task {
                for level in 0..<300 { _ = try await writer.write(.int(Int64(level % 100)), to: brightness) }
            }
            try await Task.sleep(for: .milliseconds(5))
            var iterator = watcher.subscribe(
                SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness]), snapshot: true)
            )
            .makeAsyncIterator()
            let start = try await Self.collect(&iterator) { _, markers in markers.contains { $0.kind == .snapshotEnd } }
            let seam = start.markers.last!.seq
            try await hammer.value
            let final = server.store.lastSeq
            var rest = try await Self.collect(&iterator) { events, _ in (events.last?.seq ?? seam) >= final }.events
            rest = start.events + rest
            #expect(rest.allSatisfy { $0.seq > seam }, "no change from before the snapshot repeats")
            let seqs = rest.map(\.seq)
            #expect(Set(seqs).count == seqs.count)
            // Every change after the seam arrives: together they end at the final value.
            let last = Self.values(rest, of: brightness).last ?? start.snapshot.first?.value
            #expect(last == server.store.snapshot().graph.characteristics[brightness]?.value)
            await writer.close()
            await watcher.close()
        }
    }

    @Test(
        "a subscriber that stops reading: bounded memory, a second subscriber gets every change, the slow one gets coalesced values"
    )
    func slowSubscriber() async throws {
        try await withPatientServer(configure: { $0.defaultQueueLimit = 256 }) { server in
            let writer = try await server.connect(name: "writer")
            let slowClient = try await server.connect(name: "slow")
            let fastClient = try await server.connect(name: "fast")
            let graph = try await writer.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let hue = graph.id("Living Room/Lamp/Hue")
            let filter = SubscriptionFilter(characteristicIDs: [brightness, hue])
            // The slow one keeps the daemon's default queue (256 here); the fast one asks for
            // room for a whole write batch, which is published in one go.
            var slow = slowClient.subscribe(SubscribeRequest(filter: filter)).makeAsyncIterator()
            var fast = fastClient.subscribe(SubscribeRequest(filter: filter, queueLimit: 16_384)).makeAsyncIterator()
            _ = try await slow.next()
            _ = try await fast.next()

            let total = 100_000
            let reader = Task { [fast] in
                var fast = fast
                // Counting merged changes too, so a failure shows as a wrong count, not a hang.
                return try await Self.collect(&fast) { events, _ in
                    events.reduce(0) { count, event in
                        if case .value(let change) = event.body { count + 1 + Int(change.merged) } else { count + 1 }
                    } >= total
                }.events
            }
            var level: Int64 = 0
            for _ in 0..<(total / 1000) {
                var writes: [CharacteristicWrite] = []
                for index in 0..<1000 {
                    level += 1
                    writes.append(
                        index % 2 == 0
                            ? CharacteristicWrite(characteristicID: brightness, value: .int(level % 100))
                            : CharacteristicWrite(characteristicID: hue, value: .float(Double(level % 360))))
                }
                _ = try await writer.write(WriteCharacteristicsRequest(writes: writes))
            }
            let delivered = try await reader.value
            #expect(delivered.count == total, "the fast subscriber receives every change")
            #expect(delivered.map(\.seq) == delivered.map(\.seq).sorted())

            let stats = try await writer.stats()
            let slowStats = try #require(stats.connections.first { $0.clientName == "slow" }?.subscriptions.first)
            #expect(slowStats.queueDepth <= 256 + 2, "the slow subscriber's queue stays within its limit")
            #expect(slowStats.merged > 0)
            #expect(slowStats.sent < UInt64(total))

            // Reading again: queued events, then the latest value of each characteristic.
            let rest = try await Self.collect(&slow) { events, _ in
                events.contains { if case .value(let c) = $0.body { c.merged > 0 } else { false } }
                    && events.last?.seq == server.store.lastSeq
            }.events
            let finalGraph = server.store.snapshot().graph
            #expect(Self.values(rest, of: brightness).last == finalGraph.characteristics[brightness]?.value)
            #expect(Self.values(rest, of: hue).last == finalGraph.characteristics[hue]?.value)
            #expect(rest.map(\.seq) == rest.map(\.seq).sorted())
            await writer.close()
            await slowClient.close()
            await fastClient.close()
        }
    }

    @Test("the gap policy tells a slow subscriber exactly which sequence numbers it lost")
    func gapPolicy() async throws {
        try await withPatientServer { server in
            let writer = try await server.connect(name: "writer")
            let slowClient = try await server.connect(name: "slow")
            let graph = try await writer.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            var slow = slowClient.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(characteristicIDs: [brightness]),
                    policy: .gap, queueLimit: 16)
            ).makeAsyncIterator()
            _ = try await slow.next()
            for round in 0..<50 {
                let writes = (0..<1000).map {
                    CharacteristicWrite(characteristicID: brightness, value: .int(Int64(($0 + round) % 2)))
                }
                _ = try await writer.write(WriteCharacteristicsRequest(writes: writes))
            }
            let last = server.store.lastSeq
            let result = try await Self.collect(&slow) { events, markers in
                (events.last?.seq ?? 0) >= last || (markers.last?.gapTo ?? 0) >= last
            }
            let gaps = result.markers.filter { $0.kind == .gap }
            #expect(!gaps.isEmpty)
            // Delivered events plus the gaps' ranges account for every sequence number.
            var covered = Set(result.events.map(\.seq))
            for gap in gaps { covered.formUnion(gap.gapFrom...gap.gapTo) }
            let first = result.events.first?.seq ?? gaps.first!.gapFrom
            #expect(covered.isSuperset(of: Set(first...last)))
            await writer.close()
            await slowClient.close()
        }
    }

    @Test("the disconnect policy ends an overflowing subscription with RESOURCE_EXHAUSTED; the connection lives on")
    func disconnectPolicy() async throws {
        try await withPatientServer { server in
            let client = try await server.connect(name: "slow")
            let graph = try await client.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            var iterator = client.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(characteristicIDs: [brightness]),
                    policy: .disconnect, queueLimit: 4)
            ).makeAsyncIterator()
            _ = try await iterator.next()
            // One batch, published under one lock: more than the queue holds.
            _ = try await client.write(
                WriteCharacteristicsRequest(
                    writes: (1...50).map {
                        CharacteristicWrite(characteristicID: brightness, value: .int(Int64($0)))
                    }))
            let error = await #expect(throws: HomeError.self) {
                while try await iterator.next() != nil {}
            }
            #expect(error?.code == .resourceExhausted)
            #expect(error?.message.contains("policy is disconnect") == true)
            #expect(
                try await client.read([brightness]).reads.first?.value == .int(50), "the connection still serves calls")
            #expect(server.store.subscriptionCount == 0)
            await client.close()
        }
    }

    @Test("ten doorbell presses in a burst reach a slow subscriber as ten events")
    func doorbellBurst() async throws {
        try await withPatientServer { server in
            let client = try await server.connect(name: "slow")
            let graph = try await client.getHome().graph
            let press = graph.id("Hallway/Doorbell/ProgrammableSwitchEvent")
            let brightness = graph.id("Living Room/Lamp/Brightness")
            var slow = client.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(characteristicIDs: [press, brightness]),
                    queueLimit: 16)
            ).makeAsyncIterator()
            _ = try await slow.next()
            // One batch, published under one lock: the queue of 16 overflows before the
            // subscriber can read anything. Brightness changes coalesce; presses must not.
            var writes: [CharacteristicWrite] = []
            for level in 1...40 {
                writes.append(CharacteristicWrite(characteristicID: brightness, value: .int(Int64(level))))
                if level % 4 == 0 { writes.append(CharacteristicWrite(characteristicID: press, value: .uint(0))) }
            }
            let result = server.store.write(writes, origin: .simulator, enforceWritable: false)
            #expect(result.results.allSatisfy { $0.error == nil })
            let all = try await Self.collect(&slow) { events, _ in
                Self.values(events, of: press).count >= 10 && Self.values(events, of: brightness).last == .int(40)
            }.events
            #expect(Self.values(all, of: press).count == 10)
            #expect(Self.values(all, of: brightness).last == .int(40))
            #expect(
                all.contains {
                    if case .value(let c) = $0.body { c.characteristicID == brightness && c.merged > 0 } else { false }
                },
                "the subscriber really was too slow: brightness changes were merged")
            #expect(all.map(\.seq) == all.map(\.seq).sorted())
            #expect(
                !all.contains {
                    if case .value(let c) = $0.body { c.characteristicID == press && c.merged > 0 } else { false }
                })
            await client.close()
        }
    }

    @Test("widening and narrowing an open subscription takes effect between two events")
    func widenAndNarrow() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let on = graph.id("Living Room/Lamp/On")
            let hue = graph.id("Living Room/Lamp/Hue")
            let subscription = client.subscribe(SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [on])))
            var iterator = subscription.makeAsyncIterator()
            _ = try await iterator.next()
            _ = try await client.write(.float(10), to: hue)  // not watched yet
            let widenedAt = try await client.modify(subscription, add: SubscriptionFilter(characteristicIDs: [hue]))
            _ = try await client.write(.float(20), to: hue)
            _ = try await client.write(.bool(false), to: on)
            let narrowedAt = try await client.modify(subscription, remove: SubscriptionFilter(characteristicIDs: [on]))
            _ = try await client.write(.bool(true), to: on)  // no longer watched
            _ = try await client.write(.float(30), to: hue)
            let events = try await Self.collect(&iterator) { events, _ in events.count >= 3 }.events
            #expect(Self.values(events, of: hue) == [.float(20), .float(30)])
            #expect(Self.values(events, of: on) == [.bool(false)])
            #expect(events.allSatisfy { $0.seq > widenedAt })
            #expect(narrowedAt > widenedAt)
            let unknown = await #expect(throws: HomeError.self) {
                try await client.modify(subscription, add: SubscriptionFilter(characteristicIDs: [987_654]))
            }
            #expect(unknown?.code == .notFound)
            await client.close()
        }
    }

    @Test("a room filter follows an accessory moved into the room and out of it")
    func roomFilterFollowsMoves() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let lamp = try #require(graph.characteristics[brightness]).accessoryID
            let livingRoom = try #require(graph.rooms.values.first { $0.name == "Living Room" }).id
            let bedroom = try #require(graph.rooms.values.first { $0.name == "Bedroom" }).id
            let subscription = client.subscribe(SubscribeRequest(filter: SubscriptionFilter(roomIDs: [bedroom])))
            var iterator = subscription.makeAsyncIterator()
            _ = try await iterator.next()
            // The filter's verdict on Brightness (not in the bedroom) is remembered
            // between writes: a move must make it ask again, both ways.
            _ = try await client.write(.int(11), to: brightness)
            _ = try await client.write(.int(12), to: brightness)
            _ = try await client.assignAccessory(lamp, toRoom: bedroom)
            _ = try await client.write(.int(13), to: brightness)
            _ = try await client.assignAccessory(lamp, toRoom: livingRoom)
            _ = try await client.write(.int(14), to: brightness)
            _ = try await client.assignAccessory(lamp, toRoom: bedroom)
            _ = try await client.write(.int(15), to: brightness)
            // Last, a change the filter has not judged before, so the wait ends
            // even when the lamp's changes went missing.
            let coffeeMaker = graph.id("Kitchen/Coffee Maker/On")
            _ = try await client.assignAccessory(
                try #require(graph.characteristics[coffeeMaker]).accessoryID, toRoom: bedroom)
            _ = try await client.write(.bool(true), to: coffeeMaker)
            let events = try await Self.collect(&iterator) { events, _ in !Self.values(events, of: coffeeMaker).isEmpty
            }.events
            #expect(Self.values(events, of: brightness) == [.int(13), .int(15)])
            await client.close()
        }
    }

    @Test("a quiet stream sends heartbeats at the asked interval")
    func heartbeat() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            var iterator = client.subscribe(SubscribeRequest(heartbeatMs: 100)).makeAsyncIterator()
            let markers = try await Self.collect(&iterator) { _, markers in
                markers.filter { $0.kind == .heartbeat }.count >= 2
            }.markers
            #expect(markers.first?.kind == .subscribed)
            #expect(markers.filter { $0.kind == .heartbeat }.allSatisfy { $0.seq == server.store.lastSeq })
            await client.close()
        }
    }

    @Test("a heartbeat faster than every 100 ms is refused, saying the minimum")
    func heartbeatTooFast() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            var iterator = client.subscribe(SubscribeRequest(heartbeatMs: 1)).makeAsyncIterator()
            let error = await #expect(throws: HomeError.self) { _ = try await iterator.next() }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "heartbeat_ms 1 is below the minimum of 100 ms (0: no heartbeat)")
            await client.close()
        }
    }

    @Test("a minimum interval holds back a burst to its latest value, counting what it merged")
    func minimumInterval() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            var iterator = client.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(characteristicIDs: [brightness]),
                    minIntervalMs: 300)
            ).makeAsyncIterator()
            _ = try await iterator.next()
            // One batch: all ten changes are queued before the subscription sends any.
            _ = try await client.write(
                WriteCharacteristicsRequest(
                    writes: (1...10).map {
                        CharacteristicWrite(characteristicID: brightness, value: .int(Int64($0)))
                    }))
            let events = try await Self.collect(&iterator) { events, _ in
                Self.values(events, of: brightness).last == .int(10)
            }.events
            #expect(
                Self.values(events, of: brightness) == [.int(1), .int(10)],
                "the first change at once, the rest merged into one after the interval")
            guard case .value(let last) = events.last?.body else {
                Issue.record("expected a value")
                return
            }
            #expect(last.merged == 8)
            await client.close()
        }
    }

    @Test(
        "a value held back by the minimum interval is not lost to a disconnect: the resume brings it, nothing twice, nothing stale"
    )
    func minimumIntervalResume() async throws {
        try await withPatientServer { server in
            let writer = try await server.connect()
            let graph = try await writer.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let hue = graph.id("Living Room/Lamp/Hue")
            let saturation = graph.id("Living Room/Lamp/Saturation")
            let on = graph.id("Living Room/Lamp/On")
            let request = SubscribeRequest(
                filter: SubscriptionFilter(characteristicIDs: [brightness, hue, saturation, on]),
                minIntervalMs: 60_000)
            let watcher = try await server.connect()
            var cursor = StreamCursor()
            var delivered: [HomeEvent] = []
            var iterator = watcher.subscribe(request).makeAsyncIterator()
            _ = cursor.accept(try #require(try await iterator.next()))
            // Brightness 1 and Hue 1 go out at once; Brightness 2, 3 and Hue 2 are
            // held for a minute. Saturation's first change goes out after them,
            // above held values.
            let held = try await writer.write(
                WriteCharacteristicsRequest(writes: [
                    CharacteristicWrite(characteristicID: brightness, value: .int(1)),
                    CharacteristicWrite(characteristicID: hue, value: .float(1)),
                ]))
            for (value, id) in [(CharacteristicValue.int(2), brightness), (.float(2), hue), (.int(3), brightness)] {
                _ = try await writer.write(value, to: id)
            }
            let saturationSeq = try await writer.write(.float(7), to: saturation).seq
            while !delivered.contains(where: { $0.seq == saturationSeq }), let message = try await iterator.next() {
                delivered += cursor.accept(message)
            }
            #expect(Self.values(delivered, of: brightness) == [.int(1)])
            #expect(cursor.resumeSeq == held.seq, "resume below the first held change, not after Saturation's")
            await watcher.close()

            // A resume from the cursor on a new connection brings the held changes,
            // before this later one (a first change of its characteristic: never held).
            let lastSeq = try await writer.write(.bool(false), to: on).seq
            let resumed = try await server.connect()
            var again = resumed.subscribe(
                SubscribeRequest(
                    filter: request.filter, sinceSeq: cursor.resumeSeq, journalID: cursor.journalID,
                    minIntervalMs: 60_000)
            )
            .makeAsyncIterator()
            while !delivered.contains(where: { $0.seq == lastSeq }), let message = try await again.next() {
                delivered += cursor.accept(message)
            }
            #expect(
                Self.values(delivered, of: brightness) == [.int(1), .int(2)],
                "the new stream sends the first held change at once and holds the next")
            #expect(Self.values(delivered, of: hue) == [.float(1), .float(2)])
            #expect(Self.values(delivered, of: saturation) == [.float(7)], "Saturation's change once, not again")
            #expect(Set(delivered.map(\.seq)).count == delivered.count, "nothing twice")
            await resumed.close()
            await writer.close()
        }
    }

    @Test("reachability changes and scenes run are streamed as events")
    func reachabilityAndScenes() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let lamp = graph.id("Living Room/Lamp")
            let on = graph.id("Living Room/Lamp/On")
            let homeID = graph.homeOrder[0]
            let scene = try await client.addActionSet(name: "Lights out", homeID: homeID).createdID
            _ = try await client.addAction(characteristicID: on, value: .bool(false), toActionSet: scene)
            var iterator = client.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(kinds: [.reachabilityChanged, .actionSetExecuted, .valueChanged]))
            )
            .makeAsyncIterator()
            _ = try await iterator.next()
            try server.store.setReachable(
                false, accessoryID: lamp, origin: Origin(kind: .provider, name: "lamp-bridge"))
            let run = try await client.executeActionSet(scene)
            #expect(run.results.map(\.error) == [nil])
            let events = try await Self.collect(&iterator) { events, _ in events.count >= 3 }.events
            #expect(
                events.map(\.body) == [
                    .reachability(accessoryID: lamp, reachable: false),
                    .value(
                        ValueChange(
                            accessoryID: lamp, serviceID: graph.characteristics[on]!.serviceID, characteristicID: on,
                            value: .bool(false))),
                    .actionSetExecuted(scene),
                ])
            #expect(events[0].origin.kind == .provider)
            #expect(run.seq == events[2].seq)
            await client.close()
        }
    }
}
