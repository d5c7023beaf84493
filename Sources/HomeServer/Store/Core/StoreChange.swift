internal import HomeModel

/// Every way the daemon's state changes, as a value: `HomeState.commit` decides
/// each one (validates, applies, numbers its events) without I/O, and `HomeStore`
/// makes the outcome durable and heard.
enum StoreChange {
    /// A batch applied by the daemon as it is (the simulator's and the tests'
    /// writes; `enforceWritable: false` sets read-only values, a sensor's reading).
    case write(WriteBatch, enforceWritable: Bool)
    /// A client's batch: applied at once when every write is the daemon's own,
    /// else planned (`WritePlan`), its conditional provider writes claimed and its
    /// local part applied.
    case planWrites(WriteBatch, owners: any WriteOwners)
    /// Calls' batches of the daemon's own characteristics, in order, up to the
    /// first with a provider's (those are the caller's to plan one by one).
    case ownWrites([WriteBatch], owners: any WriteOwners)
    /// A scene (action set) decided like a batch: run whole when every action is
    /// the daemon's own, else planned.
    case planScene(ObjectID, owners: any WriteOwners)
    /// A scene run by the daemon alone (no provider consulted).
    case runScene(ObjectID)
    /// A provider's confirmation of planned writes, ending the claims they held.
    case confirm(Confirmation)
    /// Providers' own reports (values and reachability), in order; with an
    /// `owner`, only what belongs to that provider's accessories is applied.
    case report([ProviderReport], owner: String?, readingBack: [ObjectID]?)
    /// One accessory's reachability (NOT_FOUND for an unknown one).
    case reachability(Bool, accessoryID: ObjectID)
    /// Accessories announced unreachable whatever they were stored as (the
    /// daemon's start, for providers not connected yet).
    case markUnreachable([ObjectID])
    /// An event with no change of state: an audit note, a scene that ran through
    /// providers, a trigger that fired.
    case note(HomeEvent.Body)
    /// A layout operation (`HomeGraph.apply`).
    case layout(LayoutOperation)
    /// A whole layout planned on the graph as it is (an import): `plan` is the
    /// caller's rules (HomeConfig's `ImportPlan`), run here under the lock.
    case replaceLayout(plan: (HomeGraph, _ nowMs: Int64) throws(HomeError) -> PlannedLayout)
    /// A provider's registration, made on the graph as it is.
    case register(RegistrationRequest)
    /// A registration planned on an earlier snapshot, installed only if the graph
    /// is still at `plannedAtVersion` (else the result is `.registered(nil)` and
    /// nothing changes).
    case installRegistration(planned: HomeGraph, ProviderRegistration, plannedAtVersion: UInt64)

    var kind: CommitKind {
        switch self {
        case .layout, .replaceLayout, .register, .installRegistration: .layout
        case .write, .planWrites, .ownWrites, .planScene, .runScene, .confirm, .report, .reachability,
            .markUnreachable, .note:
            .values
        }
    }
}

/// Who serves an accessory, for a change that routes writes (the provider hub).
/// Called under the store's lock: an implementation takes no lock that is held
/// while calling the store.
protocol WriteOwners {
    /// The provider that serves an accessory, nil for the daemon's own (in-process).
    func remoteProvider(of accessory: Accessory) -> String?
    /// The characteristics a provider declared optimistic.
    func optimistic(_ providerID: String) -> Set<ObjectID>
}

/// One call's writes as it asked for them (`WriteCharacteristicsRequest`).
struct WriteBatch {
    var writes: [CharacteristicWrite]
    var atomic: Bool = false
    var validateOnly: Bool = false
}

/// One provider report: its values and its accessories' reachability.
struct ProviderReport {
    var values: [CharacteristicWrite]
    var reachability: [(accessoryID: ObjectID, reachable: Bool)]
}

/// A provider's answer to planned writes: the items it confirmed.
struct Confirmation {
    var items: [WritePlan.Item]
    /// The layout the writes were planned on: when it changed since, each is
    /// checked again.
    var plannedAt: UInt64
    /// All or none: when a write checked again fails, none is applied.
    var atomic: Bool
    /// The conditional writes whose claims end with this commit.
    var releasing: [ObjectID]
}

/// What a registration asks (`HomeGraph.register`).
struct RegistrationRequest {
    var accessories: [ProvidedAccessory]
    var removing: [String]
    var provider: String
    var homeID: ObjectID?
}

/// A whole new layout and the events that say how it differs.
struct PlannedLayout {
    var graph: HomeGraph
    var events: [HomeEvent.Body]
}

/// A device value kept in another form than reported (rounded to the step,
/// clamped to what its format holds).
struct AdjustedValue {
    var characteristicID: ObjectID
    var reported: CharacteristicValue
    var kept: CharacteristicValue

    /// Whether `kept` is `reported` in another form than a change of kind
    /// (an int reported for a uint8 is not an adjustment).
    static func isAdjusted(reported: CharacteristicValue, kept: CharacteristicValue) -> Bool {
        guard let before = reported.numericValue, let after = kept.numericValue else { return false }
        return before != after
    }
}

/// What a planning commit decided of a batch.
enum Planning {
    case applied([WriteResult])
    /// Some of it goes to providers; the results of its local part.
    case planned(WritePlan, applied: [WriteResult])
}

/// A change's own result, one case per kind of change.
enum ChangeResult {
    case none
    /// Each write's result (`.write`, `.runScene`, `.confirm`).
    case writes([WriteResult])
    /// Each batch's results (`.ownWrites`), the ones applied.
    case batches([[WriteResult]])
    case planning(Planning)
    /// A scene's writes and what was decided of them.
    case scene(writes: [CharacteristicWrite], Planning)
    /// Each report's refused values and reachability; the values kept in another
    /// form than reported, of characteristics not adjusted before this run
    /// (`HomeState.adjustedValueIDs`); the ids read back after it, if asked.
    case reports([[WriteResult]], adjusted: [AdjustedValue], readBack: [CharacteristicRead]?)
    /// Whether the reachability changed.
    case changed(Bool)
    case layout(events: [HomeEvent.Body], createdID: ObjectID)
    case replaced(PlannedLayout)
    /// Nil: the registration's plan was stale and nothing changed.
    case registered(ProviderRegistration?)

    var writes: [WriteResult] {
        guard case .writes(let results) = self else { preconditionFailure("not a write's result: \(self)") }
        return results
    }
}
