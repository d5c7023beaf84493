internal import Histogram
internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// The providers the daemon knows: which connection holds each provider id, the
/// requests sent to them that wait for an answer, and their figures.
///
/// A request is a promise on the caller's event loop with a deadline there: the
/// caller never blocks, a provider that does not answer fails the request with
/// DEADLINE_EXCEEDED on time, one that goes away fails its requests with
/// UNAVAILABLE at once, and an answer that comes after either is dropped.
final class ProviderHub: Sendable, WriteOwners {
    /// Providers whose accessories the daemon serves itself: their writes apply
    /// at once and no connection may claim their ids (`ServerConfiguration`).
    let inProcessProviders: Set<String>

    struct Session {
        let providerID: String
        let connectionID: UInt64
        let clientName: String
        /// The Unix user of its connection, for the origin of its changes.
        let uid: UInt32
        let stream: NIOLoopBound<ProviderCommandStream>
        let eventLoop: any EventLoop
        /// Characteristics whose writes take effect at once (declared optimistic).
        var optimistic: Set<ObjectID> = []
    }

    /// What settles a request where it ends (see `send`'s `settle`).
    typealias Settle = @Sendable (Result<CommandAnswer, HomeError>) -> Void

    struct Pending {
        let providerID: String
        let promise: EventLoopPromise<CommandAnswer>
        let settle: Settle?
        let startedNs: UInt64
        /// Liveness pings are not counted among the provider's requests and latency.
        let isPing: Bool
        /// What the request counts against in the provider's budget (nil for a ping).
        let budgeted: (kind: ProviderBudget.Kind, connectionID: UInt64)?

        /// Ends the request, outside the hub's lock: `settle` here, then the future.
        func complete(_ result: Result<CommandAnswer, HomeError>) {
            settle?(result)
            switch result {
            case .success(let answer): promise.succeed(answer)
            case .failure(let error): promise.fail(error)
            }
        }
    }

    struct Figures {
        var requests: UInt64 = 0
        var timeouts: UInt64 = 0
        /// The requests waiting for answers, by kind and by the connection that asked.
        var budget = ProviderBudget()
        /// How many requests wait.
        var inFlight: UInt32 { UInt32(clamping: budget.waiting) }

        /// Every request waiting for the provider has failed (its session ended).
        mutating func forgetWaiting() {
            budget = ProviderBudget(limits: budget.limits)
        }
        var lastSeenMs: Int64 = 0
        var latencyUs = Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .two)
    }

    struct State {
        var sessions: [String: Session] = [:]
        var pending: [UInt64: Pending] = [:]
        var nextRequestID: UInt64 = 1
        var figures: [String: Figures] = [:]
        /// Providers known from before the daemon started that have not come back
        /// yet, while the start-up grace lasts: requests to them wait (see `awaitReturn`).
        var returning: Set<String> = []
        /// Commands for those providers, in order, sent when they open their stream.
        var parked: [String: [ProviderCommand]] = [:]
    }

    let state = Locked(State())
    /// Where the timeout of a call that sets none comes from (a reload changes it).
    let limits: LiveLimits
    let pingIntervalMs: UInt32
    let pingTimeoutMs: UInt32

    init(
        limits: LiveLimits, pingIntervalMs: UInt32, pingTimeoutMs: UInt32? = nil,
        inProcessProviders: Set<String> = [""]
    ) {
        self.limits = limits
        self.pingIntervalMs = pingIntervalMs
        self.pingTimeoutMs = pingTimeoutMs ?? pingIntervalMs * 2
        self.inProcessProviders = inProcessProviders.union([""])
    }

    // MARK: Sessions

    /// Gives the provider id to a connection's command stream.
    ///
    /// - Throws: ALREADY_EXISTS when another connection holds it.
    func open(_ session: Session) throws(HomeError) {
        try state.withLock { state throws(HomeError) in
            if let holder = state.sessions[session.providerID] {
                throw HomeError(
                    .alreadyExists,
                    "provider \"\(session.providerID)\" is already connected (connection \(holder.connectionID), "
                        + "\(holder.clientName)); one connection at a time serves a provider")
            }
            state.sessions[session.providerID] = session
            state.figures[session.providerID, default: Figures()].lastSeenMs = currentTimeMs()
        }
    }

    /// Ends a provider's session: its waiting requests fail with UNAVAILABLE.
    ///
    /// - Returns: false when the stream no longer held the session.
    @discardableResult
    func close(providerID: String, stream: ProviderCommandStream, reason: String) -> Bool {
        let failed: [Pending]? = state.withLock { state in
            guard let session = state.sessions[providerID], session.stream.value === stream else { return nil }
            state.sessions[providerID] = nil
            let ids = state.pending.filter { $0.value.providerID == providerID }.map(\.key)
            let failed = ids.compactMap { state.pending.removeValue(forKey: $0) }
            state.figures[providerID]?.forgetWaiting()
            state.figures[providerID]?.lastSeenMs = currentTimeMs()
            return failed
        }
        guard let failed else { return false }
        for pending in failed {
            pending.complete(
                .failure(
                    HomeError(.unavailable, "provider \"\(providerID)\" went away before answering (\(reason))")))
        }
        return true
    }

    /// The session of the provider a connection holds, if any.
    func session(ofConnection connectionID: UInt64) -> Session? {
        state.withLock { state in state.sessions.values.first { $0.connectionID == connectionID } }
    }

    /// Records the characteristics a provider declared optimistic.
    func setOptimistic(_ ids: Set<ObjectID>, removing removed: Set<ObjectID>, providerID: String) {
        state.withLock { state in
            state.sessions[providerID]?.optimistic.subtract(removed)
            state.sessions[providerID]?.optimistic.formUnion(ids)
        }
    }

    /// The provider that serves an accessory, when it is not served in-process.
    func remoteProvider(of accessory: Accessory) -> String? {
        inProcessProviders.contains(accessory.provider) ? nil : accessory.provider
    }

    func optimistic(_ providerID: String) -> Set<ObjectID> {
        state.withLock { $0.sessions[providerID]?.optimistic ?? [] }
    }

    func noteSeen(_ providerID: String) {
        state.withLock { $0.figures[providerID]?.lastSeenMs = currentTimeMs() }
    }

    // MARK: Requests

    /// Whether a provider process holds a session for `providerID` now.
    func isConnected(_ providerID: String) -> Bool {
        state.withLock { $0.sessions[providerID] != nil }
    }

    /// Sends a command to a provider; the future completes on `eventLoop` with the
    /// answer, or fails with UNAVAILABLE (not connected, or gone), DEADLINE_EXCEEDED
    /// (no answer within `timeoutMs`) or RESOURCE_EXHAUSTED (too many waiting: in
    /// all, of fresh reads, or of `connectionID`'s; see `ProviderBudget`).
    ///
    /// - Parameters:
    ///   - connectionID: the connection whose call asks (0: the daemon's own, such
    ///     as a trigger's scene); its requests count against its share.
    ///   - settle: run first where the request ends: for an answer, on the
    ///     provider's loop before its `AnswerCommand` is acknowledged, so what it
    ///     commits precedes all the provider sends after (a device's rounding,
    ///     reported); the future's callbacks, on `eventLoop`, do not.
    @discardableResult
    func send(
        _ kind: ProviderCommand.Kind, to providerID: String, timeoutMs: UInt32?, on eventLoop: any EventLoop,
        from connectionID: UInt64 = 0, settle: Settle? = nil
    ) -> EventLoopFuture<CommandAnswer> {
        let timeoutMs = max(1, timeoutMs ?? limits.providerTimeoutMs)
        let promise = eventLoop.makePromise(of: CommandAnswer.self)
        let sent: Result<(UInt64, Session?), HomeError> = state.withLock { state in
            let session = state.sessions[providerID]
            guard session != nil || state.returning.contains(providerID) else {
                return .failure(
                    HomeError(
                        .unavailable,
                        "provider \"\(providerID)\" is not connected; its accessories are unreachable until it is"))
            }
            // Pings are not budgeted: a liveness check must never be refused.
            let budgeted: (kind: ProviderBudget.Kind, connectionID: UInt64)?
            switch kind {
            case .read: budgeted = (.read, connectionID)
            case .write: budgeted = (.write, connectionID)
            case .ping, .opened: budgeted = nil
            }
            let isPing = kind == .ping
            if let refusal = state.figures[providerID, default: Figures()].admit(
                budgeted, isPing: isPing, provider: providerID)
            {
                return .failure(refusal)
            }
            let requestID = state.nextRequestID
            state.nextRequestID += 1
            let timeout = eventLoop.scheduleTask(in: .milliseconds(Int64(timeoutMs))) { [weak self] () -> Void in
                self?.expire(requestID, timeoutMs: timeoutMs)
            }
            // However the request ends, its timer goes on its own loop: cancelled from
            // the provider's loop, it would wake this one a second time.
            promise.futureResult.whenComplete { _ in timeout.cancel() }
            state.pending[requestID] = Pending(
                providerID: providerID, promise: promise, settle: settle, startedNs: monotonicNs(), isPing: isPing,
                budgeted: budgeted)
            if session == nil {
                // Known, not back yet, within the start-up grace: sent when it opens.
                state.parked[providerID, default: []].append(
                    ProviderCommand(requestID: requestID, timeoutMs: timeoutMs, kind: kind))
            }
            return .success((requestID, session))
        }
        switch sent {
        case .failure(let error):
            settle?(.failure(error))
            promise.fail(error)
        case .success(let (requestID, session?)):
            let command = ProviderCommand(requestID: requestID, timeoutMs: timeoutMs, kind: kind)
            let stream = session.stream
            // On the provider's own loop already (its connection and the caller's share
            // one): written now rather than a loop turn later.
            if session.eventLoop.inEventLoop {
                stream.value.send(command)
            } else {
                session.eventLoop.execute { stream.value.send(command) }
            }
        case .success((_, nil)):
            break
        }
        return promise.futureResult
    }

    private func expire(_ requestID: UInt64, timeoutMs: UInt32) {
        let expired: (Pending, connected: Bool)? = state.withLock { state in
            guard let pending = state.pending.removeValue(forKey: requestID) else { return nil }
            if let budgeted = pending.budgeted {
                state.figures[pending.providerID]?.budget.release(budgeted.kind, from: budgeted.connectionID)
            }
            if !pending.isPing { state.figures[pending.providerID]?.timeouts += 1 }
            return (pending, state.sessions[pending.providerID] != nil)
        }
        guard let (pending, connected) = expired else { return }
        pending.complete(
            .failure(
                HomeError(
                    .deadlineExceeded,
                    connected
                        ? "provider \"\(pending.providerID)\" did not answer request \(requestID) within \(timeoutMs) ms"
                        : "provider \"\(pending.providerID)\" has not come back since the daemon started; request "
                            + "\(requestID) waited \(timeoutMs) ms for it")))
    }

    /// Fails a request that could not be sent to its provider (its command does not
    /// fit in a frame of the provider's connection).
    func reject(_ requestID: UInt64, _ error: HomeError) {
        let pending: Pending? = state.withLock { state in
            guard let pending = state.pending.removeValue(forKey: requestID) else { return nil }
            if let budgeted = pending.budgeted {
                state.figures[pending.providerID]?.budget.release(budgeted.kind, from: budgeted.connectionID)
            }
            return pending
        }
        pending?.complete(.failure(error))
    }

    /// A provider's answer: completes its request, unless it timed out or is not
    /// this connection's (then it is dropped).
    ///
    /// - Returns: whether the answer was taken.
    func answer(_ answer: CommandAnswer, fromConnection connectionID: UInt64) -> Bool {
        let pending: Pending? = state.withLock { state in
            guard let pending = state.pending[answer.requestID],
                state.sessions[pending.providerID]?.connectionID == connectionID
            else { return nil }
            state.pending[answer.requestID] = nil
            state.figures[pending.providerID, default: Figures()].noteAnswer(
                budgeted: pending.budgeted, isPing: pending.isPing, startedNs: pending.startedNs)
            return pending
        }
        guard let pending else { return false }
        pending.complete(.success(answer))
        return true
    }
}
