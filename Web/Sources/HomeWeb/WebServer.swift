internal import Foundation
internal import HTTPTypes
internal import HomeClient
public import HomeModel
internal import HomeWire
public import Hummingbird
internal import HummingbirdCore
internal import HummingbirdHTTP2
internal import HummingbirdTLS
public import Logging
internal import NIOCore
internal import NIOSSL
internal import Prometheus
internal import Synchronization

/// homed-web: the home in a browser. A client of homed on its socket, as the bridges
/// are; it serves the page, the home's state as JSON, each page's events as
/// server-sent events, writes and scenes, history and `/metrics`.
public struct WebServer: Sendable {
    public let configuration: WebConfiguration
    let link: HomedLink
    let sessions: SessionStore
    let metrics: WebMetrics
    let limits: Limits
    let logger: Logger
    let catalog: CatalogCache

    static let sessionCookie = "homed_session"

    public init(configuration: WebConfiguration, localRole: Role?, logger: Logger) {
        self.configuration = configuration
        self.link = HomedLink(socketPath: configuration.socketPath)
        self.sessions = SessionStore(
            users: configuration.users, identities: configuration.identities, localRole: localRole)
        self.metrics = WebMetrics()
        self.limits = Limits(maxRequests: configuration.maxRequests, maxStreams: configuration.maxStreams)
        self.logger = logger
        self.catalog = CatalogCache()
    }

    /// The Hummingbird application, ready to run.
    public func application() throws -> some ApplicationProtocol {
        let router = Router()
        router.middlewares.add(LimitMiddleware(limits: limits, metrics: metrics))
        addRoutes(to: router)
        let address: BindAddress
        switch configuration.listen {
        case .tcp(let host, let port): address = .hostname(host, port: port)
        case .unix(let path): address = .unixDomainSocket(path: path)
        }
        let appConfiguration = ApplicationConfiguration(
            address: address, serverName: "homed-web",
            // A bound on sockets, past the request limit: beyond it the kernel's backlog
            // holds them, and the limit's 503 says why to those let in.
            availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxRequests * 2))
        let server: HTTPServerBuilder
        if let certificate = configuration.certificatePath, let key = configuration.keyPath {
            let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
            let tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            // HTTP/2 when the browser offers it (ALPN), else HTTP/1.1: a browser holds at
            // most six HTTP/1.1 connections to one server, so a seventh open page's event
            // stream would wait; over HTTP/2 they share one connection.
            server = try .http2Upgrade(tlsConfiguration: tls)
        } else {
            server = .http1()
        }
        return Application(router: router, server: server, configuration: appConfiguration, logger: logger)
    }

    // MARK: Who is asking

    /// The request's session: its cookie's, else the local one when local requests
    /// need no login and this one is local (a Host header naming this machine, so that
    /// a page elsewhere cannot reach us through a name that resolves here).
    func session(for request: Request) -> Session? {
        if let token = request.cookies[Self.sessionCookie]?.value, let session = sessions.session(token: token) {
            return session
        }
        guard let local = sessions.local, configuration.listen.isLocal else { return nil }
        if case .unix = configuration.listen { return local }
        let name = Self.hostName(request.head.authority ?? "")
        return name == "localhost" || name == "::1" || name.hasPrefix("127.") ? local : nil
    }

    /// "127.0.0.1:8080" → "127.0.0.1", "[::1]:8080" → "::1".
    static func hostName(_ authority: String) -> String {
        if authority.hasPrefix("[") { return String(authority.dropFirst().prefix { $0 != "]" }) }
        return String(authority.split(separator: ":").first ?? "")
    }

    func requireSession(_ request: Request) throws -> Session {
        guard let session = session(for: request) else { throw WebError.loginNeeded }
        return session
    }

    /// A write's session: logged in or local, with the CSRF token the page was given,
    /// from this origin.
    func requireWriter(_ request: Request) throws -> Session {
        let session = try requireSession(request)
        guard let token = request.headers[HTTPField.Name("X-CSRF-Token")!], token == session.csrfToken else {
            throw WebError(
                .forbidden, code: "PERMISSION_DENIED",
                "a write needs the X-CSRF-Token header the page was given (GET /api/home's \"csrf\")")
        }
        if let origin = request.headers[.origin], let authority = request.head.authority,
            URL(string: origin)?.host.map({ $0.trimmingCharacters(in: ["[", "]"]) }) != Self.hostName(authority)
        {
            throw WebError(.forbidden, code: "PERMISSION_DENIED", "a write from another origin (\(origin)) is refused")
        }
        return session
    }

    // MARK: Routes

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/") { request, _ in
            let page = session(for: request) == nil ? Assets.loginHTML(message: "") : Assets.indexHTML
            return Self.asset(page, type: "text/html; charset=utf-8")
        }
        router.get("/app.js") { _, _ in Self.asset(Assets.appJS, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Self.asset(Assets.appCSS, type: "text/css; charset=utf-8") }
        router.post("/login") { request, context in try await logIn(request, context: context) }
        router.post("/logout") { request, _ in
            if let token = request.cookies[Self.sessionCookie]?.value { sessions.logOut(token: token) }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(Self.cookie(value: "", maxAge: 0, secure: configuration.tls))
            return response
        }
        router.get("/api/home") { request, _ in try await homeState(request) }
        router.get("/api/events") { request, _ in try eventStream(request) }
        router.post("/api/write") { request, context in try await write(request, context: context) }
        router.post("/api/scene") { request, context in try await runScene(request, context: context) }
        router.get("/api/history") { request, _ in try await history(request) }
        router.get("/metrics") { request, _ in
            let session = try requireSession(request)
            let text = await metrics.render(link: link, identity: session.identity)
            return Self.asset(text, type: "text/plain; version=0.0.4; charset=utf-8")
        }
        // Anything else: a 404 that says what was asked for, as JSON like every error.
        router.on("**", method: .get) { request, _ -> Response in throw WebError.notFound(request.uri.path) }
        router.on("**", method: .post) { request, _ -> Response in throw WebError.notFound(request.uri.path) }
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: type, .cacheControl: "no-cache",
                // The page loads nothing from anywhere else, and nothing may frame it.
                .contentSecurityPolicy: "default-src 'self'; frame-ancestors 'none'",
                HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: value.serialized() + "\n")))
    }

    static func cookie(value: String, maxAge: Int, secure: Bool) -> Cookie {
        Cookie(
            name: sessionCookie, value: value, maxAge: maxAge, path: "/", secure: secure, httpOnly: true,
            sameSite: .strict)
    }

    /// The body, at most `maxBodyBytes` (more is 413, said so).
    func body(_ request: Request) async throws -> [UInt8] {
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: configuration.maxBodyBytes)
            return Array(buffer.readableBytesView)
        } catch {
            throw WebError(
                .contentTooLarge, code: "RESOURCE_EXHAUSTED",
                "the request body is larger than \(configuration.maxBodyBytes) bytes")
        }
    }

    func logIn(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let bytes = try await body(request)
        let form = URLComponents(
            string: "?" + String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "+", with: " "))
        func field(_ name: String) -> String { form?.queryItems?.first { $0.name == name }?.value ?? "" }
        guard let (token, session) = sessions.logIn(name: field("name"), password: field("password")) else {
            metrics.loginFailures.increment()
            logger.notice("login refused", metadata: ["user": "\(field("name"))"])
            return Self.asset(Assets.loginHTML(message: "Wrong name or password."), type: "text/html; charset=utf-8")
                .withStatus(.unauthorized)
        }
        metrics.logins.increment()
        logger.info("logged in", metadata: ["user": "\(session.user)", "role": "\(session.role.name)"])
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(Self.cookie(value: token, maxAge: 7 * 24 * 3600, secure: configuration.tls))
        return response
    }

    func homeState(_ request: Request) async throws -> Response {
        let session = try requireSession(request)
        do {
            let (home, names, providers) = try await link.call(as: session.identity) {
                client throws(HomeError) -> (GetHomeResponse, ValueNameTable, [ProviderInfo]) in
                let names = try await catalog.names(client)
                return (try await client.getHome(), names, try await client.listProviders())
            }
            return Self.json(HomeJSON.state(home, names: names, session: session, providers: providers))
        } catch {
            throw WebError(error)
        }
    }

    func eventStream(_ request: Request) throws -> Response {
        let session = try requireSession(request)
        let query = request.uri.queryParameters
        // The browser's own Last-Event-ID (it reconnected) wins over the page's `since`.
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!]
        let sinceText = lastEventID ?? query["since"].map(String.init)
        var since: UInt64?
        if let sinceText, !sinceText.isEmpty {
            guard let number = UInt64(sinceText) else {
                throw WebError(.badRequest, code: "INVALID_ARGUMENT", "\"\(sinceText)\" is not a sequence number")
            }
            since = number
        }
        logger.debug(
            "event stream",
            metadata: ["since": "\(since.map(String.init) ?? "none")", "last-event-id": "\(lastEventID ?? "")"])
        guard limits.openStream() else {
            metrics.refused.increment()
            throw WebError(
                .serviceUnavailable, code: "UNAVAILABLE",
                "homed-web has \(configuration.maxStreams) event streams open, its limit; try again later")
        }
        metrics.streamsOpen.increment()
        let stream = EventStream(
            link: link, metrics: metrics, logger: logger, identity: session.identity,
            journalID: query["journal"].map(String.init) ?? "", since: since)
        let limits = self.limits
        let metrics = self.metrics
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: .init { writer in
                defer {
                    limits.closeStream()
                    metrics.streamsOpen.decrement()
                }
                try await stream.run(&writer)
                try await writer.finish(nil)
            })
    }

    struct WriteBody: Decodable {
        var id: UInt64
        var value: RequestValue
    }
    struct SceneBody: Decodable { var id: UInt64 }

    /// A value to homed, answered with homed's answer: the seq it took effect at
    /// (after the provider confirmed it, for a provider's characteristic), or homed's
    /// refusal with its message.
    func write(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let session = try requireWriter(request)
        let body = try JSONDecoder.request(WriteBody.self, from: try await body(request))
        try refuseIfHomedCannot(session, "write values")
        metrics.writes.increment()
        do {
            let result = try await link.call(as: session.identity, retry: false) { client throws(HomeError) in
                try await client.write(body.value.value, to: body.id)
            }
            return Self.json(.object([("id", .uint(body.id)), ("seq", .uint(result.seq))]))
        } catch {
            metrics.writeErrors.increment()
            throw WebError(error)
        }
    }

    func runScene(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let session = try requireWriter(request)
        let body = try JSONDecoder.request(SceneBody.self, from: try await body(request))
        try refuseIfHomedCannot(session, "run scenes")
        metrics.writes.increment()
        do {
            let response = try await link.call(as: session.identity, retry: false) { client throws(HomeError) in
                try await client.executeActionSet(body.id)
            }
            let failed = response.results.compactMap(\.error)
            return Self.json(
                .object([
                    ("id", .uint(body.id)), ("seq", .uint(response.seq)),
                    (
                        "failed",
                        .array(
                            failed.map { .object([("code", .string($0.code.name)), ("message", .string($0.message))]) })
                    ),
                ]))
        } catch {
            metrics.writeErrors.increment()
            throw WebError(error)
        }
    }

    /// A viewer whose session reaches homed on homed-web's own connection (no
    /// `--connect-as viewer=…`) would write with homed-web's role: homed-web refuses it
    /// itself. With a viewer identity, the write goes to homed, which refuses it.
    func refuseIfHomedCannot(_ session: Session, _ what: String) throws {
        guard session.role < .user, session.identity == nil else { return }
        throw WebError(
            .forbidden, code: "PERMISSION_DENIED",
            "\(session.user) has the \(session.role.name) role, which may not \(what) (refused by homed-web: no "
                + "--connect-as viewer=USER is configured, so homed cannot refuse it itself)")
    }

    /// Rollups of a numeric characteristic over the last `hours`: homed keeps them by
    /// 5 minutes and by the hour; the finer for a day or less.
    func history(_ request: Request) async throws -> Response {
        let session = try requireSession(request)
        let query = request.uri.queryParameters
        guard let idText = query["id"], let id = UInt64(String(idText)) else {
            throw WebError(.badRequest, code: "INVALID_ARGUMENT", "history needs ?id=CHARACTERISTIC_ID")
        }
        let hours = query["hours"].flatMap { Double(String($0)) } ?? 24
        guard hours > 0, hours <= 24 * 366 else {
            throw WebError(.badRequest, code: "INVALID_ARGUMENT", "hours must be above 0 and at most a year")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let span = Int64(hours * 3_600_000)
        let width: Int64 = hours <= 24 ? 300_000 : 3_600_000
        var filter = SubscriptionFilter()
        filter.characteristicIDs = [id]
        do {
            let response = try await link.call(as: session.identity) { client throws(HomeError) in
                try await client.readHistory(
                    ReadHistoryRequest(filter: filter, sinceMs: now - span, untilMs: now, rollupMs: width))
            }
            let rollups: [JSONValue] = response.rollups.map { point in
                .object([
                    ("startMs", .int(point.startMs)), ("count", .int(point.count)), ("min", .double(point.min)),
                    ("max", .double(point.max)),
                    ("mean", .double(point.count > 0 ? point.sum / Double(point.count) : 0)),
                    ("last", .double(point.last)),
                ])
            }
            return Self.json(
                .object([
                    ("id", .uint(id)), ("sinceMs", .int(now - span)), ("untilMs", .int(now)),
                    ("widthMs", .int(width)), ("rollups", .array(rollups)),
                ]))
        } catch {
            throw WebError(error)
        }
    }
}

extension Response {
    func withStatus(_ status: HTTPResponse.Status) -> Response {
        var response = self
        response.status = status
        return response
    }
}

/// The catalog's names of enumerated values, read from homed once (ListTypes).
final class CatalogCache: Sendable {
    private let names = Mutex<ValueNameTable?>(nil)

    func names(_ client: HomeClient) async throws(HomeError) -> ValueNameTable {
        if let names = names.withLock({ $0 }) { return names }
        let read = ValueNameTable(types: try await client.listTypes().characteristicTypes)
        names.withLock { $0 = read }
        return read
    }
}

/// Requests and event streams in progress, bounded: one more than the limit is
/// answered 503 at once, so a flood costs homed-web a counter and homed nothing.
final class Limits: Sendable {
    let maxRequests: Int
    let maxStreams: Int
    private let requests = Atomic<Int>(0)
    private let streams = Atomic<Int>(0)

    init(maxRequests: Int, maxStreams: Int) {
        self.maxRequests = maxRequests
        self.maxStreams = maxStreams
    }

    func openRequest() -> Bool { open(requests, limit: maxRequests) }
    func closeRequest() { requests.subtract(1, ordering: .relaxed) }
    func openStream() -> Bool { open(streams, limit: maxStreams) }
    func closeStream() { streams.subtract(1, ordering: .relaxed) }

    private func open(_ counter: borrowing Atomic<Int>, limit: Int) -> Bool {
        if counter.add(1, ordering: .relaxed).newValue > limit {
            counter.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }
}

struct LimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let limits: Limits
    let metrics: WebMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        metrics.requests.increment()
        guard limits.openRequest() else {
            metrics.refused.increment()
            throw WebError(
                .serviceUnavailable, code: "UNAVAILABLE",
                "homed-web is serving \(limits.maxRequests) requests at once, its limit; try again later")
        }
        // Until the response's head is ready: an event stream, which lasts, counts
        // against the stream limit instead.
        defer { limits.closeRequest() }
        do {
            return try await next(request, context)
        } catch let error as HomeError {
            // Whatever homed (or a check worded as homed words them) refused: its status and message.
            throw WebError(error)
        }
    }
}
