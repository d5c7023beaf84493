import Testing

@testable import HomeModel

@Suite("Layout: service groups, action sets and triggers")
struct SceneLayoutTests {
    @Test("service groups hold services of their home once each, with unique names")
    func serviceGroups() throws {
        var graph = DemoHome.make(nowMs: 0)
        let bulb = id(graph, "Living Room/Lamp/Lightbulb")
        let group = try graph.addServiceGroup(name: "Lights", homeID: 1)
        #expect(
            try graph.addService(bulb, toGroup: group) == [
                LayoutChange(action: .updated, object: .serviceGroup, objectID: group, homeID: 1, name: "Lights")
            ])
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "service \(bulb) (\"Lamp\") is already in service group \(group) (\"Lights\")")
        ) {
            _ = try $0.addService(bulb, toGroup: group)
        }
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "home \"Demo Home\" already has a service group named \"Lights\" (id \(group))")
        ) {
            _ = try $0.addServiceGroup(name: "LIGHTS", homeID: 1)
        }
        expectFailure(graph, HomeError(.notFound, "no service with id 16 (16 is a characteristic)")) {
            _ = try $0.addService(16, toGroup: group)
        }
        #expect(try graph.renameServiceGroup(group, to: "Lamps").first?.name == "Lamps")
        #expect(try graph.removeService(bulb, fromGroup: group).count == 1)
        expectFailure(graph, HomeError(.notFound, "service \(bulb) is not in service group \(group) (\"Lamps\")")) {
            _ = try $0.removeService(bulb, fromGroup: group)
        }
        #expect(try graph.removeServiceGroup(group).first?.action == .removed)
        try graph.checkIntegrity()
    }

    @Test("an action's value is validated as a client write and stored normalized; a second value replaces the first")
    func actions() throws {
        var graph = DemoHome.make(nowMs: 0)
        let scene = try graph.addActionSet(name: "Evening", homeID: 1)
        let brightness = id(graph, "Living Room/Lamp/Brightness")
        #expect(
            try graph.addAction(characteristicID: brightness, value: .uint(30), toActionSet: scene) == [
                LayoutChange(action: .updated, object: .actionSet, objectID: scene, homeID: 1, name: "Evening")
            ])
        #expect(
            graph.actionSet(scene)?.actions == [
                CharacteristicWriteAction(characteristicID: brightness, value: .int(30))
            ])
        #expect(try graph.addAction(characteristicID: brightness, value: .int(30), toActionSet: scene) == [])
        #expect(try graph.addAction(characteristicID: brightness, value: .int(60), toActionSet: scene).count == 1)
        #expect(
            graph.actionSet(scene)?.actions == [
                CharacteristicWriteAction(characteristicID: brightness, value: .int(60))
            ])
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(brightness) (Brightness): 101 is above the maximum 100")
        ) {
            _ = try $0.addAction(characteristicID: brightness, value: .int(101), toActionSet: scene)
        }
        let current = id(graph, "Living Room/Thermostat/CurrentTemperature")
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(current) (CurrentTemperature) is read-only; cannot write 20")
        ) {
            _ = try $0.addAction(characteristicID: current, value: .float(20), toActionSet: scene)
        }
        #expect(try graph.removeAction(characteristicID: brightness, fromActionSet: scene).count == 1)
        expectFailure(
            graph,
            HomeError(
                .notFound,
                "action set \(scene) (\"Evening\") has no action for characteristic \(brightness)")
        ) {
            _ = try $0.removeAction(characteristicID: brightness, fromActionSet: scene)
        }
        try graph.checkIntegrity()
    }

    @Test("a home has one action set of each built-in kind, and action set names are unique")
    func actionSetKinds() throws {
        var graph = DemoHome.make(nowMs: 0)
        let wake = try graph.addActionSet(name: "Good Morning", kind: .wakeUp, homeID: 1)
        #expect(graph.actionSet(wake)?.kind == .wakeUp)
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "home \"Demo Home\" already has its wake-up action set, action set \(wake) (\"Good Morning\")")
        ) {
            _ = try $0.addActionSet(name: "Rise", kind: .wakeUp, homeID: 1)
        }
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "home \"Demo Home\" already has an action set named \"Good Morning\" (id \(wake))")
        ) {
            _ = try $0.addActionSet(name: "good morning", homeID: 1)
        }
        #expect(try graph.renameActionSet(wake, to: "Rise and Shine").first?.name == "Rise and Shine")
    }

    @Test("removing an action set takes it out of the triggers that ran it")
    func removeActionSet() throws {
        var graph = DemoHome.make(nowMs: 0)
        let scene = try graph.addActionSet(name: "Night", homeID: 1)
        let timer = try graph.addTrigger(
            name: "At Ten", homeID: 1,
            kind: .timer(fireDateMs: 0, timeZone: "Europe/Berlin", recurrence: .daily),
            actionSetIDs: [scene])
        #expect(
            try graph.removeActionSet(scene) == [
                LayoutChange(action: .updated, object: .trigger, objectID: timer, homeID: 1, name: "At Ten"),
                LayoutChange(action: .removed, object: .actionSet, objectID: scene, homeID: 1, name: "Night"),
            ])
        #expect(graph.trigger(timer)?.actionSetIDs == [])
        try graph.checkIntegrity()
    }

    @Test("timer triggers need a time zone; triggers are renamed, enabled, disabled and removed")
    func timers() throws {
        var graph = DemoHome.make(nowMs: 0)
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "a timer trigger needs an IANA time zone such as Europe/Berlin; \"\" is not one this system knows")
        ) {
            _ = try $0.addTrigger(name: "T", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "", recurrence: .none))
        }
        let timer = try graph.addTrigger(
            name: "Dawn", homeID: 1,
            kind: .timer(fireDateMs: 1_700_000_000_000, timeZone: "UTC", recurrence: .daily))
        expectFailure(
            graph, HomeError(.alreadyExists, "home \"Demo Home\" already has a trigger named \"Dawn\" (id \(timer))")
        ) {
            _ = try $0.addTrigger(
                name: "DAWN", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none))
        }
        #expect(try graph.setTrigger(timer, enabled: false).first?.action == .updated)
        #expect(graph.trigger(timer)?.isEnabled == false)
        #expect(try graph.setTrigger(timer, enabled: false) == [])
        #expect(try graph.renameTrigger(timer, to: "Sunrise").first?.name == "Sunrise")
        #expect(
            try graph.setTrigger(timer, kind: .timer(fireDateMs: 5, timeZone: "UTC", recurrence: .weekly)).count == 1)
        #expect(try graph.removeTrigger(timer).first?.action == .removed)
        #expect(graph.home(1)?.triggerIDs == [])
        expectFailure(graph, HomeError(.notFound, "no trigger with id \(timer)")) { _ = try $0.removeTrigger(timer) }
        try graph.checkIntegrity()
    }

    @Test("an event trigger's value is validated and normalized, and its characteristic must notify changes")
    func eventTriggers() throws {
        var graph = DemoHome.make(nowMs: 0)
        let press = id(graph, "Hallway/Doorbell/ProgrammableSwitchEvent")
        let ring = try graph.addTrigger(
            name: "Ring", homeID: 1,
            kind: .event(
                characteristicID: press, value: .int(0), rangeMin: nil, rangeMax: nil, conditions: []))
        #expect(
            graph.trigger(ring)?.kind
                == .event(
                    characteristicID: press, value: .uint(0), rangeMin: nil, rangeMax: nil,
                    conditions: []))
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(press) (ProgrammableSwitchEvent): 5 is not a valid value; "
                    + "valid values are 0 (SinglePress), 1 (DoublePress), 2 (LongPress)")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: .event(
                    characteristicID: press, value: .int(5), rangeMin: nil,
                    rangeMax: nil, conditions: []))
        }
        let model = id(graph, "Hallway/Doorbell/Model")
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(model) (Model) does not notify changes, so no trigger can watch it")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: .event(
                    characteristicID: model, value: nil, rangeMin: nil,
                    rangeMax: nil, conditions: []))
        }
    }

    @Test("a threshold range needs a number, an order and no value beside it")
    func ranges() throws {
        var graph = DemoHome.make(nowMs: 0)
        let temperature = id(graph, "Bedroom/Temperature Sensor/CurrentTemperature")
        let cold = try graph.addTrigger(
            name: "Cold", homeID: 1,
            kind: .event(
                characteristicID: temperature, value: nil, rangeMin: nil, rangeMax: 16, conditions: []))
        #expect(graph.trigger(cold) != nil)
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "the range 20…10 for characteristic \(temperature) (CurrentTemperature) is empty: "
                    + "its minimum is above its maximum")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: .event(
                    characteristicID: temperature, value: nil, rangeMin: 20,
                    rangeMax: 10, conditions: []))
        }
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "an event trigger on characteristic \(temperature) (CurrentTemperature) fires on a "
                    + "value or on a range, not both")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: .event(
                    characteristicID: temperature, value: .float(20),
                    rangeMin: 10, rangeMax: nil, conditions: []))
        }
        let on = id(graph, "Living Room/Lamp/On")
        expectFailure(
            graph, HomeError(.invalidArgument, "characteristic \(on) (On) is not a number, so it has no range")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: .event(
                    characteristicID: on, value: nil, rangeMin: 0,
                    rangeMax: 1, conditions: []))
        }
    }

    @Test("conditions are validated: readable, of the home, and ordering comparisons only on numbers")
    func conditions() throws {
        var graph = DemoHome.make(nowMs: 0)
        let press = id(graph, "Hallway/Doorbell/ProgrammableSwitchEvent")
        let on = id(graph, "Living Room/Lamp/On")
        let temperature = id(graph, "Bedroom/Temperature Sensor/CurrentTemperature")
        func event(_ condition: CharacteristicCondition) -> TriggerKind {
            .event(characteristicID: press, value: nil, rangeMin: nil, rangeMax: nil, conditions: [condition])
        }
        let trigger = try graph.addTrigger(
            name: "Warm Ring", homeID: 1,
            kind: event(
                CharacteristicCondition(characteristicID: temperature, comparison: .greater, value: .int(18))))
        #expect(
            graph.trigger(trigger)?.kind
                == event(
                    CharacteristicCondition(characteristicID: temperature, comparison: .greater, value: .float(18))))
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(on) (On) is not a number, so a condition cannot compare it with <")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: event(CharacteristicCondition(characteristicID: on, comparison: .less, value: .bool(true))))
        }
        let identify = id(graph, "Living Room/Lamp/Identify")
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(identify) (Identify) cannot be read, so no condition can test it")
        ) {
            _ = try $0.addTrigger(
                name: "Bad", homeID: 1,
                kind: event(
                    CharacteristicCondition(characteristicID: identify, comparison: .equal, value: .bool(true))))
        }
    }

    @Test("a trigger runs action sets of its home, each once")
    func triggerActionSets() throws {
        var graph = DemoHome.make(nowMs: 0)
        let scene = try graph.addActionSet(name: "Night", homeID: 1)
        let timer = try graph.addTrigger(
            name: "At Ten", homeID: 1,
            kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .daily))
        #expect(try graph.addActionSet(scene, toTrigger: timer).count == 1)
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "trigger \(timer) (\"At Ten\") already runs action set \(scene) (\"Night\")")
        ) {
            _ = try $0.addActionSet(scene, toTrigger: timer)
        }
        expectFailure(graph, HomeError(.invalidArgument, "action set \(scene) is listed twice")) {
            _ = try $0.addTrigger(
                name: "Twice", homeID: 1, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none),
                actionSetIDs: [scene, scene])
        }
        let cabin = try graph.addHome(name: "Cabin")
        let away = try graph.addActionSet(name: "Away", homeID: cabin)
        expectFailure(
            graph, HomeError(.invalidArgument, "action set \(away) belongs to home \"Cabin\", not home \"Demo Home\"")
        ) {
            _ = try $0.addActionSet(away, toTrigger: timer)
        }
        #expect(try graph.removeActionSet(scene, fromTrigger: timer).count == 1)
        expectFailure(graph, HomeError(.notFound, "trigger \(timer) (\"At Ten\") does not run action set \(scene)")) {
            _ = try $0.removeActionSet(scene, fromTrigger: timer)
        }
        try graph.checkIntegrity()
    }
}
