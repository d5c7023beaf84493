internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

// The start-up grace: right after the daemon starts, requests to providers it knew
// before wait for them to come back instead of failing at once.
extension ProviderHub {
    /// Providers start as services of their own after homed: for `graceMs` after the
    /// daemon starts, a request to one of these (known from before) that has not
    /// come back yet waits for it, up to its own deadline, instead of failing at
    /// once; at the grace's end, the ones still waiting fail with UNAVAILABLE.
    func awaitReturn(of providerIDs: Set<String>, graceMs: UInt32, on eventLoop: any EventLoop) {
        guard graceMs > 0, !providerIDs.isEmpty else { return }
        state.withLock { $0.returning.formUnion(providerIDs.subtracting(inProcessProviders)) }
        eventLoop.scheduleTask(in: .milliseconds(Int64(graceMs))) { [weak self] in
            self?.endGrace(afterMs: graceMs)
        }
    }

    /// The start-up grace is over: requests still waiting for a provider fail.
    private func endGrace(afterMs graceMs: UInt32) {
        let failed: [Pending] = state.withLock { state in
            let waiting = state.returning
            state.returning = []
            state.parked = [:]
            let ids = state.pending.filter {
                waiting.contains($0.value.providerID) && state.sessions[$0.value.providerID] == nil
            }
            .map(\.key)
            return ids.compactMap { id in
                guard let pending = state.pending.removeValue(forKey: id) else { return nil }
                if let budgeted = pending.budgeted {
                    state.figures[pending.providerID]?.budget.release(budgeted.kind, from: budgeted.connectionID)
                }
                return pending
            }
        }
        for pending in failed {
            pending.complete(
                .failure(
                    HomeError(
                        .unavailable,
                        "provider \"\(pending.providerID)\" has not come back within \(graceMs) ms of the daemon's "
                            + "start; its accessories are unreachable until it does")))
        }
    }

    /// Sends a provider that has just opened its stream the commands that waited
    /// for it during the start-up grace, in order (after its opened message).
    func sendParked(to providerID: String) {
        let delivery: (Session, [ProviderCommand])? = state.withLock { state in
            state.returning.remove(providerID)
            guard let session = state.sessions[providerID],
                let commands = state.parked.removeValue(forKey: providerID)
            else { return nil }
            // Those whose request ended meanwhile (their deadline) are not sent.
            return (session, commands.filter { state.pending[$0.requestID] != nil })
        }
        guard let (session, commands) = delivery, !commands.isEmpty else { return }
        let stream = session.stream
        session.eventLoop.execute {
            for command in commands { stream.value.send(command) }
        }
    }
}
