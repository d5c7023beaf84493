internal import HomeModel

// A trigger's time condition, the sun, and a home's location, to and from the
// wire. From a client they are checked strictly (an undeclared enum number is
// refused naming the field); from the daemon they are read leniently.

extension Proto.DayTime {
    init(_ time: DayTime) {
        switch time {
        case .clock(let msOfDay): self.init(msOfDay: msOfDay, sun: nil, offsetMs: 0)
        case .sun(let event, let offsetMs): self.init(msOfDay: 0, sun: event.wireNumber, offsetMs: offsetMs)
        }
    }
}

extension DayTime {
    init(_ wire: Proto.DayTime, field: String) throws(HomeError) {
        if let sun = wire.sun {
            self = .sun(try SunEvent.fromWire(sun, field: "\(field).sun"), offsetMs: wire.offsetMs)
        } else {
            self = .clock(msOfDay: wire.msOfDay)
        }
    }

    init(lenient wire: Proto.DayTime) {
        if let sun = wire.sun {
            self = .sun(.fromWire(sun, default: .sunrise), offsetMs: wire.offsetMs)
        } else {
            self = .clock(msOfDay: wire.msOfDay)
        }
    }
}

extension Proto.TimeCondition {
    /// Nil for a condition that restricts nothing.
    init?(_ condition: TimeCondition) {
        if condition.isAlways { return nil }
        self.init(
            days: condition.days == .everyDay ? 0 : UInt32(condition.days.rawValue),
            from: condition.windowFrom.map(Proto.DayTime.init), to: condition.windowTo.map(Proto.DayTime.init),
            timeZone: condition.timeZone)
    }
}

extension TimeCondition {
    /// A client's condition; nil on the wire is `.always`.
    ///
    /// - Throws: `.invalidArgument` for days beyond the seven bits or an undeclared sun event.
    init(_ wire: Proto.TimeCondition?, field: String) throws(HomeError) {
        guard let wire else {
            self = .always
            return
        }
        guard wire.days <= 0x7F else {
            throw HomeError(
                .invalidArgument, "\(field).days: \(wire.days) has bits beyond the seven days (at most 127)")
        }
        let from = try wire.from.map { (time) throws(HomeError) in try DayTime(time, field: "\(field).from") }
        let to = try wire.to.map { (time) throws(HomeError) in try DayTime(time, field: "\(field).to") }
        self.init(
            days: wire.days == 0 ? .everyDay : Weekdays(rawValue: UInt8(wire.days)), window: nil,
            timeZone: wire.timeZone)
        windowFrom = from
        windowTo = to
    }

    init(lenient wire: Proto.TimeCondition?) {
        guard let wire else {
            self = .always
            return
        }
        let days = UInt8(truncatingIfNeeded: wire.days) & 0x7F
        self.init(days: days == 0 ? .everyDay : Weekdays(rawValue: days), window: nil, timeZone: wire.timeZone)
        windowFrom = wire.from.map(DayTime.init(lenient:))
        windowTo = wire.to.map(DayTime.init(lenient:))
    }
}

extension Proto.SunTrigger {
    init(event: SunEvent, offsetMs: Int64, timeZone: String) {
        self.init(event: event.wireNumber, offsetMs: offsetMs, timeZone: timeZone)
    }
}
