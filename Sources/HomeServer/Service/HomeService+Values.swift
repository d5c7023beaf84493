internal import HomeModel
internal import HomeWire

extension HomeService {
    func readCharacteristics(_ request: ReadCharacteristicsRequest, context: CallContext) -> ReadCharacteristicsResponse
    {
        let outcome = store.read(request.characteristicIDs)
        return ReadCharacteristicsResponse(reads: outcome.reads, seq: outcome.seq)
    }

    func writeCharacteristics(_ request: WriteCharacteristicsRequest, context: CallContext)
        -> WriteCharacteristicsResponse
    {
        let outcome = store.write(
            request.writes, atomic: request.atomic, validateOnly: request.validateOnly,
            origin: context.origin)
        return WriteCharacteristicsResponse(results: outcome.results, seq: outcome.seq)
    }

    func executeActionSet(_ request: ExecuteActionSetRequest, context: CallContext) throws(HomeError)
        -> ExecuteActionSetResponse
    {
        let outcome = try store.executeActionSet(request.actionSetID, origin: context.origin)
        return ExecuteActionSetResponse(results: outcome.results, seq: outcome.seq)
    }
}
