import Foundation
import HomeModel
import HomeServer
import HomeTesting
import Synchronization
import Testing

/// How long a reader of the store waits while a provider registers 1 000
/// accessories: the time the registration holds the store's lock. A measurement
/// run by hand, never an assertion (the machine's speed is not the code's):
///
///     HOMED_MEASURE_REGISTRATION=1 swift test --skip-build --filter RegistrationStallMeasurement
@Suite("measurement: what a large registration costs readers")
struct RegistrationStallMeasurement {
    static let enabled = ProcessInfo.processInfo.environment["HOMED_MEASURE_REGISTRATION"] != nil

    static func accessories(_ count: Int, prefix: String) -> [ProvidedAccessory] {
        (0..<count).map { index in
            ProvidedAccessory(
                key: "\(prefix)-\(index)", name: "Lamp \(prefix) \(index)", category: .lightbulb,
                manufacturer: "Acme", model: "L1", serialNumber: "\(index)", firmwareRevision: "1.0",
                services: [
                    ProvidedService(
                        type: "Lightbulb", primary: true,
                        characteristics: [
                            ProvidedCharacteristic(type: "On", value: .bool(false)),
                            ProvidedCharacteristic(type: "Brightness", value: .int(50)),
                            ProvidedCharacteristic(type: "Hue", value: .float(10)),
                            ProvidedCharacteristic(type: "Saturation", value: .float(10)),
                        ])
                ])
        }
    }

    @Test(
        "the longest wait of a reader while 1 000 accessories register (printed)", .enabled(if: enabled))
    func longestReaderWait() {
        for round in 0..<5 {
            let store = HomeStore(graph: ScaleHome.make(accessories: 1_000))
            let provided = Self.accessories(1_000, prefix: "r\(round)")
            let running = Mutex(true)
            let longest = Mutex<UInt64>(0)
            let reader = Thread {
                var worst: UInt64 = 0
                while running.withLock({ $0 }) {
                    let start = DispatchTime.now().uptimeNanoseconds
                    _ = store.lastSeq
                    worst = max(worst, DispatchTime.now().uptimeNanoseconds - start)
                }
                longest.withLock { $0 = worst }
            }
            reader.start()
            Thread.sleep(forTimeInterval: 0.05)
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try? store.register(
                provided, removing: [], provider: "measure", homeID: ObjectID?.none, origin: Origin(kind: .provider))
            let total = DispatchTime.now().uptimeNanoseconds - start
            Thread.sleep(forTimeInterval: 0.05)
            running.withLock { $0 = false }
            while longest.withLock({ $0 }) == 0 { Thread.sleep(forTimeInterval: 0.01) }
            print(
                "round \(round): registration \(total / 1_000_000) ms in all; "
                    + "longest reader wait \(longest.withLock { $0 } / 1_000) µs")
        }
    }
}
