internal import HomeModel
internal import NIOCore

/// What a handler knows of the call it serves and may ask of its connection.
/// Event loop only: handlers run on their connection's event loop.
struct CallContext: Sendable {
    let callID: UInt64
    let connectionID: UInt64
    let clientName: String
    /// Who makes the call, and the role it has for it.
    let peer: Peer
    let role: Role
    /// The connection's event loop, where the handler runs and its futures complete.
    let eventLoop: any EventLoop
    /// When the call must be over, if the client set `timeout_ms`.
    let deadline: NIODeadline?
    /// The state this connection keeps for the service (GetHome paging).
    let session: NIOLoopBound<ConnectionSession>
    /// The open streams of this connection, by call id.
    let openStream: @Sendable (UInt64) -> (any ServerStreamCall)?
    /// A stream reports here that it ended by itself (exactly once).
    let streamEnded: @Sendable (UInt64) -> Void

    /// Who makes the call, as the origin of the changes it causes.
    var origin: Origin { Origin(kind: .client, connectionID: connectionID, name: clientName, uid: peer.uid) }
}

/// State a connection keeps on behalf of the service between calls. Event loop only.
final class ConnectionSession {
    /// A GetHome in pages under way, and how many this connection started.
    var homePaging: HomePaging?
    var pagings = 0
    /// The bytes this connection's open subscriptions may hold in their queues.
    var reservedQueueBytes = 0
}
