import Foundation
import HomeClient
import HomeModel
import HomeServer
import HomeTesting
import HomeWire
import Testing

/// A provider's lamp: key "lamp", a Lightbulb with On and Brightness.
private func porchLamp() -> ProvidedAccessory {
    ProvidedAccessory(
        key: "lamp", name: "Porch Lamp", category: .lightbulb, room: "Hallway",
        services: [
            ProvidedService(
                type: "Lightbulb", primary: true,
                characteristics: [
                    ProvidedCharacteristic(type: "On", value: .bool(true)),
                    ProvidedCharacteristic(type: "Brightness", value: .int(50)),
                ])
        ])
}

@Suite("conditional writes over the socket", .timeLimit(.safetyNet))
struct ConditionalWriteRaceTests {
    @Test("two clients that read the same value and write at once on that condition: exactly one wins")
    func twoClientsRace() async throws {
        try await withPatientServer { server in
            let reader = try await server.connect()
            let brightness = try await reader.getHome().graph.id("Living Room/Lamp/Brightness")
            for round in 0..<20 {
                let read = try await reader.read([brightness]).reads[0]
                let clients = [try await server.connect(name: "a"), try await server.connect(name: "b")]
                let outcomes = try await withThrowingTaskGroup(of: WriteResult.self) { group in
                    for (index, client) in clients.enumerated() {
                        group.addTask {
                            let response = try await client.write(
                                WriteCharacteristicsRequest(writes: [
                                    CharacteristicWrite(
                                        characteristicID: brightness, value: .int(Int64(round * 2 + index) % 100),
                                        condition: WriteCondition(
                                            seq: read.changeSeq, journalID: server.store.journalID))
                                ]))
                            return response.results[0]
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let winners = outcomes.filter { $0.error == nil }
                #expect(winners.count == 1, "round \(round): \(outcomes)")
                let loser = try #require(outcomes.first { $0.error != nil })
                #expect(loser.error?.code == .failedPrecondition)
                #expect(loser.error?.message.contains("last changed at seq \(winners.first?.seq ?? 0)") == true)
                #expect(try await reader.read([brightness]).reads[0].changeSeq == winners.first?.seq)
                for client in clients { await client.close() }
            }
            await reader.close()
        }
    }

    @Test(
        "through a provider: the condition is checked before the provider is sent the write; a second conditional write waits for nobody and fails while the first is in flight"
    )
    func throughProvider() async throws {
        try await withPatientServer { server in
            let providerClient = try await server.connect(name: "raw provider")
            var commands = providerClient.openProvider("raw").makeAsyncIterator()
            _ = try await commands.next()
            let registered = try await providerClient.registerAccessories(
                RegisterAccessoriesRequest(accessories: [porchLamp()]))
            let brightness = try #require(
                registered.characteristics.values.first { $0.type.name == "Brightness" }?.id)
            let first = try await server.connect(name: "first")
            let second = try await server.connect(name: "second")
            let read = try await first.read([brightness]).reads[0]
            let condition = WriteCondition(value: .int(50), seq: read.changeSeq)
            let firstWrite = Task {
                try await first.write(
                    WriteCharacteristicsRequest(writes: [
                        CharacteristicWrite(characteristicID: brightness, value: .int(70), condition: condition)
                    ]))
            }
            var writeCommand: ProviderCommand?
            while writeCommand == nil, let command = try await commands.next() {
                switch command.kind {
                case .ping: try await providerClient.answer(CommandAnswer(requestID: command.requestID))
                case .write: writeCommand = command
                default: break
                }
            }
            let command = try #require(writeCommand)
            // The first is in flight: the second, on the same reading, fails at once and is never sent.
            let refused = try await second.write(
                WriteCharacteristicsRequest(writes: [
                    CharacteristicWrite(characteristicID: brightness, value: .int(20), condition: condition)
                ]))
            #expect(refused.results[0].error?.code == .failedPrecondition)
            #expect(refused.results[0].error?.message.contains("waiting for its provider") == true)
            #expect(
                try await providerClient.answer(
                    CommandAnswer(requestID: command.requestID, writes: [WriteResult(characteristicID: brightness)])))
            let won = try await firstWrite.value.results[0]
            #expect(won.error == nil && won.seq > 0)
            // Now the reading is stale: refused before anything is sent.
            let stale = try await second.write(
                WriteCharacteristicsRequest(writes: [
                    CharacteristicWrite(characteristicID: brightness, value: .int(20), condition: condition)
                ]))
            #expect(stale.results[0].error?.code == .failedPrecondition)
            #expect(stale.results[0].error?.message.contains("is 70, last changed at seq \(won.seq)") == true)
            // Read again, and the condition holds: sent, and confirmed.
            let fresh = try await second.read([brightness]).reads[0]
            let retry = Task {
                try await second.write(
                    WriteCharacteristicsRequest(writes: [
                        CharacteristicWrite(
                            characteristicID: brightness, value: .int(20),
                            condition: WriteCondition(seq: fresh.changeSeq))
                    ]))
            }
            var sent: [ProviderCommand] = []
            while sent.isEmpty, let next = try await commands.next() {
                switch next.kind {
                case .ping: try await providerClient.answer(CommandAnswer(requestID: next.requestID))
                case .write: sent.append(next)
                default: break
                }
            }
            guard case .write(let values, _) = sent.first?.kind else {
                Issue.record("no write command")
                return
            }
            #expect(values.map(\.value) == [.int(20)], "only the retry was sent, never the refused writes")
            _ = try await providerClient.answer(
                CommandAnswer(requestID: sent[0].requestID, writes: [WriteResult(characteristicID: brightness)]))
            #expect(try await retry.value.results[0].error == nil)
            await first.close()
            await second.close()
            await providerClient.close()
        }
    }
}
