internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// Maps method names to handlers, each registered through its typed method
/// descriptor (`HomeMethods`), so that a handler takes exactly its method's request
/// and returns exactly its response.
struct HomeRouter: Sendable {
    /// A handler with the types erased: bytes in, an encoded response out.
    enum Route: Sendable {
        /// Answers at once, on the connection's event loop.
        case unary(@Sendable (_ request: ByteBuffer, CallContext) throws(HomeError) -> ByteBuffer)
        /// Answers later, on the connection's event loop.
        case deferredUnary(@Sendable (_ request: ByteBuffer, CallContext) -> EventLoopFuture<ByteBuffer>)
        /// Answers later, like `deferredUnary`; calls of the method that arrive
        /// together on one connection are handed over together, in order, so that
        /// the handler can make them one commit (see `ConnectionHandler.runWaitingGroup`).
        case groupedUnary(@Sendable (_ calls: [GroupedCall]) -> [EventLoopFuture<ByteBuffer>])
        /// Opens a stream that sends messages through the call's writer until it ends.
        case serverStreaming(
            @Sendable (_ request: ByteBuffer, CallContext, CallWriter) throws(HomeError) -> any ServerStreamCall)
    }

    /// One call of a group: its request's bytes and its context.
    struct GroupedCall {
        let request: ByteBuffer
        let context: CallContext
    }

    /// A method's handler and the role a caller needs to have it run.
    struct Entry: Sendable {
        let role: Role
        let route: Route
    }

    private(set) var routes: [String: Entry] = [:]

    /// Every method with a handler, sorted: for error messages and the schema test.
    var methodNames: [String] { routes.keys.sorted() }

    func route(for method: String) -> Entry? {
        routes[method]
    }

    /// Registers a unary handler that answers at once.
    mutating func register<Request, Response>(
        _ method: UnaryMethod<Request, Response>, role: Role,
        _ handler: @escaping @Sendable (Request, CallContext) throws(HomeError) -> Response
    ) {
        let route = Route.unary { bytes, context throws(HomeError) in
            let response = try handler(try Request(wire: bytes), context)
            var buffer = ByteBufferAllocator().buffer(capacity: 64)
            response.encode(into: &buffer)
            return buffer
        }
        routes[method.name] = Entry(role: role, route: route)
    }

    /// Registers a unary handler that answers through a future on the call's event loop.
    mutating func register<Request, Response>(
        _ method: UnaryMethod<Request, Response>, role: Role,
        deferred handler: @escaping @Sendable (Request, CallContext) -> EventLoopFuture<Response>
    ) {
        let route = Route.deferredUnary { bytes, context in
            let request: Request
            do throws(HomeError) {
                request = try Request(wire: bytes)
            } catch {
                return context.eventLoop.makeFailedFuture(error)
            }
            return handler(request, context).map { response in
                var buffer = ByteBuffer()
                response.encode(into: &buffer)
                return buffer
            }
        }
        routes[method.name] = Entry(role: role, route: route)
    }

    /// Registers a unary handler that is given the method's calls that arrived
    /// together, in order, and answers each through a future on its event loop. A
    /// request that cannot be decoded is answered with its error and left out.
    mutating func register<Request, Response>(
        _ method: UnaryMethod<Request, Response>, role: Role,
        grouped handler: @escaping @Sendable ([(request: Request, context: CallContext)]) -> [EventLoopFuture<Response>]
    ) {
        let route = Route.groupedUnary { calls in
            var answers: [EventLoopFuture<ByteBuffer>?] = []
            var decoded: [(request: Request, context: CallContext)] = []
            var positions: [Int] = []
            answers.reserveCapacity(calls.count)
            for (position, call) in calls.enumerated() {
                do throws(HomeError) {
                    decoded.append((try Request(wire: call.request), call.context))
                    positions.append(position)
                    answers.append(nil)
                } catch {
                    answers.append(call.context.eventLoop.makeFailedFuture(error))
                }
            }
            let handled = handler(decoded)
            precondition(handled.count == decoded.count, "a grouped handler answers every call it is given")
            for (position, answer) in zip(positions, handled) {
                answers[position] = answer.map { response in
                    var buffer = ByteBuffer()
                    response.encode(into: &buffer)
                    return buffer
                }
            }
            return answers.map { $0! }
        }
        routes[method.name] = Entry(role: role, route: route)
    }

    /// Registers a server-streaming handler: it starts the stream, which writes
    /// through the call's writer, and returns it.
    mutating func register<Request, Response>(
        _ method: ServerStreamingMethod<Request, Response>, role: Role,
        _ handler: @escaping @Sendable (Request, CallContext, CallWriter) throws(HomeError) -> any ServerStreamCall
    ) {
        routes[method.name] = Entry(
            role: role,
            route: .serverStreaming { bytes, context, writer throws(HomeError) in
                try handler(try Request(wire: bytes), context, writer)
            })
    }
}
