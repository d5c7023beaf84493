internal import HomeModel
internal import HomeWire
public import ServiceLifecycle

/// Brings the demo home to life: a sensor's random walk, a thermostat drifting
/// towards its target, a lock following its target state, an occasional doorbell
/// press. Its changes carry the simulator origin, like any provider's.
public struct DemoSimulator: Service {
    let store: HomeStore
    let tickMs: Int
    /// Every this many ticks the doorbell rings.
    let doorbellEveryTicks: Int

    public init(store: HomeStore, tickMs: Int = 2_000, doorbellEveryTicks: Int = 15) {
        self.store = store
        self.tickMs = tickMs
        self.doorbellEveryTicks = doorbellEveryTicks
    }

    public func run() async throws {
        var random = SystemRandomNumberGenerator()
        var tick = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: .milliseconds(tickMs))
            tick += 1
            let writes = step(tick: tick, random: &random)
            if !writes.isEmpty {
                _ = store.write(writes, origin: .simulator, enforceWritable: false)
            }
        }
    }

    /// The writes of one tick, computed from the current state.
    func step(tick: Int, random: inout some RandomNumberGenerator) -> [CharacteristicWrite] {
        let (graph, _) = store.snapshot()
        var writes: [CharacteristicWrite] = []
        for accessory in graph.accessories.values where accessory.provider == "simulator" {
            var byType: [String: Characteristic] = [:]
            for serviceID in accessory.serviceIDs {
                for id in graph.services[serviceID]?.characteristicIDs ?? [] {
                    if let characteristic = graph.characteristics[id] {
                        byType[characteristic.type.name] = characteristic
                    }
                }
            }
            switch accessory.category {
            case .sensor:
                if let current = byType["CurrentTemperature"], let value = current.value?.numericValue {
                    let next = min(max(value + Double(Int.random(in: -2...2, using: &random)) / 10, 16), 26)
                    if next != value {
                        writes.append(CharacteristicWrite(characteristicID: current.id, value: .float(rounded(next))))
                    }
                }
            case .thermostat:
                if let current = byType["CurrentTemperature"], let target = byType["TargetTemperature"],
                    let now = current.value?.numericValue, let goal = target.value?.numericValue,
                    abs(goal - now) >= 0.05
                {
                    let next = now + (goal > now ? 0.1 : -0.1)
                    writes.append(CharacteristicWrite(characteristicID: current.id, value: .float(rounded(next))))
                }
            case .doorLock:
                if let current = byType["LockCurrentState"], let target = byType["LockTargetState"],
                    let targetValue = target.value, current.value != targetValue
                {
                    writes.append(CharacteristicWrite(characteristicID: current.id, value: targetValue))
                }
            case .videoDoorbell:
                if tick % doorbellEveryTicks == 0, let press = byType["ProgrammableSwitchEvent"] {
                    writes.append(CharacteristicWrite(characteristicID: press.id, value: .uint(0)))
                }
            default:
                break
            }
        }
        return writes
    }

    private func rounded(_ value: Double) -> Double {
        (value * 10).rounded() / 10
    }
}
