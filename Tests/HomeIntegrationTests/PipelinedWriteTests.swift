import Foundation
import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import NIOCore
import Testing

/// Writes a client pipelines arrive together and are made durable together (one
/// commit, one transaction): each is still its own call, answered with its own
/// results, never before it is durable.
@Suite("pipelined writes, over a real socket", .timeLimit(.safetyNet))
struct PipelinedWriteTests {
    static func writeFrame(_ callID: UInt64, _ request: WriteCharacteristicsRequest) -> [UInt8] {
        openFrame(callID, HomeMethods.writeCharacteristics.name, request)
    }

    static func openFrame(_ callID: UInt64, _ method: String, _ request: some WireMessage) -> [UInt8] {
        var frame = WireFrame(callID: callID, body: .open(CallOpen(method: method, request: request.encoded())))
            .encoded()
        return frame.readBytes(length: frame.readableBytes) ?? []
    }

    @Test("300 writes sent in one go: each answered as alone, in order; the last survives kill -9")
    func pipelinedThenKilled() throws {
        let demo = DemoHome.make(nowMs: 0)
        let brightness = try demo.resolve(path: "Living Room/Lamp/Brightness")
        let on = try demo.resolve(path: "Living Room/Lamp/On")
        let directory = TestServer.makeTemporaryDirectory("homed-pipelined")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try DaemonProcess(directory: directory)
        let raw = try RawConnection(path: daemon.socketPath)
        _ = try raw.hello()
        var bytes: [UInt8] = []
        var expected: [UInt64: [HomeError.Code?]] = [:]
        for callID in UInt64(1)...300 {
            let request: WriteCharacteristicsRequest
            switch callID {
            case 100:
                // An unknown id fails alone.
                request = WriteCharacteristicsRequest(writes: [
                    CharacteristicWrite(characteristicID: 999_999, value: .int(1))
                ])
                expected[callID] = [.notFound]
            case 200:
                // An atomic batch with an invalid member: none of it applied.
                request = WriteCharacteristicsRequest(
                    writes: [
                        CharacteristicWrite(characteristicID: on, value: .bool(false)),
                        CharacteristicWrite(characteristicID: brightness, value: .string("bright")),
                    ], atomic: true)
                expected[callID] = [.aborted, .invalidArgument]
            default:
                request = WriteCharacteristicsRequest(writes: [
                    CharacteristicWrite(characteristicID: brightness, value: .int(Int64(callID % 100)))
                ])
                expected[callID] = [nil]
            }
            bytes += Self.writeFrame(callID, request)
        }
        try raw.send(bytes)
        var answered: [UInt64] = []
        var seqs: [UInt64] = []
        var lastSeq: UInt64 = 0
        while answered.count < 300 {
            guard let frame = try raw.receive() else {
                Issue.record("the connection closed after \(answered.count) answers")
                return
            }
            switch frame.body {
            case .message(let message):
                let response = try WriteCharacteristicsResponse(wire: message)
                #expect(
                    response.results.map { $0.error?.code } == expected[frame.callID],
                    "call \(frame.callID): \(response.results)")
                // Answered in the order sent, each seq covering the calls before it.
                #expect(response.seq >= lastSeq, "call \(frame.callID)")
                lastSeq = response.seq
                seqs.append(response.seq)
                answered.append(frame.callID)
            case .status(let error):
                #expect(error == nil, "call \(frame.callID): \(String(describing: error))")
            default:
                Issue.record("unexpected frame \(frame)")
            }
        }
        #expect(answered == Array(1...300))
        // Calls answered with one seq were one commit: what came in one read was grouped.
        #expect(Set(seqs).count < seqs.count, "no two calls were grouped: \(seqs)")
        daemon.child.signal(SIGKILL)
        _ = daemon.child.wait()

        let restarted = try DaemonProcess(directory: directory)
        let reader = try BlockingHomeClient(path: restarted.socketPath, name: "after-kill")
        let values = try reader.read([brightness, on]).reads.map(\.value)
        // Call 300 wrote 300 % 100; call 200's On was never applied.
        #expect(values == [.int(0), demo.characteristics[on]?.value])
        restarted.child.signal(SIGTERM)
        _ = restarted.child.wait()
    }

    @Test("200 reports a provider sends in one go: each refused or applied as alone, in order; the last value stands")
    func pipelinedReports() async throws {
        try await withPatientServer { server in
            let raw = try RawConnection(path: server.socketPath)
            _ = try raw.hello()
            try raw.send(Self.openFrame(1, HomeMethods.openProvider.name, OpenProviderRequest(providerID: "burst")))
            _ = try raw.receive()  // opened
            let sensor = ProvidedAccessory(
                key: "meter", name: "Meter", category: .sensor,
                services: [
                    ProvidedService(
                        type: "LightSensor",
                        characteristics: [ProvidedCharacteristic(type: "CurrentAmbientLightLevel", value: .float(1))])
                ])
            try raw.send(
                Self.openFrame(
                    2, HomeMethods.registerAccessories.name, RegisterAccessoriesRequest(accessories: [sensor])))
            var registered: RegisterAccessoriesResponse?
            while registered == nil, let frame = try raw.receive() {
                if frame.callID == 2, case .message(let bytes) = frame.body {
                    registered = try RegisterAccessoriesResponse(wire: bytes)
                }
            }
            let level = try #require(
                registered?.characteristics.values.first { $0.type.name == "CurrentAmbientLightLevel" }
            ).id
            let daemonsOwn = try server.store.snapshot().graph.resolve(path: "Living Room/Lamp/Brightness")
            var bytes: [UInt8] = []
            var expected: [UInt64: [HomeError.Code?]] = [:]
            for callID in UInt64(10)..<210 {
                let value: CharacteristicWrite
                switch callID {
                case 50:
                    // Not this provider's: refused alone.
                    value = CharacteristicWrite(characteristicID: daemonsOwn, value: .int(1))
                    expected[callID] = [.permissionDenied]
                case 60:
                    value = CharacteristicWrite(characteristicID: level, value: .string("dark"))
                    expected[callID] = [.invalidArgument]
                default:
                    value = CharacteristicWrite(characteristicID: level, value: .float(Double(callID)))
                    expected[callID] = []
                }
                bytes += Self.openFrame(callID, HomeMethods.reportValues.name, ValueReport(values: [value]))
            }
            try raw.send(bytes)
            var answered: [UInt64] = []
            var seqs: [UInt64] = []
            while answered.count < 200, let frame = try raw.receive() {
                guard frame.callID >= 10 else { continue }  // the provider's read command
                switch frame.body {
                case .message(let message):
                    let response = try ValueReportResponse(wire: message)
                    #expect(response.rejected.map { $0.error?.code } == expected[frame.callID], "call \(frame.callID)")
                    seqs.append(response.seq)
                    answered.append(frame.callID)
                case .status(let error):
                    #expect(error == nil, "call \(frame.callID): \(String(describing: error))")
                default:
                    Issue.record("unexpected frame \(frame)")
                }
            }
            #expect(answered == Array(10..<210))
            #expect(seqs == seqs.sorted())
            #expect(Set(seqs).count < seqs.count, "no two reports were grouped: \(seqs)")
            let graph = server.store.snapshot().graph
            #expect(graph.characteristics[level]?.value == .float(209))
            #expect(graph.characteristics[daemonsOwn]?.value != .int(1))
        }
    }
}
