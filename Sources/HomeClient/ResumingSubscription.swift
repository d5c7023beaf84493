public import HomeModel
@_spi(Wire) public import HomeWire

/// A subscription that outlives its connections: when the daemon goes away (a
/// restart, a crash, a dropped socket), it reconnects with backoff and resumes
/// where it stood, so the events it yields have no gap and no duplicate. When the
/// daemon cannot resume (its journal changed, or no longer holds what was missed),
/// the stream carries the daemon's resync marker and a fresh snapshot, as any
/// subscription does.
///
/// ```swift
/// let changes = HomeClient.resumingSubscription(name: "dashboard") { _ in
///     SubscribeRequest(filter: SubscriptionFilter(characteristicIDs: [brightness]))
/// }
/// for try await element in changes {
///     for event in element.message.events { show(event) }
/// }
/// ```
///
/// Iterating it throws when the first connection fails, and for any error other
/// than the daemon being unavailable (a filter naming an unknown id, say). Ending
/// the iteration, or its task, cancels the call and closes the connection.
public struct ResumingSubscription: AsyncSequence, Sendable {
    /// One stream message and the connection it arrived on.
    public struct Element: Sendable {
        /// The message as the daemon sent it, less the events a resume repeated.
        public var message: SubscribeResponse
        /// The connection the message came on: for its id, or to read the home again.
        public var client: HomeClient
        /// Counts connections, from 1: a new value means the stream reconnected.
        public var connection: Int
    }

    /// Builds the request for each new connection (names may have to be resolved
    /// again after a daemon restart). `sinceSeq` and `journalID` are set from the
    /// cursor when it has a resume point, and then no snapshot is asked for.
    public typealias MakeRequest = @Sendable (HomeClient) async throws(HomeError) -> SubscribeRequest

    let socketPath: String?
    let clientName: String
    let cursor: StreamCursor
    let makeRequest: MakeRequest

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(subscription: self)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private let subscription: ResumingSubscription
        /// Where the stream stands: what a resume starts from.
        public private(set) var cursor: StreamCursor
        private var connection: Connection?
        private var connections = 0
        private var backoffMs = Self.firstBackoffMs

        static let firstBackoffMs = 100
        static let maxBackoffMs = 2_000

        init(subscription: ResumingSubscription) {
            self.subscription = subscription
            self.cursor = subscription.cursor
        }

        public mutating func next() async throws -> Element? {
            while !Task.isCancelled {
                let current: Connection
                if let connection {
                    current = connection
                } else {
                    do throws(HomeError) {
                        current = try await connect()
                    } catch {
                        // The first connection's failure is the caller's to see; a
                        // daemon that went away is waited for.
                        guard connections > 0, error.code == .unavailable else { throw error }
                        try? await Task.sleep(for: .milliseconds(backoffMs))
                        backoffMs = Swift.min(backoffMs * 2, Self.maxBackoffMs)
                        continue
                    }
                    connection = current
                }
                do {
                    guard var message = try await current.stream.next() else {
                        throw HomeError(.unavailable, "the daemon ended the stream")
                    }
                    backoffMs = Self.firstBackoffMs
                    message.events = cursor.accept(message)
                    return Element(message: message, client: current.client, connection: connections)
                } catch let error as HomeError where error.code == .unavailable {
                    connection = nil  // and reconnect
                } catch let error as HomeError where error.code == .cancelled && Task.isCancelled {
                    return nil
                }
            }
            return nil
        }

        private mutating func connect() async throws(HomeError) -> Connection {
            let client = try await HomeClient.connect(to: subscription.socketPath, name: subscription.clientName)
            do throws(HomeError) {
                var request = try await subscription.makeRequest(client)
                if let resumeSeq = cursor.resumeSeq {
                    request.sinceSeq = resumeSeq
                    request.journalID = cursor.journalID
                    request.snapshot = false
                    // A start in the past is where the first connection began; from
                    // then on the cursor says where the stream stands.
                    request.sinceTimeMs = nil
                }
                connections += 1
                return Connection(client: client, stream: client.subscribe(request).makeAsyncIterator())
            } catch {
                client.closeSoon()
                throw error
            }
        }
    }

    /// One connection and its stream; closing the connection when the iterator
    /// lets go of it (a reconnect, or the end of the iteration).
    private final class Connection {
        let client: HomeClient
        var stream: HomeSubscription.AsyncIterator

        init(client: HomeClient, stream: HomeSubscription.AsyncIterator) {
            self.client = client
            self.stream = stream
        }

        deinit { client.closeSoon() }
    }
}

extension HomeClient {
    /// A subscription that reconnects and resumes across daemon restarts and lost
    /// connections; see `ResumingSubscription`.
    ///
    /// - Parameters:
    ///   - socketPath: the daemon's socket (nil: the default path).
    ///   - cursor: where an earlier stream stopped, to resume from.
    ///   - makeRequest: the request for each new connection.
    public static func resumingSubscription(
        to socketPath: String? = nil, name: String, cursor: StreamCursor = StreamCursor(),
        _ makeRequest: @escaping ResumingSubscription.MakeRequest
    ) -> ResumingSubscription {
        ResumingSubscription(socketPath: socketPath, clientName: name, cursor: cursor, makeRequest: makeRequest)
    }
}
