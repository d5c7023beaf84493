internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// An OpenProvider call: the stream that carries the daemon's commands to one
/// provider, and the provider's session while it is open.
///
/// Event loop only (its connection's). The session ends when the stream does:
/// the provider cancels or closes its connection (or its process dies, which
/// closes it), or a liveness ping goes unanswered. Its accessories then become
/// unreachable, and its waiting requests fail with UNAVAILABLE.
///
/// Commands go out through the call's writer: one that does not fit in a frame
/// of the provider's connection fails its request with RESOURCE_EXHAUSTED, and
/// while the provider's socket takes no more they wait here, in order (as many as
/// the hub lets wait for answers), until it does.
final class ProviderCommandStream {
    let providerID: String
    let callID: UInt64
    let connectionID: UInt64
    private let writer: any StreamCallWriter
    private let hub: ProviderHub
    private let store: HomeStore
    /// Reports to the connection that the stream ended by itself.
    private let onEnd: () -> Void
    private var ended = false
    private var pings: RepeatedTask?
    private var pingOutstanding = false
    /// Commands waiting for the socket to take writes again.
    private var backlog = CircularBuffer<ProviderCommand>()

    init(
        providerID: String, connectionID: UInt64, writer: any StreamCallWriter, hub: ProviderHub, store: HomeStore,
        onEnd: @escaping () -> Void
    ) {
        self.providerID = providerID
        self.callID = writer.callID
        self.connectionID = connectionID
        self.writer = writer
        self.hub = hub
        self.store = store
        self.onEnd = onEnd
    }

    /// Sends the opened message and starts the liveness pings.
    func start(knownKeys: [String]) {
        let opened = ProviderOpened(
            providerID: providerID, pingIntervalMs: hub.pingIntervalMs, knownKeys: knownKeys)
        send(ProviderCommand(requestID: 0, timeoutMs: 0, kind: .opened(opened)))
        let interval = TimeAmount.milliseconds(Int64(hub.pingIntervalMs))
        let loopBound = NIOLoopBound(self, eventLoop: writer.eventLoop)
        pings = writer.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            loopBound.value.ping()
        }
    }

    /// Sends a command now, or after the ones waiting for the socket.
    func send(_ command: ProviderCommand) {
        guard !ended, writer.isOpen else { return }
        backlog.append(command)
        drain()
    }

    /// Writes waiting commands while the socket takes them.
    private func drain() {
        var wrote = false
        while writer.isWritable, let command = backlog.popFirst() {
            var payload = writer.allocator.buffer(capacity: 64)
            command.encode(into: &payload)
            do throws(HomeError) {
                try writer.write(payload)
                wrote = true
            } catch {
                hub.reject(
                    command.requestID,
                    HomeError(
                        error.code,
                        "the command for request \(command.requestID) takes \(payload.readableBytes) bytes, more "
                            + "than a frame of provider \"\(providerID)\"'s connection holds (\(writer.frameSize) "
                            + "bytes); nothing was sent to it"))
            }
        }
        if wrote { writer.flush() }
    }

    /// One liveness ping, unless the last one is still waiting: an unanswered one
    /// ends the session.
    private func ping() {
        guard !ended, !pingOutstanding else { return }
        pingOutstanding = true
        let timeoutMs = hub.pingTimeoutMs
        let loopBound = NIOLoopBound(self, eventLoop: writer.eventLoop)
        hub.send(.ping, to: providerID, timeoutMs: timeoutMs, on: writer.eventLoop).whenComplete { result in
            let stream = loopBound.value
            stream.pingOutstanding = false
            guard case .failure(let error as HomeError) = result, error.code == .deadlineExceeded else { return }
            stream.finish(
                with: HomeError(
                    .deadlineExceeded,
                    "provider \"\(stream.providerID)\" did not answer a liveness ping within \(timeoutMs) ms; "
                        + "its session is over and its accessories are unreachable"))
        }
    }

    /// Ends the session once: the hub forgets it, its accessories become unreachable.
    private func endSession(reason: String) -> Bool {
        guard !ended else { return false }
        ended = true
        backlog.removeAll()
        pings?.cancel()
        pings = nil
        if hub.close(providerID: providerID, stream: self, reason: reason) {
            let origin = Origin(kind: .provider, connectionID: connectionID, name: providerID)
            store.audit(
                "provider-disconnected", detail: "provider \(quoted(providerID)) went away: \(reason)", origin: origin)
            store.setProviderReachable(false, provider: providerID, origin: origin)
        }
        return true
    }
}

extension ProviderCommandStream: ServerStreamCall {
    func cancel() {
        _ = endSession(reason: "its stream was cancelled or its connection closed")
    }

    func finish(with error: HomeError?) {
        guard endSession(reason: error?.message ?? "the daemon ended its stream") else { return }
        writer.finish(with: error)
        onEnd()
    }

    func resumeWriting() {
        drain()
    }
}
