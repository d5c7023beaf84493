internal import HomeModel

extension HomeGraph {
    /// What a person wants to know of an accessory at a glance, from its primary
    /// service (else its first one): "On, 40%", "Off", "21.5 °C", "Secured",
    /// "Closed", a remote's last press; "no value yet" before its device said anything. "-" when it has nothing to show (a doorbell's
    /// button press is an event, not a state).
    func primaryState(of accessory: Accessory, nowMs: Int64 = TimeArgument.nowMs()) -> String {
        let services = accessory.serviceIDs.compactMap { self.services[$0] }
            .filter { $0.type.name != "AccessoryInformation" && !$0.isHidden }
        guard let service = services.first(where: \.isPrimary) ?? services.first else { return "-" }
        if service.type.name == "StatelessProgrammableSwitch" {
            return lastPress(among: services, nowMs: nowMs)
        }
        let characteristics = service.characteristicIDs.compactMap { self.characteristics[$0] }
            .filter { $0.properties.readable }
        func named(_ name: String) -> Characteristic? { characteristics.first { $0.type.name == name } }
        guard
            let main = Self.stateTypes.lazy.compactMap(named).first
                ?? characteristics.first(where: { $0.type.name != "Name" && $0.value != nil })
                ?? characteristics.first(where: { $0.type.name != "Name" })
        else { return "-" }
        // A sensor its device has not reported yet has no state to show, not a zero.
        guard main.value != nil else { return Characteristic.noValueYet }
        var state = Self.stateText(main)
        // A light that is on: how bright.
        if main.type.name == "On", main.value == .bool(true), let brightness = named("Brightness") {
            state += ", " + brightness.displayValue
        }
        return state
    }

    /// A remote's state is its last press, by button when it has several: "Up:
    /// Single press, 2 min ago"; "-" before the first.
    private func lastPress(among services: [AccessoryService], nowMs: Int64) -> String {
        let buttons = services.filter { $0.type.name == "StatelessProgrammableSwitch" }
        var presses: [(button: AccessoryService, press: Characteristic)] = []
        for button in buttons {
            for press in button.characteristicIDs.compactMap({ self.characteristics[$0] })
            where press.type.name == "ProgrammableSwitchEvent" && press.value != nil && press.lastUpdatedMs > 0 {
                presses.append((button, press))
            }
        }
        guard let last = presses.max(by: { $0.press.lastUpdatedMs < $1.press.lastUpdatedMs }) else { return "-" }
        let which = buttons.count > 1 ? segment(for: last.button) + ": " : ""
        return which + last.press.displayValue + ", " + HistoryText.ago(last.press.lastUpdatedMs, nowMs: nowMs)
    }

    /// The characteristics that say a service's state, most telling first.
    private static let stateTypes = [
        "On", "Active", "CurrentTemperature", "LockCurrentState", "CurrentDoorState", "CurrentPosition",
        "SecuritySystemCurrentState", "ContactSensorState", "MotionDetected", "OccupancyDetected", "LeakDetected",
        "SmokeDetected", "CarbonMonoxideDetected", "CurrentRelativeHumidity", "CurrentAmbientLightLevel",
        "AirQuality",
    ]

    /// "On"/"Off" for On; an enumerated value by its person's name ("Locked",
    /// "Closed"); any other value with its unit.
    private static func stateText(_ characteristic: Characteristic) -> String {
        switch characteristic.value {
        case .bool(let on) where characteristic.type.name == "On":
            return on ? "On" : "Off"
        case .bool(let value):
            return "\(characteristic.type.name): \(value ? "yes" : "no")"
        default:
            return characteristic.displayValue
        }
    }
}
