import NIOCore
import Synchronization

/// The open connections: their count for limits and status, and a way to reach all
/// of them at shutdown.
final class ConnectionRegistry: Sendable {
    private struct State {
        var nextID: UInt64 = 1
        var channels: [UInt64: any Channel] = [:]
        var closing = false
    }

    private let state = Mutex(State())

    /// Registers a connection; nil when the limit is reached or the server is closing.
    func add(_ channel: any Channel, limit: Int) -> UInt64? {
        state.withLock { state in
            guard !state.closing, state.channels.count < limit else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.channels[id] = channel
            return id
        }
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.channels.removeValue(forKey: id) }
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// Stops accepting and returns every open connection.
    func beginClosing() -> [any Channel] {
        state.withLock { state in
            state.closing = true
            return Array(state.channels.values)
        }
    }
}
