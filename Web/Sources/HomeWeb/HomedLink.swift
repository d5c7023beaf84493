internal import CWebShim
public import HomeClient
public import HomeModel
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who a connection to homed is made as: homed gives a connection its role from the
/// peer credentials of the process that connected, and nothing sent on the wire can
/// lower it. So a session whose user has a lesser role than homed-web's own reaches
/// homed through a connection made as a Unix user that homed gives that role
/// (`--connect-as viewer=homed-viewer`), and homed refuses what that role may not do,
/// whatever homed-web lets through.
public struct ConnectIdentity: Sendable, Hashable, CustomStringConvertible {
    public var uid: UInt32
    public var gid: UInt32
    public var name: String

    public init(uid: UInt32, gid: UInt32, name: String) {
        self.uid = uid
        self.gid = gid
        self.name = name
    }

    /// A user by name or number, from the system's user database.
    public static func lookUp(_ user: String) -> ConnectIdentity? {
        if let uid = UInt32(user) {
            guard let entry = getpwuid(uid) else { return ConnectIdentity(uid: uid, gid: uid, name: user) }
            return ConnectIdentity(uid: uid, gid: entry.pointee.pw_gid, name: String(cString: entry.pointee.pw_name))
        }
        guard let entry = getpwnam(user) else { return nil }
        return ConnectIdentity(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid, name: user)
    }

    public var description: String { "\(name) (uid \(uid))" }
}

/// homed-web's connections to homed: one shared connection per identity for calls
/// (homed-web's own, or a role's `--connect-as` user), reconnected when homed comes
/// back; and a new connection for each page's event stream, so one page's stream can
/// never hold up another's (homed bounds each subscriber's queue).
public final class HomedLink: Sendable {
    public let socketPath: String
    private let shared = Mutex<[ConnectIdentity?: HomeClient]>([:])

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// A new connection: as `identity`, or as homed-web itself (nil).
    public func connect(as identity: ConnectIdentity?, name: String) async throws(HomeError) -> HomeClient {
        guard let identity else {
            return try await HomeClient.connect(to: socketPath, name: name)
        }
        let fd = web_connect_unix_as(socketPath, Int(identity.uid), Int(identity.gid))
        if fd < 0 {
            let reason = String(cString: strerror(-fd))
            if -fd == EPERM || -fd == EACCES {
                throw HomeError(
                    .permissionDenied,
                    "cannot connect to homed on \(socketPath) as \(identity): \(reason) (homed-web needs CAP_SETUID "
                        + "and CAP_SETGID to connect as another user, and that user must be able to open the socket)")
            }
            throw HomeError(
                .unavailable,
                "cannot reach homed: no daemon is listening on \(socketPath) (\(reason)); is homed running?")
        }
        return try await HomeClient.connect(connectedSocket: fd, name: name)
    }

    /// The shared connection for `identity`'s calls, connecting (again) when there is none.
    public func client(as identity: ConnectIdentity?) async throws(HomeError) -> HomeClient {
        if let client = shared.withLock({ $0[identity] }) { return client }
        let client = try await connect(as: identity, name: identity.map { "homed-web (as \($0.name))" } ?? "homed-web")
        let kept = shared.withLock { clients in
            if let existing = clients[identity] { return existing }
            clients[identity] = client
            return client
        }
        if kept !== client { await client.close() }
        return kept
    }

    /// A call on `identity`'s shared connection. When homed went away since (a
    /// restart), the connection is dropped; a read (`retry`) is made once more on a
    /// new one, a write is not (homed may have applied it before it went).
    public func call<Result: Sendable>(
        as identity: ConnectIdentity?, retry: Bool = true, _ body: (HomeClient) async throws(HomeError) -> Result
    ) async throws(HomeError) -> Result {
        let client = try await client(as: identity)
        do {
            return try await body(client)
        } catch  where error.code == .unavailable {
            forget(client, identity: identity)
            guard retry else { throw error }
            return try await body(try await self.client(as: identity))
        }
    }

    private func forget(_ client: HomeClient, identity: ConnectIdentity?) {
        shared.withLock { clients in
            if clients[identity] === client { clients[identity] = nil }
        }
        Task { await client.close() }
    }
}
