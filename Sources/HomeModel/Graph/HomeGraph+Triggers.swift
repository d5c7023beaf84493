extension HomeGraph {
    /// Adds a trigger that runs action sets: at a time (a timer), or when a
    /// characteristic takes a value or enters a range (an event).
    ///
    /// An event trigger must watch a characteristic of the home that notifies
    /// changes; its value (if any) is validated like a provider's write and stored
    /// normalized; a range needs a numeric characteristic and min ≤ max; it may have
    /// a value or a range, not both (neither: any change fires). Conditions are
    /// checked the same way, and ordering comparisons need numbers.
    ///
    /// - Throws: `.notFound` for an unknown home, characteristic or action set;
    ///   `.invalidArgument` for a bad name, time zone, value, range, comparison, or
    ///   an object of another home; `.alreadyExists` if the home has a trigger of that name.
    @discardableResult
    package mutating func addTrigger(
        name: String, homeID: ObjectID, kind: TriggerKind, actionSetIDs: [ObjectID] = [],
        enabled: Bool = true, condition: TimeCondition = .always, holdMs: Int64 = 0, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) throws(HomeError) -> ObjectID {
        let home = try requireHome(homeID)
        try Self.validateName(name, for: .trigger)
        try requireUniqueName(name, kind: .trigger, among: named(home.triggerIDs, in: triggers), in: homeLabel(homeID))
        let kind = try checked(kind, homeID: homeID)
        try checkTiming(kind: kind, condition: condition, holdMs: holdMs, homeID: homeID, name: name)
        try Self.checkEnd(end, kind: kind, name: name)
        let command = try command.map { (command) throws(HomeError) in try command.checked(trigger: name) }
        let conditions = try checked(conditions, of: kind, homeID: homeID, name: name)
        try checkActionSets(actionSetIDs, homeID: homeID)
        let id = allocateID()
        triggers[id] = Trigger(
            id: id, homeID: homeID, name: name, isEnabled: enabled, actionSetIDs: actionSetIDs,
            kind: kind, condition: condition, holdMs: holdMs, executeOnce: executeOnce, end: end, command: command,
            conditions: conditions)
        homes[homeID]?.triggerIDs.append(id)
        return id
    }

    /// Renames a trigger; trigger names are unique in a home.
    package mutating func renameTrigger(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        try renameInHome(id, to: name, kind: .trigger, table: \.triggers, siblings: \.triggerIDs)
    }

    /// Enables or disables a trigger.
    ///
    /// - Returns: `.updated`, or nothing if it already was.
    package mutating func setTrigger(_ id: ObjectID, enabled: Bool) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        if trigger.isEnabled == enabled { return [] }
        triggers[id]?.isEnabled = enabled
        return [change(.updated, id)]
    }

    /// Replaces what a trigger fires on (a new time, a new threshold), checked as `addTrigger` does.
    package mutating func setTrigger(_ id: ObjectID, kind: TriggerKind) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        return try setTrigger(
            id, kind: kind, condition: trigger.condition, holdMs: trigger.holdMs, executeOnce: trigger.executeOnce,
            end: trigger.end, command: trigger.command, conditions: trigger.conditions)
    }

    /// Replaces what a trigger fires on, when it may fire, how long its event must
    /// hold and whether it fires once, checked as `addTrigger` does: all or nothing.
    ///
    /// - Returns: `.updated`, or nothing if all were so already.
    package mutating func setTrigger(
        _ id: ObjectID, kind: TriggerKind, condition: TimeCondition, holdMs: Int64, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        let kind = try checked(kind, homeID: trigger.homeID)
        try checkTiming(kind: kind, condition: condition, holdMs: holdMs, homeID: trigger.homeID, name: trigger.name)
        try Self.checkEnd(end, kind: kind, name: trigger.name)
        let command = try command.map { (command) throws(HomeError) in try command.checked(trigger: trigger.name) }
        let conditions = try checked(conditions, of: kind, homeID: trigger.homeID, name: trigger.name)
        if trigger.kind == kind && trigger.condition == condition && trigger.holdMs == holdMs
            && trigger.executeOnce == executeOnce && trigger.end == end && trigger.command == command
            && trigger.conditions == conditions
        {
            return []
        }
        triggers[id]?.conditions = conditions
        triggers[id]?.command = command
        triggers[id]?.end = end
        triggers[id]?.executeOnce = executeOnce
        triggers[id]?.kind = kind
        triggers[id]?.condition = condition
        triggers[id]?.holdMs = holdMs
        return [change(.updated, id)]
    }

    /// Sets or clears where a home is (for the sun's times).
    ///
    /// - Throws: `.invalidArgument` for a latitude or longitude out of range, or for
    ///   clearing the location of a home whose triggers use the sun (naming them).
    package mutating func setLocation(_ location: GeoLocation?, ofHome homeID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let home = try requireHome(homeID)
        let location = try location.map { (location) throws(HomeError) in try location.checked() }
        if location == nil {
            let users = home.triggerIDs.compactMap { triggers[$0] }.filter(\.usesSun).map { quoted($0.name) }
            if !users.isEmpty {
                throw HomeError(
                    .invalidArgument,
                    "\(homeLabel(homeID)) keeps its location: its triggers \(users.joined(separator: ", ")) "
                        + "use the sun's times")
            }
        }
        if home.location == location { return [] }
        homes[homeID]?.location = location
        return [change(.updated, homeID)]
    }

    /// Removes a trigger; its action sets stay.
    package mutating func removeTrigger(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        let changes = [change(.removed, id)]
        triggers[id] = nil
        homes[trigger.homeID]?.triggerIDs.removeAll { $0 == id }
        return changes
    }

    /// Makes a trigger also run an action set of its home.
    ///
    /// - Throws: `.notFound` for an unknown trigger or action set; `.invalidArgument`
    ///   for a set of another home; `.alreadyExists` if the trigger runs it already.
    package mutating func addActionSet(_ actionSetID: ObjectID, toTrigger triggerID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let trigger = try requireTrigger(triggerID)
        try checkActionSets([actionSetID], homeID: trigger.homeID)
        if trigger.actionSetIDs.contains(actionSetID) {
            throw HomeError(
                .alreadyExists,
                "\(describe(.trigger, triggerID)) already runs "
                    + describe(.actionSet, actionSetID))
        }
        triggers[triggerID]?.actionSetIDs.append(actionSetID)
        return [change(.updated, triggerID)]
    }

    /// Stops a trigger running an action set.
    ///
    /// - Throws: `.notFound` for an unknown trigger, or a set it does not run.
    package mutating func removeActionSet(_ actionSetID: ObjectID, fromTrigger triggerID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let trigger = try requireTrigger(triggerID)
        guard trigger.actionSetIDs.contains(actionSetID) else {
            throw HomeError(.notFound, "\(describe(.trigger, triggerID)) does not run action set \(actionSetID)")
        }
        triggers[triggerID]?.actionSetIDs.removeAll { $0 == actionSetID }
        return [change(.updated, triggerID)]
    }

    /// Checks action sets a trigger is to run: existing, of its home, each once.
    private func checkActionSets(_ ids: [ObjectID], homeID: ObjectID) throws(HomeError) {
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
    private func checked(_ kind: TriggerKind, homeID: ObjectID) throws(HomeError) -> TriggerKind {
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

    private func requireLocation(_ homeID: ObjectID, for what: String) throws(HomeError) {
        if homes[homeID]?.location == nil {
            throw HomeError(
                .failedPrecondition,
                "\(what) needs the home's location for the sun's times: \(homeLabel(homeID)) has none "
                    + "(homectl homes set-location HOME LAT LON)")
        }
    }

    /// A timer or sun trigger's characteristic conditions, checked as an event's are.
    private func checked(
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
    private func checkTiming(
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
    private func watchable(_ id: ObjectID, homeID: ObjectID) throws(HomeError) -> Characteristic {
        let characteristic = try requireCharacteristic(id)
        try requireSameHome(id, .characteristic, homeID: homeID)
        if !characteristic.properties.supportsEventNotification {
            throw HomeError(
                .invalidArgument,
                "\(characteristic.label) does not notify changes, so no trigger can watch it")
        }
        return characteristic
    }

    private func checked(_ condition: CharacteristicCondition, homeID: ObjectID) throws(HomeError)
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

extension Trigger {
    /// Whether it needs the home's location: a sun trigger, or a window that starts or ends with the sun.
    package var usesSun: Bool {
        if case .sun = kind { return true }
        return condition.usesSun
    }
}
