internal import HomeModel
internal import HomeWire
internal import NIOCore

#if canImport(Glibc)
    internal import Glibc
#endif

extension HomeService {
    func getStatus(_ request: GetStatusRequest, context: CallContext) -> GetStatusResponse {
        var status = GetStatusResponse()
        let counts = store.statistics
        status.serverVersion = configuration.serverVersion
        status.protocolVersion = homeProtocolVersion
        status.connectionID = context.connectionID
        status.journalID = store.journalID
        status.seq = store.lastSeq
        status.uptimeMs = store.wallClockMs() - store.startedAtMs
        status.connections = UInt32(registry.count)
        status.subscriptions = UInt32(store.subscriptionCount)
        status.homes = UInt32(counts.homes)
        status.accessories = UInt32(counts.accessories)
        status.characteristics = UInt32(counts.characteristics)
        status.socketPath = configuration.socketPath
        status.databasePath = configuration.databasePath
        status.daemonPID = getpid()
        status.callerUID = context.peer.uid
        status.callerPID = context.peer.pid
        status.callerRole = context.role
        return status
    }

    /// Every connection's statistics. Pending bytes come from each connection's own
    /// event loop, so the answer waits until all are in.
    func getStats(_ request: GetStatsRequest, context: CallContext) -> EventLoopFuture<GetStatsResponse> {
        let store = self.store
        let subscriptions = store.subscriptionStatistics()
        let connections = registry.connections()
        let roles = configuration.roles
        return registry.pendingBytes(of: connections, on: context.eventLoop).map { pendingBytes in
            let stats = zip(connections, pendingBytes).map { connection, pending in
                ConnectionStats(
                    connectionID: connection.id, clientName: connection.name, openCalls: UInt32(connection.openStreams),
                    subscriptions: (subscriptions[connection.id] ?? []).sorted {
                        $0.subscriptionID < $1.subscriptionID
                    },
                    pendingBytes: pending, uid: connection.peer.uid, pid: connection.peer.pid,
                    role: roles.role(of: connection.peer))
            }
            return GetStatsResponse(connections: stats, seq: store.lastSeq)
        }
    }

    /// A copy of the database, taken online and streamed (`BackupStream`).
    func backup(_ request: BackupRequest, context: CallContext, writer: CallWriter) throws(HomeError)
        -> any ServerStreamCall
    {
        // Refused before a pool thread is asked for anything.
        try store.checkBackupPossible()
        let stream = BackupStream(writer: writer) { [streamEnded = context.streamEnded, callID = context.callID] in
            streamEnded(callID)
        }
        stream.start(store: store)
        return stream
    }
}
