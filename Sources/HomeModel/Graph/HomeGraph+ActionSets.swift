extension HomeGraph {
    /// Adds an action set (a scene). A home has at most one of each built-in kind
    /// (wake-up, sleep, departure, arrival) and any number of user-defined ones.
    ///
    /// - Throws: `.notFound` for an unknown home; `.invalidArgument` for a bad name;
    ///   `.alreadyExists` for a name in use or a second built-in set of one kind.
    @discardableResult
    package mutating func addActionSet(name: String, kind: ActionSetKind = .userDefined, homeID: ObjectID)
        throws(HomeError) -> ObjectID
    {
        let home = try requireHome(homeID)
        try Self.validateName(name, for: .actionSet)
        try requireUniqueName(
            name, kind: .actionSet, among: named(home.actionSetIDs, in: actionSets),
            in: homeLabel(homeID))
        if kind != .userDefined,
            let existing = home.actionSetIDs.compactMap({ actionSets[$0] }).first(where: { $0.kind == kind })
        {
            throw HomeError(
                .alreadyExists,
                "\(homeLabel(homeID)) already has its \(kind.rawValue) action set, "
                    + describe(.actionSet, existing.id))
        }
        let id = allocateID()
        actionSets[id] = ActionSet(id: id, homeID: homeID, name: name, kind: kind)
        homes[homeID]?.actionSetIDs.append(id)
        return id
    }

    /// Renames an action set; action set names are unique in a home.
    package mutating func renameActionSet(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        try renameInHome(id, to: name, kind: .actionSet, table: \.actionSets, siblings: \.actionSetIDs)
    }

    /// Removes an action set; triggers that ran it no longer do.
    ///
    /// - Returns: `.updated` for each such trigger, then `.removed` for the set.
    package mutating func removeActionSet(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let actionSet = try requireActionSet(id)
        var changes: [LayoutChange] = []
        let homeTriggers = homes[actionSet.homeID]?.triggerIDs ?? []
        for triggerID in homeTriggers where triggers[triggerID]?.actionSetIDs.contains(id) == true {
            triggers[triggerID]?.actionSetIDs.removeAll { $0 == id }
            changes.append(change(.updated, triggerID))
        }
        changes.append(change(.removed, id))
        actionSets[id] = nil
        homes[actionSet.homeID]?.actionSetIDs.removeAll { $0 == id }
        return changes
    }

    /// Sets what an action set writes to a characteristic: one action per
    /// characteristic, so a second value for it replaces the first.
    ///
    /// The value is validated as a client's write (the characteristic must be
    /// writable) and stored normalized, so a scene can never hold a write that would
    /// fail when it runs.
    ///
    /// - Returns: `.updated` for the set, or nothing if it already wrote that value.
    /// - Throws: `.notFound` for an unknown set or characteristic; `.invalidArgument`
    ///   for a characteristic of another home or a value it refuses.
    ///
    /// - Parameter onlyIf: the value the characteristic must hold when the scene
    ///   runs for this action to write (validated and stored normalised too).
    package mutating func addAction(
        characteristicID: ObjectID, value: CharacteristicValue, onlyIf: CharacteristicValue? = nil,
        toActionSet actionSetID: ObjectID
    ) throws(HomeError) -> [LayoutChange] {
        let actionSet = try requireActionSet(actionSetID)
        let characteristic = try requireCharacteristic(characteristicID)
        try requireSameHome(characteristicID, .characteristic, homeID: actionSet.homeID)
        let stored = try characteristic.validate(value, enforceWritable: true)
        let expected = try onlyIf.map { expected throws(HomeError) in
            try characteristic.validate(expected, enforceWritable: false)
        }
        let action = CharacteristicWriteAction(characteristicID: characteristicID, value: stored, onlyIf: expected)
        if let index = actionSet.actions.firstIndex(where: { $0.characteristicID == characteristicID }) {
            if actionSet.actions[index] == action { return [] }
            actionSets[actionSetID]?.actions[index] = action
        } else {
            actionSets[actionSetID]?.actions.append(action)
        }
        return [change(.updated, actionSetID)]
    }

    /// Removes an action set's action for a characteristic.
    ///
    /// - Throws: `.notFound` for an unknown set, or no action for that characteristic.
    package mutating func removeAction(characteristicID: ObjectID, fromActionSet actionSetID: ObjectID)
        throws(HomeError) -> [LayoutChange]
    {
        let actionSet = try requireActionSet(actionSetID)
        guard actionSet.actions.contains(where: { $0.characteristicID == characteristicID }) else {
            throw HomeError(
                .notFound,
                "\(describe(.actionSet, actionSetID)) has no action for characteristic "
                    + "\(characteristicID)")
        }
        actionSets[actionSetID]?.actions.removeAll { $0.characteristicID == characteristicID }
        return [change(.updated, actionSetID)]
    }
}
