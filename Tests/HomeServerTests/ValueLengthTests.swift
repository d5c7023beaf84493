import HomeModel
import Testing

@testable import HomeServer

/// Data values are bounded by default, so that no provider can make the daemon
/// hold megabytes per value in its journal and queues without saying so.
@Suite("value lengths: the default limit of data and what a provider may raise it to")
struct ValueLengthTests {
    static let blobType = "8A7D0C1E-0000-4000-8000-00000000B10B"

    /// A camera with a custom data characteristic, `maxLength` as given.
    static func camera(maxLength: Int? = nil, value: CharacteristicValue? = nil) -> ProvidedAccessory {
        ProvidedAccessory(
            key: "cam-1", name: "Camera", category: .other,
            services: [
                ProvidedService(
                    type: "Switch",
                    characteristics: [
                        ProvidedCharacteristic(type: "On", value: .bool(false)),
                        ProvidedCharacteristic(
                            type: blobType, customName: "Snapshot",
                            properties: CharacteristicProperties(readable: true, supportsEventNotification: true),
                            metadata: CharacteristicMetadata(format: .data, maxLength: maxLength), value: value),
                    ])
            ])
    }

    static func store() -> HomeStore {
        var graph = HomeGraph()
        _ = try? graph.addHome(name: "Home")
        return HomeStore(graph: graph)
    }

    static let provider = Origin(kind: .provider, connectionID: 3, name: "cams")

    static func bytes(_ count: Int) -> CharacteristicValue { .data([UInt8](repeating: 0xAB, count: count)) }

    @Test("a registration with a data value over the default 65 536 bytes is INVALID_ARGUMENT and changes nothing")
    func registrationOverDefault() {
        let store = Self.store()
        let before = store.snapshot()
        let error = #expect(throws: HomeError.self) {
            try store.register(
                [Self.camera(value: Self.bytes(65_537))], removing: [], provider: "cams", homeID: nil,
                origin: Self.provider)
        }
        #expect(error?.code == .invalidArgument)
        #expect(
            error?.message.hasPrefix(
                "accessory 1 (key \"cam-1\"), service 1 (\"Switch\"), characteristic 2 (\"\(Self.blobType)\"): the data "
            ) == true, "\(error?.message ?? "")")
        #expect(error?.message.hasSuffix("is 65537 bytes long; the maximum length is 65536 bytes") == true)
        #expect(store.snapshot().graph == before.graph && store.lastSeq == before.seq)
    }

    @Test("a report of a data value over the default length is refused naming the characteristic's id and the limit")
    func reportOverDefault() throws {
        let store = Self.store()
        let outcome = try store.register(
            [Self.camera(value: Self.bytes(65_536))], removing: [], provider: "cams", homeID: nil,
            origin: Self.provider)
        let blob = try #require(
            outcome.graph.characteristics.values.first { $0.type.name == "Snapshot" })
        #expect(blob.value == Self.bytes(65_536), "exactly the default is taken")
        let report = store.report(
            [CharacteristicWrite(characteristicID: blob.id, value: Self.bytes(65_537))], reachability: [],
            provider: "cams", origin: Self.provider)
        #expect(report.rejected.count == 1)
        let refusal = try #require(report.rejected.first?.error)
        #expect(refusal.code == .invalidArgument)
        #expect(refusal.message.hasPrefix("characteristic \(blob.id) (Snapshot): the data "))
        #expect(refusal.message.hasSuffix("is 65537 bytes long; the maximum length is 65536 bytes"))
        #expect(store.snapshot().graph.characteristics[blob.id]?.value == Self.bytes(65_536), "unchanged")
    }

    @Test("a provider may raise the limit with maxLength, up to 4 MiB; above it the registration is refused")
    func raisedLimit() throws {
        let store = Self.store()
        let outcome = try store.register(
            [Self.camera(maxLength: 1_000_000, value: Self.bytes(500_000))], removing: [], provider: "cams",
            homeID: nil, origin: Self.provider)
        let blob = try #require(outcome.graph.characteristics.values.first { $0.type.name == "Snapshot" })
        #expect(blob.metadata.maxLength == 1_000_000)
        #expect(
            store.report(
                [CharacteristicWrite(characteristicID: blob.id, value: Self.bytes(1_000_000))], reachability: [],
                provider: "cams", origin: Self.provider
            ).rejected.isEmpty)

        let error = #expect(throws: HomeError.self) {
            try Self.store().register(
                [Self.camera(maxLength: 4_194_305)], removing: [], provider: "cams", homeID: nil,
                origin: Self.provider)
        }
        #expect(
            error
                == HomeError(
                    .invalidArgument,
                    "accessory 1 (key \"cam-1\"), service 1 (\"Switch\"), characteristic 2 (\"\(Self.blobType)\"): "
                        + "maximum length 4194305 bytes is above the largest the daemon takes, 4194304 bytes "
                        + "(a value travels in one frame)"))
    }
}
