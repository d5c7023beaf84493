import Foundation
import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

@Suite("the blocking client", .timeLimit(.safetyNet))
struct BlockingClientTests {
    /// Runs blocking work on a thread of its own, off the cooperative pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test("reads and writes round-trip on the calling thread; errors carry the daemon's status")
    func roundTrips() async throws {
        try await withPatientServer { server in
            let path = server.socketPath
            let brightness = server.store.snapshot().graph.id("Living Room/Lamp/Brightness")
            let (written, read, error) = try await Self.onThread {
                () throws -> (WriteCharacteristicsResponse, ReadCharacteristicsResponse, HomeError?) in
                let client = try BlockingHomeClient(path: path, name: "blocking")
                let written = try client.write(
                    WriteCharacteristicsRequest(writes: [
                        CharacteristicWrite(characteristicID: brightness, value: .int(64))
                    ]))
                let read = try client.read([brightness])
                var failure: HomeError?
                do throws(HomeError) {
                    _ = try client.call(HomeMethods.getHome, GetHomeRequest(homeID: 999_999))
                } catch {
                    failure = error
                }
                return (written, read, failure)
            }
            #expect(written.results.first?.seq == server.store.lastSeq)
            #expect(read.reads.first?.value == .int(64))
            #expect(error == HomeError(.notFound, "no home with id 999999"))
        }
    }

    @Test("with no daemon it names the socket it tried")
    func noDaemon() async throws {
        let directory = TestServer.makeTemporaryDirectory("blocking")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/none.sock"
        let error = try await Self.onThread { () -> HomeError? in
            do throws(HomeError) {
                _ = try BlockingHomeClient(path: path, name: "x")
                return nil
            } catch { return error }
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains(path) == true)
    }
}
