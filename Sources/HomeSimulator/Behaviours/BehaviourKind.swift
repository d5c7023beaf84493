internal import Foundation
internal import HomeModel

/// What a simulated accessory does by itself, tick by tick. Each works on the
/// device's characteristics by type name, as HAP defines their values.
enum BehaviourKind: Hashable, Sendable {
    /// CurrentTemperature moves towards TargetTemperature by `step` per tick when
    /// TargetHeatingCoolingState allows (heat, cool, auto); CurrentHeatingCoolingState
    /// says what it is doing.
    case thermostat(step: Double)
    /// LockCurrentState follows LockTargetState after `delay` ticks.
    case lock(delay: Int)
    /// CurrentDoorState goes opening → open or closing → closed over `travel` ticks
    /// after TargetDoorState changes; every `obstructEvery`-th movement stops,
    /// obstructed, until the next command.
    case garageDoor(travel: Int, obstructEvery: Int?)
    /// CurrentPosition moves towards TargetPosition by `step` per tick; PositionState
    /// says which way.
    case windowCovering(step: Double)
    /// A characteristic wanders between `min` and `max` by at most `step` per tick.
    case randomWalk(characteristic: String, min: Double, max: Double, step: Double)
    /// MotionDetected turns true every `every` ticks and back after `hold`.
    case motion(every: Int, hold: Int)
    /// ContactSensorState toggles every `every` ticks.
    case contact(every: Int)
    /// ProgrammableSwitchEvent: a single press every `every` ticks (and on demand).
    case doorbell(every: Int)
    /// OutletInUse follows On.
    case outletInUse
    /// The accessory is unreachable for `duration` ticks every `every` ticks.
    case flaky(every: Int, duration: Int)

    /// The behaviour a file entry describes.
    ///
    /// - Throws: INVALID_ARGUMENT naming the accessory and what is missing or wrong.
    init(_ entry: SimulationFile.Behaviour, accessory: String) throws(HomeError) {
        let label = "accessory \"\(accessory)\", behaviour \"\(entry.kind)\""
        func positive(_ value: Int?, _ name: String, default fallback: Int) throws(HomeError) -> Int {
            let value = value ?? fallback
            guard value > 0 else {
                throw HomeError(.invalidArgument, "\(label): \(name) must be above 0, not \(value)")
            }
            return value
        }
        switch entry.kind {
        case "thermostat":
            self = .thermostat(step: entry.step ?? 0.1)
        case "lock":
            self = .lock(delay: try positive(entry.delayTicks, "delay_ticks", default: 2))
        case "garage-door":
            self = .garageDoor(
                travel: try positive(entry.delayTicks, "delay_ticks", default: 3),
                obstructEvery: try entry.obstructEvery.map { value throws(HomeError) in
                    try positive(value, "obstruct_every", default: 1)
                })
        case "window-covering":
            self = .windowCovering(step: entry.step ?? 10)
        case "random-walk":
            guard let characteristic = entry.characteristic, let min = entry.min, let max = entry.max else {
                throw HomeError(.invalidArgument, "\(label): needs characteristic, min and max")
            }
            guard min < max else { throw HomeError(.invalidArgument, "\(label): min \(min) is not below max \(max)") }
            self = .randomWalk(characteristic: characteristic, min: min, max: max, step: entry.step ?? 0.1)
        case "motion":
            self = .motion(
                every: try positive(entry.every, "every", default: 5),
                hold: try positive(entry.forTicks, "for_ticks", default: 2))
        case "contact":
            self = .contact(every: try positive(entry.every, "every", default: 6))
        case "doorbell":
            self = .doorbell(every: try positive(entry.every, "every", default: 8))
        case "outlet-in-use":
            self = .outletInUse
        case "flaky":
            self = .flaky(
                every: try positive(entry.every, "every", default: 12),
                duration: try positive(entry.forTicks, "for_ticks", default: 3))
        default:
            throw HomeError(
                .invalidArgument,
                "\(label): unknown kind; one of thermostat, lock, garage-door, window-covering, random-walk, "
                    + "motion, contact, doorbell, outlet-in-use, flaky")
        }
    }

    /// One tick of the behaviour on its device.
    func step(_ device: inout SimulatedDevice, tick: Int, random: inout some RandomNumberGenerator) {
        switch self {
        case .thermostat(let step):
            guard let current = device.number("CurrentTemperature"), let target = device.number("TargetTemperature")
            else { return }
            let mode = device.number("TargetHeatingCoolingState") ?? 3
            let heating = (mode == 1 || mode == 3) && target > current + 0.05
            let cooling = (mode == 2 || mode == 3) && target < current - 0.05
            if heating || cooling {
                let moved = heating ? Swift.min(current + step, target) : Swift.max(current - step, target)
                device.set("CurrentTemperature", .float(Self.rounded(moved, to: 0.1)))
            }
            device.set("CurrentHeatingCoolingState", .uint(heating ? 1 : cooling ? 2 : 0))
        case .lock(let delay):
            guard let target = device.values(of: "LockTargetState"), device.values(of: "LockCurrentState") != target
            else {
                device.memory["lock"] = nil
                return
            }
            let waited = (device.memory["lock"] ?? 0) + 1
            device.memory["lock"] = waited
            if waited >= delay {
                device.set("LockCurrentState", target)
                device.memory["lock"] = nil
            }
        case .garageDoor(let travel, let obstructEvery):
            Self.stepGarageDoor(&device, travel: travel, obstructEvery: obstructEvery)
        case .windowCovering(let step):
            guard let current = device.number("CurrentPosition"), let target = device.number("TargetPosition") else {
                return
            }
            if current == target {
                device.set("PositionState", .uint(2))
            } else {
                let moved = current < target ? Swift.min(current + step, target) : Swift.max(current - step, target)
                device.set("CurrentPosition", .uint(UInt64(moved)))
                device.set("PositionState", .uint(moved == target ? 2 : current < target ? 1 : 0))
            }
        case .randomWalk(let characteristic, let min, let max, let step):
            guard let current = device.number(characteristic) else { return }
            let move = Double(Int.random(in: -1...1, using: &random)) * step
            let next = Self.rounded(Swift.min(Swift.max(current + move, min), max), to: step)
            device.set(characteristic, .float(next))
        case .motion(let every, let hold):
            let phase = tick % every
            device.set("MotionDetected", .bool(phase < hold))
        case .contact(let every):
            if tick % every == 0, let state = device.number("ContactSensorState") {
                device.set("ContactSensorState", .uint(state == 0 ? 1 : 0))
            }
        case .doorbell(let every):
            if tick % every == 0 { device.press() }
        case .outletInUse:
            if let on = device.values(of: "On") { device.set("OutletInUse", on) }
        case .flaky(let every, let duration):
            if tick % every == 0 { device.offlineUntilTick = Swift.max(device.offlineUntilTick ?? 0, tick + duration) }
        }
    }

    private static func stepGarageDoor(_ device: inout SimulatedDevice, travel: Int, obstructEvery: Int?) {
        // HAP: target 0 open, 1 closed; current 0 open, 1 closed, 2 opening, 3 closing, 4 stopped.
        guard let target = device.number("TargetDoorState"), let current = device.number("CurrentDoorState") else {
            return
        }
        let settled: Double = target == 0 ? 0 : 1
        if current == settled || current == 4 && device.memory["door.target"] == Int(target) { return }
        if device.memory["door.target"] != Int(target) {
            // A new command: the door starts moving, clearing an obstruction.
            device.memory["door.target"] = Int(target)
            device.memory["door.progress"] = 0
            device.memory["door.moves", default: 0] += 1
            device.set("ObstructionDetected", .bool(false))
            device.set("CurrentDoorState", .uint(target == 0 ? 2 : 3))
            return
        }
        let progress = (device.memory["door.progress"] ?? 0) + 1
        device.memory["door.progress"] = progress
        if let obstructEvery, device.memory["door.moves", default: 0] % obstructEvery == 0, progress == travel / 2 + 1 {
            device.set("ObstructionDetected", .bool(true))
            device.set("CurrentDoorState", .uint(4))
            return
        }
        if progress >= travel { device.set("CurrentDoorState", .uint(UInt64(settled))) }
    }

    static func rounded(_ value: Double, to step: Double) -> Double {
        let places = step >= 1 ? 1 : Swift.max(1, Int((-log10(step)).rounded(.up)))
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}
