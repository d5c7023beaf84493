internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

// Keeping a connection honest: a client that stops answering, or starts a frame
// and never finishes it, is closed with DEADLINE_EXCEEDED rather than held.
extension ConnectionHandler {
    /// Pings a connection with open calls that was silent for a whole interval, and
    /// closes it when it stays silent for another: a client that stopped reading
    /// must not pin its streams' memory forever. Idle connections with no open call
    /// (a blocking client between calls) cost nothing and are left alone.
    func checkLiveness() {
        guard let context, machine.phase != .awaitingHello else { return }
        if heardSinceCheck || machine.calls.isEmpty {
            heardSinceCheck = false
            unansweredPing = nil
            return
        }
        if let nonce = unansweredPing {
            fail(
                context,
                HomeError(
                    .deadlineExceeded,
                    "no answer to the daemon's ping \(nonce) within "
                        + "\(configuration.keepaliveIntervalMs) ms; closing the connection"))
            return
        }
        let nonce = UInt64.random(in: 1...UInt64.max)
        unansweredPing = nonce
        context.writeAndFlush(wrapOutboundOut(WireFrame(callID: 0, body: .ping(nonce: nonce)).encoded()), promise: nil)
    }

    /// A frame begun must be finished within `frameTimeoutMs`; a client that sends
    /// half a frame and stops is closed with DEADLINE_EXCEEDED, not held forever.
    func watchPartialFrame(_ context: ChannelHandlerContext) {
        guard frames.unprocessedBytes > 0 else {
            partialFrameTimeout?.cancel()
            partialFrameTimeout = nil
            return
        }
        guard partialFrameTimeout == nil else { return }
        let timeout = configuration.frameTimeoutMs
        partialFrameTimeout = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(timeout)) {
            [weak self] in
            guard let self, let context = self.context, self.frames.unprocessedBytes > 0 else { return }
            self.fail(
                context,
                HomeError(
                    .deadlineExceeded,
                    "a frame was left incomplete for \(timeout) ms "
                        + "(\(self.frames.unprocessedBytes) bytes received)"))
        }
    }
}
