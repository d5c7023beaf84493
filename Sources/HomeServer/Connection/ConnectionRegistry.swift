internal import HomeModel
internal import NIOCore

/// The open connections: their count for limits and status, and a way to reach all
/// of them at shutdown.
final class ConnectionRegistry: Sendable {
    /// One open connection, as the registry knows it.
    struct Connection {
        let id: UInt64
        /// What its hello said; "" before it.
        var name: String = ""
        let peer: Peer
        var openStreams: Int = 0
        let channel: any Channel
    }

    private struct State {
        var nextID: UInt64 = 1
        var open: [UInt64: Connection] = [:]
        var closing = false
    }

    private let state = Locked(State())

    /// Registers a connection; nil when the limit is reached or the server is closing.
    func add(_ channel: any Channel, peer: Peer, limit: Int) -> UInt64? {
        state.withLock { state in
            guard !state.closing, state.open.count < limit else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.open[id] = Connection(id: id, peer: peer, channel: channel)
            return id
        }
    }

    func remove(_ id: UInt64) {
        state.withLock { _ = $0.open.removeValue(forKey: id) }
    }

    /// Records what a connection said in its hello, and how many streams it has open.
    func update(_ id: UInt64, name: String? = nil, openStreams: Int? = nil) {
        state.withLock { state in
            if let name { state.open[id]?.name = name }
            if let openStreams { state.open[id]?.openStreams = openStreams }
        }
    }

    /// Every open connection, by id.
    func connections() -> [Connection] {
        state.withLock { state in state.open.keys.sorted().compactMap { state.open[$0] } }
    }

    /// The bytes each of these connections has written that its socket has not yet
    /// taken, in their order, each read on its own event loop (0 for one that closed).
    func pendingBytes(of connections: [Connection], on eventLoop: any EventLoop) -> EventLoopFuture<[UInt64]> {
        let pending = connections.map { connection in
            connection.channel.getOption(ChannelOptions.bufferedWritableBytes).map { UInt64($0) }.recover { _ in 0 }
        }
        return EventLoopFuture.whenAllSucceed(pending, on: eventLoop)
    }

    var count: Int { state.withLock { $0.open.count } }

    /// The server is closing: it takes no more connections.
    var isClosing: Bool { state.withLock { $0.closing } }

    /// Stops accepting and returns every open connection.
    func beginClosing() -> [any Channel] {
        state.withLock { state in
            state.closing = true
            return state.open.values.map(\.channel)
        }
    }
}
