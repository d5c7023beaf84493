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
final class ProviderCommandStream {
    let providerID: String
    let callID: UInt64
    let connectionID: UInt64
    private let channel: any Channel
    private let hub: ProviderHub
    private let store: HomeStore
    /// Reports to the connection that the stream ended by itself.
    private let onEnd: () -> Void
    private var ended = false
    private var pings: RepeatedTask?
    private var pingOutstanding = false

    init(
        providerID: String, callID: UInt64, connectionID: UInt64, channel: any Channel, hub: ProviderHub,
        store: HomeStore, onEnd: @escaping () -> Void
    ) {
        self.providerID = providerID
        self.callID = callID
        self.connectionID = connectionID
        self.channel = channel
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
        let loopBound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        pings = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            loopBound.value.ping()
        }
    }

    func send(_ command: ProviderCommand) {
        guard !ended, channel.isActive else { return }
        var payload = channel.allocator.buffer(capacity: 64)
        command.encode(into: &payload)
        var out = channel.allocator.buffer(capacity: payload.readableBytes + 24)
        WireFrame.encodeMessage(callID: callID, payload: payload, into: &out)
        channel.writeAndFlush(out, promise: nil)
    }

    /// One liveness ping, unless the last one is still waiting: an unanswered one
    /// ends the session.
    private func ping() {
        guard !ended, !pingOutstanding else { return }
        pingOutstanding = true
        let timeoutMs = hub.pingTimeoutMs
        let loopBound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        hub.send(.ping, to: providerID, timeoutMs: timeoutMs, on: channel.eventLoop).whenComplete { result in
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
        pings?.cancel()
        pings = nil
        if hub.close(providerID: providerID, stream: self, reason: reason) {
            store.setProviderReachable(
                false, provider: providerID,
                origin: Origin(kind: .provider, connectionID: connectionID, name: providerID))
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
        if channel.isActive {
            channel.writeAndFlush(WireFrame(callID: callID, body: .status(error)).encoded(), promise: nil)
        }
        onEnd()
    }

    func resumeWriting() {}
}
