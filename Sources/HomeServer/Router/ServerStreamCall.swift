internal import HomeModel

/// An open server-streaming call, as the connection that carries it sees it.
///
/// Event loop only. The stream ends itself when it is done or fails (and says so
/// through `CallContext.streamEnded`); the connection calls these when something
/// outside the stream ends it.
protocol ServerStreamCall: AnyObject {
    /// The client cancelled or went away: stop without writing anything more.
    func cancel()
    /// End the call from the daemon's side with this status (nil = OK), after
    /// sending what is already queued.
    func finish(with error: HomeError?)
    /// The socket takes writes again: carry on sending.
    func resumeWriting()
}
