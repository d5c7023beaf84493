internal import HomeModel
internal import HomeWire

// How a provider's answer decides the writes it was sent: the part of carrying out
// a plan that knows the provider protocol (`WritePlan` itself knows only the model).
extension WritePlan {
    /// What a provider's answer means for each write it was to confirm: nil when
    /// confirmed, else why not. In an atomic batch, anything short of confirming
    /// all of it fails all of it.
    static func verdicts(for part: ProviderPart, answer: Result<CommandAnswer, HomeError>, atomic: Bool)
        -> [ObjectID: HomeError?]
    {
        var verdicts: [ObjectID: HomeError?] = [:]
        for item in part.confirmed {
            verdicts[item.characteristicID] = confirmation(of: item.characteristicID, answer: answer)
        }
        if atomic && verdicts.values.contains(where: { $0 != nil }) {
            for (id, verdict) in verdicts where verdict == nil {
                verdicts[id] = HomeError(
                    .aborted, "not applied: the provider refused another write of this atomic batch")
            }
        }
        return verdicts
    }

    /// nil when the provider confirmed the write of this characteristic; else why not.
    private static func confirmation(of id: ObjectID, answer: Result<CommandAnswer, HomeError>) -> HomeError? {
        switch answer {
        case .failure(let error): return error
        case .success(let answer):
            if let error = answer.error { return error }
            guard let item = answer.writes.first(where: { $0.characteristicID == id }) else {
                return HomeError(.internal, "the provider answered without a result for characteristic \(id)")
            }
            return item.error
        }
    }
}
