/// The checks a trigger passes before it is added or changed: its scenes, its
/// timing, the characteristics it watches and its conditions.
extension HomeGraph {
    /// Checks action sets a trigger is to run: existing, of its home, each once.
    func checkActionSets(_ ids: [ObjectID], homeID: ObjectID) throws(HomeError) {
        var seen = Set<ObjectID>()
        for id in ids {
            _ = try requireActionSet(id)
            try requireSameHome(id, .actionSet, homeID: homeID)
            if !seen.insert(id).inserted {
                throw HomeError(.invalidArgument, "action set \(id) is listed twice")
            }
        }
    }

    /// The trigger kind with its values normalized, or the reason it cannot be.
    func checked(_ kind: TriggerKind, homeID: ObjectID) throws(HomeError) -> TriggerKind {
        switch kind {
        case .timer(let fireDateMs, let timeZone, _):
            guard TriggerKind.fireDateRange.contains(fireDateMs) else {
                let range = TriggerKind.fireDateRange
                throw HomeError(
                    .invalidArgument,
                    "a timer's fire_date_ms \(fireDateMs) is outside \(range.lowerBound)…"
                        + "\(range.upperBound) (1970-01-01 to 9999-12-31 UTC)")
            }
            try Self.checkTimeZone(timeZone, of: "a timer trigger")
            return kind
        case .sun(let event, let offsetMs, let timeZone):
            try Self.checkTimeZone(timeZone, of: "a \(event.rawValue) trigger")
            guard offsetMs.magnitude <= DayTime.maxSunOffsetMs else {
                throw HomeError(
                    .invalidArgument,
                    "an offset of \(offsetMs) ms from \(event.rawValue) is more than a day (86400000 ms) either way")
            }
            try requireLocation(homeID, for: "a \(event.rawValue) trigger")
            return kind
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
            let characteristic = try watchable(characteristicID, homeID: homeID)
            if value != nil && (rangeMin != nil || rangeMax != nil) {
                throw HomeError(
                    .invalidArgument,
                    "an event trigger on \(characteristic.label) fires on a value or on a range, not both")
            }
            let normalized = try value.map { (value) throws(HomeError) in
                try characteristic.validate(value, enforceWritable: false)
            }
            if rangeMin != nil || rangeMax != nil {
                guard characteristic.metadata.format.isInteger || characteristic.metadata.format == .float else {
                    throw HomeError(.invalidArgument, "\(characteristic.label) is not a number, so it has no range")
                }
                for bound in [rangeMin, rangeMax].compactMap({ $0 }) where !bound.isFinite {
                    throw HomeError(.invalidArgument, "a range bound must be a finite number, not \(bound)")
                }
                if let low = rangeMin, let high = rangeMax, low > high {
                    let range = "\(formatNumber(low))…\(formatNumber(high))"
                    throw HomeError(
                        .invalidArgument,
                        "the range \(range) for \(characteristic.label) is empty: "
                            + "its minimum is above its maximum")
                }
            }
            var checkedConditions: [CharacteristicCondition] = []
            for condition in conditions {
                checkedConditions.append(try checked(condition, homeID: homeID))
            }
            return .event(
                characteristicID: characteristicID, value: normalized, rangeMin: rangeMin, rangeMax: rangeMax,
                conditions: checkedConditions)
        }
    }

    /// Checks a time zone is an IANA name the system knows ("Europe/Berlin", "UTC").
    static func checkTimeZone(_ timeZone: String, of what: String) throws(HomeError) {
        if timeZone.isEmpty || timeZone.utf8.count > 64 || timeZone.contains(where: \.isWhitespace)
            || !TimerSchedule.knowsTimeZone(timeZone)
        {
            throw HomeError(
                .invalidArgument,
                "\(what) needs an IANA time zone such as Europe/Berlin; \(quoted(timeZone)) is not one this "
                    + "system knows")
        }
    }

    func requireLocation(_ homeID: ObjectID, for what: String) throws(HomeError) {
        if homes[homeID]?.location == nil {
            throw HomeError(
                .failedPrecondition,
                "\(what) needs the home's location for the sun's times: \(homeLabel(homeID)) has none "
                    + "(homectl homes set-location HOME LAT LON)")
        }
    }

    /// A timer or sun trigger's characteristic conditions, checked as an event's are.
    func checked(
        _ conditions: [CharacteristicCondition], of kind: TriggerKind, homeID: ObjectID, name: String
    ) throws(HomeError) -> [CharacteristicCondition] {
        if conditions.isEmpty { return [] }
        if case .event = kind {
            throw HomeError(
                .invalidArgument, "trigger \(quoted(name)): an event trigger's conditions are part of its event")
        }
        var result: [CharacteristicCondition] = []
        for condition in conditions {
            result.append(try checked(condition, homeID: homeID))
        }
        return result
    }

    /// Checks a trigger's end against its kind: a duration not below 0, and "when
    /// the event ends" only for an event that has a value or range to leave.
    static func checkEnd(_ end: TriggerEnd, kind: TriggerKind, name: String) throws(HomeError) {
        guard end.afterMs >= 0 else {
            throw HomeError(
                .invalidArgument,
                "trigger \(quoted(name)): undoing \(end.afterMs) ms after is not a duration; give 0 or more")
        }
        if end.whenEventEnds {
            guard case .event(_, let value, let rangeMin, let rangeMax, _) = kind else {
                throw HomeError(
                    .invalidArgument, "trigger \(quoted(name)): only an event trigger has an event that ends")
            }
            if value == nil && rangeMin == nil && rangeMax == nil {
                throw HomeError(
                    .invalidArgument,
                    "trigger \(quoted(name)) fires on any change, so its event never ends: give it a value or range")
            }
        }
    }

    /// Checks a trigger's time condition and hold against its kind and home.
    func checkTiming(
        kind: TriggerKind, condition: TimeCondition, holdMs: Int64, homeID: ObjectID, name: String
    ) throws(HomeError) {
        if holdMs != 0 {
            guard case .event(let characteristicID, _, _, _, _) = kind else {
                throw HomeError(
                    .invalidArgument, "trigger \(quoted(name)): only an event trigger can wait for its event to hold")
            }
            guard holdMs > 0 else {
                throw HomeError(
                    .invalidArgument,
                    "trigger \(quoted(name)): a hold of \(holdMs) ms is not a duration; give one above 0")
            }
            if let characteristic = characteristics[characteristicID], characteristic.isEventOnly {
                throw HomeError(
                    .invalidArgument,
                    "\(characteristic.label) reports occurrences, which do not last, so no trigger can wait for "
                        + "one to hold")
            }
        }
        if condition.isAlways { return }
        if condition.days.isEmpty {
            throw HomeError(.invalidArgument, "trigger \(quoted(name)): its condition allows no day of the week")
        }
        try Self.checkTimeZone(condition.timeZone, of: "the condition of trigger \(quoted(name))")
        if (condition.windowFrom == nil) != (condition.windowTo == nil) {
            throw HomeError(.invalidArgument, "trigger \(quoted(name)): a window needs both its start and its end")
        }
        for time in [condition.windowFrom, condition.windowTo].compactMap({ $0 }) {
            switch time {
            case .clock(let msOfDay):
                guard (0..<86_400_000).contains(msOfDay) else {
                    throw HomeError(
                        .invalidArgument,
                        "trigger \(quoted(name)): \(msOfDay) ms is not a time of day (0 to 86399999)")
                }
            case .sun(let event, let offsetMs):
                guard offsetMs.magnitude <= DayTime.maxSunOffsetMs else {
                    throw HomeError(
                        .invalidArgument,
                        "trigger \(quoted(name)): an offset of \(offsetMs) ms from \(event.rawValue) is more than a "
                            + "day either way")
                }
            }
        }
        if let window = condition.window, window.from == window.to {
            throw HomeError(
                .invalidArgument, "trigger \(quoted(name)): the window \(window.from.text)–\(window.to.text) is empty")
        }
        if condition.usesSun { try requireLocation(homeID, for: "trigger \(quoted(name))'s window") }
    }

    /// A characteristic an event trigger may watch: of the home, notifying changes.
    func watchable(_ id: ObjectID, homeID: ObjectID) throws(HomeError) -> Characteristic {
        let characteristic = try requireCharacteristic(id)
        try requireSameHome(id, .characteristic, homeID: homeID)
        if !characteristic.properties.supportsEventNotification {
            throw HomeError(
                .invalidArgument,
                "\(characteristic.label) does not notify changes, so no trigger can watch it")
        }
        return characteristic
    }

    func checked(_ condition: CharacteristicCondition, homeID: ObjectID) throws(HomeError)
        -> CharacteristicCondition
    {
        let characteristic = try requireCharacteristic(condition.characteristicID)
        try requireSameHome(condition.characteristicID, .characteristic, homeID: homeID)
        if !characteristic.properties.readable {
            throw HomeError(.invalidArgument, "\(characteristic.label) cannot be read, so no condition can test it")
        }
        let ordering: Set<Comparison> = [.less, .lessOrEqual, .greater, .greaterOrEqual]
        let format = characteristic.metadata.format
        if ordering.contains(condition.comparison) && !(format.isInteger || format == .float) {
            throw HomeError(
                .invalidArgument,
                "\(characteristic.label) is not a number, so a condition cannot compare it with "
                    + condition.comparison.rawValue)
        }
        let value = try characteristic.validate(condition.value, enforceWritable: false)
        return CharacteristicCondition(
            characteristicID: condition.characteristicID, comparison: condition.comparison,
            value: value)
    }
}
