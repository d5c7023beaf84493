internal import HomeModel
internal import NIOCore

/// The open connections: their count for limits and status, and a way to reach all
/// of them at shutdown.
final class ConnectionRegistry: Sendable {
    private struct State {
        var nextID: UInt64 = 1
        var channels: [UInt64: any Channel] = [:]
        var names: [UInt64: String] = [:]
        var peers: [UInt64: Peer] = [:]
        var openStreams: [UInt64: Int] = [:]
        var closing = false
    }

    private let state = Locked(State())

    /// Registers a connection; nil when the limit is reached or the server is closing.
    func add(_ channel: any Channel, peer: Peer, limit: Int) -> UInt64? {
        state.withLock { state in
            guard !state.closing, state.channels.count < limit else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.channels[id] = channel
            state.peers[id] = peer
            return id
        }
    }

    func remove(_ id: UInt64) {
        state.withLock {
            $0.channels.removeValue(forKey: id)
            $0.names.removeValue(forKey: id)
            $0.peers.removeValue(forKey: id)
            $0.openStreams.removeValue(forKey: id)
        }
    }

    /// Records what a connection said in its hello, and how many streams it has open.
    func update(_ id: UInt64, name: String? = nil, openStreams: Int? = nil) {
        state.withLock { state in
            guard state.channels[id] != nil else { return }
            if let name { state.names[id] = name }
            if let openStreams { state.openStreams[id] = openStreams }
        }
    }

    /// Every open connection with its client's name, its peer and open stream count.
    func connections() -> [Connection] {
        state.withLock { state in
            state.channels.keys.sorted().map { id in
                (id, state.names[id] ?? "", state.peers[id]!, state.openStreams[id] ?? 0, state.channels[id]!)
            }
        }
    }

    /// What `connections()` tells of one connection.
    typealias Connection = (id: UInt64, name: String, peer: Peer, openStreams: Int, channel: any Channel)

    /// The bytes each of these connections has written that its socket has not yet
    /// taken, in their order, each read on its own event loop (0 for one that closed).
    func pendingBytes(of connections: [Connection], on eventLoop: any EventLoop) -> EventLoopFuture<[UInt64]> {
        let pending = connections.map { connection in
            connection.channel.getOption(ChannelOptions.bufferedWritableBytes).map { UInt64($0) }.recover { _ in 0 }
        }
        return EventLoopFuture.whenAllSucceed(pending, on: eventLoop)
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// The server is closing: it takes no more connections.
    var isClosing: Bool { state.withLock { $0.closing } }

    /// Stops accepting and returns every open connection.
    func beginClosing() -> [any Channel] {
        state.withLock { state in
            state.closing = true
            return Array(state.channels.values)
        }
    }
}
