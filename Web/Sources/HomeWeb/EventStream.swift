internal import HomeClient
internal import HomeModel
internal import HomeWire
internal import Hummingbird
internal import Logging
internal import NIOCore
internal import Prometheus
internal import ServiceLifecycle
internal import Synchronization

/// One page's server-sent events: a homed subscription of its own, on a connection
/// of its own made for the session's role, resumed from the page's last `seq`.
///
/// Every event homed sends is one SSE message whose `id:` is homed's `seq`, so a
/// browser that reconnects (homed-web restarted, the network dropped) sends
/// `Last-Event-ID` and homed replays exactly what it missed. When homed itself goes
/// away, the stream stays open, says `catching-up`, and resumes once homed is back
/// (its journal continues across restarts when it has a database). When homed cannot
/// resume (the journal changed, or no longer holds what was missed) the page is told
/// `resync` and reloads the state: never a silent gap.
struct EventStream: Sendable {
    let link: HomedLink
    let metrics: WebMetrics
    let logger: Logger
    let identity: ConnectIdentity?
    let journalID: String
    let since: UInt64?

    /// How long homed waits on a quiet stream before it sends a heartbeat: the page
    /// hears a comment that often, and a browser that went away is noticed then.
    static let heartbeatMs: UInt32 = 2_000
    /// homed's largest subscriber queue: a resume puts everything missed in the queue
    /// at once. 16 384 events is a page away for many minutes of a busy home; past
    /// it homed drops what does not fit and says so (the `gap` policy, never
    /// `coalesce`, whose merged values would show the page the latest value of a
    /// characteristic without the changes before it): the page is told to reload.
    static let queueLimit: UInt32 = 16_384

    /// Runs until the browser goes, or homed-web shuts down: then the stream ends
    /// (the browser comes back with `Last-Event-ID` to the next homed-web), rather than
    /// holding the shutdown up for as long as the page stays open.
    func run(_ writer: inout any ResponseBodyWriter) async throws {
        let shutdown = Shutdown()
        try await withGracefulShutdownHandler {
            try await follow(&writer, shutdown: shutdown)
        } onGracefulShutdown: {
            shutdown.begin()
        }
    }

    private func follow(_ writer: inout any ResponseBodyWriter, shutdown: Shutdown) async throws {
        var cursor = StreamCursor(journalID: journalID, resumeSeq: since)
        var backoffMs = 100
        try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
        var live = false
        while !Task.isCancelled, !shutdown.isShuttingDown {
            let client: HomeClient
            let target: UInt64
            do {
                client = try await link.connect(as: identity, name: "homed-web page")
                target = try await client.status().seq
            } catch {
                guard error.code == .unavailable else {
                    try await writer.write(Self.message(event: "failure", data: Self.errorJSON(error)))
                    return
                }
                if live || backoffMs == 100 {
                    try await writer.write(Self.status("catching-up", reason: error.message))
                    live = false
                }
                // Also how a browser that left while homed was away is noticed.
                try await writer.write(ByteBuffer(string: ": waiting for homed\n\n"))
                try await Task.sleep(for: .milliseconds(backoffMs))
                backoffMs = min(backoffMs * 2, 2_000)
                continue
            }
            guard shutdown.follow(client) else {
                await client.close()
                return
            }
            defer { Task { await client.close() } }
            backoffMs = 100
            var request = SubscribeRequest(
                policy: .gap, queueLimit: Self.queueLimit, heartbeatMs: Self.heartbeatMs)
            if let resumeSeq = cursor.resumeSeq {
                request.sinceSeq = resumeSeq
                request.journalID = cursor.journalID
            }
            var caughtUp = (cursor.resumeSeq ?? target) >= target
            try await writer.write(Self.status(caughtUp ? "live" : "catching-up", reason: ""))
            live = caughtUp
            do {
                for try await message in client.subscribe(request) {
                    if let marker = message.marker, marker.kind == .resync || marker.kind == .gap {
                        // homed cannot say what was missed (a resync), or dropped what
                        // did not fit in the queue (a gap): the page reloads the state.
                        let reason =
                            marker.kind == .gap
                            ? "events \(marker.gapFrom)–\(marker.gapTo) did not fit in homed's queue for this page"
                            : marker.reason
                        metrics.resyncs.increment()
                        // What came before a gap is still the page's, in order.
                        var out = marker.kind == .gap ? Self.pending(cursor.accept(message)) : ByteBuffer()
                        var resync = Self.message(
                            event: "resync", data: .object([("seq", .uint(marker.seq)), ("reason", .string(reason))]))
                        out.writeBuffer(&resync)
                        try await writer.write(out)
                        return
                    }
                    let events = cursor.accept(message)
                    var out = Self.pending(events)
                    if !caughtUp, (cursor.highestSeq ?? 0) >= target || message.marker?.kind == .heartbeat {
                        caughtUp = true
                    }
                    if caughtUp && !live {
                        var status = Self.status("live", reason: "")
                        out.writeBuffer(&status)
                        live = true
                    }
                    if out.readableBytes > 0 {
                        metrics.eventsSent.increment(by: Int64(events.count))
                        try await writer.write(out)
                    } else if message.marker?.kind == .heartbeat {
                        try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                    }
                }
                throw HomeError(.unavailable, "homed ended the stream")
            } catch let error as HomeError where error.code == .unavailable {
                if shutdown.isShuttingDown {
                    try await writer.write(Self.status("catching-up", reason: "homed-web is shutting down"))
                    return
                }
                logger.debug("homed went away under a page's stream; resuming", metadata: ["error": "\(error)"])
                try await writer.write(Self.status("catching-up", reason: error.message))
                live = false
                continue
            } catch let error as HomeError {
                if shutdown.isShuttingDown {
                    // However its connection's end was put: the browser comes back to the next homed-web.
                    try await writer.write(Self.status("catching-up", reason: "homed-web is shutting down"))
                    return
                }
                try await writer.write(Self.message(event: "failure", data: Self.errorJSON(error)))
                return
            }
        }
    }

    /// Events as the page's server-sent events, each with homed's seq as its id.
    static func pending(_ events: [HomeEvent]) -> ByteBuffer {
        var out = ByteBuffer()
        for event in events {
            guard let (name, data) = HomeJSON.event(event) else { continue }
            out.writeString("id: \(event.seq)\nevent: \(name)\ndata: \(data.serialized())\n\n")
        }
        return out
    }

    static func message(event: String, data: JSONValue) -> ByteBuffer {
        ByteBuffer(string: "event: \(event)\ndata: \(data.serialized())\n\n")
    }

    static func status(_ state: String, reason: String) -> ByteBuffer {
        message(event: "status", data: .object([("state", .string(state)), ("reason", .string(reason))]))
    }

    static func errorJSON(_ error: HomeError) -> JSONValue {
        .object([("code", .string(error.code.name)), ("message", .string(error.message))])
    }
}

/// What a stream's graceful shutdown does: marks the stream as ending, and closes its
/// connection to homed, which ends the subscription it is waiting on.
private final class Shutdown: Sendable {
    private let state = Mutex<(shuttingDown: Bool, client: HomeClient?)>((false, nil))

    var isShuttingDown: Bool { state.withLock { $0.shuttingDown } }

    /// Remembers the stream's current connection; false when shutting down already.
    func follow(_ client: HomeClient) -> Bool {
        state.withLock { state in
            guard !state.shuttingDown else { return false }
            state.client = client
            return true
        }
    }

    func begin() {
        let client = state.withLock { state in
            state.shuttingDown = true
            return state.client
        }
        if let client { Task { await client.close() } }
    }
}
