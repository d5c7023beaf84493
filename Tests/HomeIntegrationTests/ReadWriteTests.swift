import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

@Suite("reading and writing characteristics", .timeLimit(.safetyNet))
struct ReadWriteTests {
    @Test("a write is read back, and its reply carries the sequence number it took effect at")
    func writeThenRead() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let result = try await client.write(.uint(37), to: brightness)
            #expect(result.seq == server.store.lastSeq)
            let read = try await client.read([brightness])
            #expect(
                read.reads == [
                    CharacteristicRead(
                        characteristicID: brightness, value: .int(37),
                        lastUpdatedMs: read.reads[0].lastUpdatedMs, changeSeq: result.seq)
                ])
            #expect(read.reads[0].lastUpdatedMs > 1_700_000_000_000)
            let unchanged = try await client.write(.uint(37), to: brightness)
            #expect(unchanged.seq == 0, "a write that changes nothing produces no event")
            await client.close()
        }
    }

    /// Writes `value` to `path` and returns the failure, checking nothing changed.
    static func rejectedWrite(_ value: CharacteristicValue, to path: String) async throws -> HomeError? {
        try await withPatientServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = try await client.getHome().graph
            let before = server.store.snapshot()
            let id = path.allSatisfy(\.isNumber) ? ObjectID(path)! : graph.id(path)
            let error = await #expect(throws: HomeError.self) { try await client.write(value, to: id) }
            let after = server.store.snapshot()
            #expect(after.graph == before.graph, "a rejected write changes nothing")
            #expect(after.seq == before.seq, "a rejected write publishes nothing")
            return error
        }
    }

    @Test("a value of the wrong type: INVALID_ARGUMENT naming the characteristic and the value")
    func wrongType() async throws {
        let error = try await Self.rejectedWrite(.string("bright"), to: "Living Room/Lamp/Brightness")
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("Brightness") == true)
        #expect(error?.message.contains("bright") == true)
    }

    @Test("a value above the maximum: INVALID_ARGUMENT naming the value and the maximum")
    func outOfRange() async throws {
        let error = try await Self.rejectedWrite(.uint(150), to: "Living Room/Lamp/Brightness")
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("150 is above the maximum 100") == true)
    }

    @Test("a value not among the valid values: INVALID_ARGUMENT listing them")
    func notValidValue() async throws {
        let error = try await Self.rejectedWrite(.uint(7), to: "Living Room/Thermostat/TargetHeatingCoolingState")
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("7") == true)
        #expect(error?.message.lowercased().contains("valid") == true)
    }

    @Test("a write to a read-only characteristic: INVALID_ARGUMENT saying read-only")
    func readOnly() async throws {
        let error = try await Self.rejectedWrite(.float(30), to: "Bedroom/Temperature Sensor/CurrentTemperature")
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("read-only") == true)
    }

    @Test("a write to an unknown id: NOT_FOUND naming the id")
    func unknownID() async throws {
        let error = try await Self.rejectedWrite(.bool(true), to: "999999")
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("999999") == true)
    }

    @Test("an atomic batch with one bad write applies nothing; a plain batch applies the good ones")
    func batches() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let on = graph.id("Living Room/Lamp/On")
            let brightness = graph.id("Living Room/Lamp/Brightness")
            let writes = [
                CharacteristicWrite(characteristicID: on, value: .bool(false)),
                CharacteristicWrite(characteristicID: brightness, value: .uint(101)),
            ]
            let before = server.store.snapshot().graph
            let atomic = try await client.write(WriteCharacteristicsRequest(writes: writes, atomic: true))
            #expect(atomic.results[0].error?.code == .aborted)
            #expect(atomic.results[1].error?.code == .invalidArgument)
            #expect(server.store.snapshot().graph == before)

            let check = try await client.write(WriteCharacteristicsRequest(writes: writes, validateOnly: true))
            #expect(check.results[0].error == nil)
            #expect(check.results[1].error?.code == .invalidArgument)
            #expect(server.store.snapshot().graph == before)

            let plain = try await client.write(WriteCharacteristicsRequest(writes: writes))
            #expect(plain.results[0].error == nil && plain.results[0].seq > 0)
            #expect(plain.results[1].error?.code == .invalidArgument)
            #expect(server.store.snapshot().graph.characteristics[on]?.value == .bool(false))
            await client.close()
        }
    }

    @Test("reads of unknown ids fail per item, naming the id")
    func readUnknown() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let response = try await client.read([424_242])
            #expect(response.reads[0].error == HomeError(.notFound, "no characteristic with id 424242"))
            await client.close()
        }
    }

    @Test("many calls in flight on one connection are each answered")
    func concurrentCalls() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let graph = try await client.getHome().graph
            let ids = Array(graph.characteristics.keys.sorted())
            try await withThrowingTaskGroup(of: (ObjectID, CharacteristicRead?).self) { group in
                for index in 0..<500 {
                    let id = ids[index % ids.count]
                    group.addTask { (id, try await client.read([id]).reads.first) }
                }
                var answered = 0
                for try await (id, read) in group {
                    #expect(read?.characteristicID == id)
                    answered += 1
                }
                #expect(answered == 500)
            }
            await client.close()
        }
    }
}
