public import HomeModel
@_spi(Wire) public import HomeWire
internal import NIOCore

// The provider calls, one to one with the schema's. `HomeProvider` builds a whole
// provider on them; these are for a provider that wants the wire as it is.
extension HomeClient {
    /// Opens the command stream of provider `providerID` on this connection. Its
    /// first command is `.opened`; every other one must be answered with
    /// `answer(_:)` within its `timeoutMs`. Ending the iteration (or its task)
    /// cancels the stream, which ends the provider's session.
    public func openProvider(_ providerID: String) -> ProviderCommands {
        let callID = makeCallID()
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        let open = CallOpen(
            method: HomeMethods.openProvider.name, request: OpenProviderRequest(providerID: providerID).encoded())
        let handler = self.handler
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                handler.eventLoop.execute { handler.value.cancel(callID: callID) }
            }
        }
        handler.eventLoop.execute {
            handler.value.startRawStream(callID: callID, open: open, continuation: continuation)
        }
        return ProviderCommands(base: stream)
    }

    public func registerAccessories(_ request: RegisterAccessoriesRequest) async throws(HomeError)
        -> RegisterAccessoriesResponse
    {
        try await call(HomeMethods.registerAccessories, request)
    }

    /// Answers a command; false when the daemon no longer waited for it (dropped).
    @discardableResult
    public func answer(_ answer: CommandAnswer) async throws(HomeError) -> Bool {
        try await call(HomeMethods.answerCommand, answer).accepted
    }

    public func report(_ report: ValueReport) async throws(HomeError) -> ValueReportResponse {
        try await call(HomeMethods.reportValues, report)
    }

    public func listProviders() async throws(HomeError) -> [ProviderInfo] {
        try await call(HomeMethods.listProviders, ListProvidersRequest()).providers
    }
}

/// The commands of a provider's stream, decoded.
public struct ProviderCommands: AsyncSequence, Sendable {
    public typealias Element = ProviderCommand
    let base: AsyncThrowingStream<[UInt8], any Error>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator

        public mutating func next() async throws -> ProviderCommand? {
            guard let payload = try await base.next() else { return nil }
            return try ProviderCommand(wire: payload)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}
