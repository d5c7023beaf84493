internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import Logging
internal import NIOCore

// Ending a connection: on a fault of the connection itself, and at the daemon's
// shutdown.
extension ConnectionHandler {
    /// The connection itself is unusable: ends it with a status on call 0. The close lingers: only the
    /// output is shut at once, and what the client still sends is read and dropped
    /// until it closes too (or a second passes), because closing a socket with
    /// unread input resets it and the client would lose the status.
    func fail(_ context: ChannelHandlerContext, _ error: HomeError) {
        guard !failed else { return }
        // Calls that came before the failure run, and are answered before its status.
        runWaitingGroup()
        failed = true
        logger.info("closing connection: \(error)")
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WireFrame(callID: 0, body: .status(error)).encoded()))
            .whenComplete { _ in
                let shutOutput = channel.eventLoop.makePromise(of: Void.self)
                shutOutput.futureResult.whenFailure { _ in channel.close(promise: nil) }
                channel.close(mode: .output, promise: shutOutput)
                channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
            }
    }

    func goAway(_ context: ChannelHandlerContext, reason: String) {
        guard let (lastCallID, streams) = machine.goAway() else { return }
        write(context, WireFrame(callID: 0, body: .goAway(reason: reason, lastCallID: lastCallID)))
        for stream in streams {
            stream.finish(with: HomeError(.unavailable, "the daemon is shutting down: \(reason)"))
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
