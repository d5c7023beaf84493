internal import HomeModel
internal import HomeWire
internal import NIOCore

// Reads, writes and scenes, routed by `ValueRouter`.
extension HomeService {
    func readCharacteristics(_ request: ReadCharacteristicsRequest, context: CallContext)
        -> EventLoopFuture<ReadCharacteristicsResponse>
    {
        values.read(
            request.characteristicIDs, fresh: request.fresh, timeoutMs: remainingMs(context), on: context.eventLoop,
            connectionID: context.connectionID
        ).map { ReadCharacteristicsResponse(reads: $0.reads, seq: $0.seq) }
    }

    func writeCharacteristics(_ request: WriteCharacteristicsRequest, context: CallContext)
        -> EventLoopFuture<WriteCharacteristicsResponse>
    {
        values.write(
            request.writes, atomic: request.atomic, validateOnly: request.validateOnly, origin: context.origin,
            timeoutMs: remainingMs(context), on: context.eventLoop
        ).map { WriteCharacteristicsResponse(results: $0.results, seq: $0.seq) }
    }

    /// Calls that came together on one connection: the daemon's own writes among
    /// them are made in one commit (one transaction on disk), none answered before
    /// it is durable (`ValueRouter.write(together:)`).
    func writeCharacteristics(_ calls: [(request: WriteCharacteristicsRequest, context: CallContext)])
        -> [EventLoopFuture<WriteCharacteristicsResponse>]
    {
        guard calls.count > 1 else { return calls.map { writeCharacteristics($0.request, context: $0.context) } }
        let batches = calls.map { request, context in
            ValueRouter.Batch(
                writes: WriteBatch(
                    writes: request.writes, atomic: request.atomic, validateOnly: request.validateOnly),
                origin: context.origin, timeoutMs: remainingMs(context))
        }
        return values.write(together: batches, on: calls[0].context.eventLoop).map {
            $0.map { WriteCharacteristicsResponse(results: $0.results, seq: $0.seq) }
        }
    }

    func executeActionSet(_ request: ExecuteActionSetRequest, context: CallContext)
        -> EventLoopFuture<ExecuteActionSetResponse>
    {
        values.executeActionSet(
            request.actionSetID, origin: context.origin, timeoutMs: remainingMs(context), on: context.eventLoop
        ).map { ExecuteActionSetResponse(results: $0.results, seq: $0.seq) }
    }

    /// What is left of the call's deadline, for the requests it makes to providers;
    /// nil for the providers' default.
    private func remainingMs(_ context: CallContext) -> UInt32? {
        guard let deadline = context.deadline else { return nil }
        let left = (deadline - .now()).nanoseconds / 1_000_000
        return UInt32(clamping: max(1, left))
    }

}
