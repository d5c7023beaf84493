internal import Foundation
public import HomeModel
internal import HummingbirdBcrypt
internal import Synchronization

/// Who is asking, as homed-web knows them: a user from the users file who logged in,
/// or the person at this machine when homed-web trusts local requests.
public struct Session: Sendable {
    public var user: String
    public var role: Role
    /// Who homed-web connects to homed as for this session: the role's `--connect-as`
    /// user, or homed-web itself (nil).
    public var identity: ConnectIdentity?
    /// Every write must carry it (`X-CSRF-Token`): another site can make the browser
    /// send the session cookie, but cannot read this token from our pages.
    public var csrfToken: String
    /// Logged in with a password (false: trusted as local).
    public var loggedIn: Bool
    var expiresAt: ContinuousClock.Instant
}

/// One user of the users file: `name role bcrypt-hash` per line.
public struct WebUser: Sendable, Hashable {
    public var name: String
    public var role: Role
    public var passwordHash: String
}

/// The users file: one user a line, `name role hash`, the hash bcrypt's
/// (`homed-web hash-password` makes one); `#` starts a comment.
public enum UsersFile {
    public static func load(path: String) throws(HomeError) -> [String: WebUser] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw HomeError(.notFound, "cannot read the users file \(path): \(error.localizedDescription)")
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(HomeError) -> [String: WebUser] {
        var users: [String: WebUser] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: \.isWhitespace).map(String.init)
            if fields.isEmpty { continue }
            guard fields.count == 3 else {
                throw HomeError(
                    .invalidArgument,
                    "\(path):\(index + 1): a user is \"name role bcrypt-hash\", found \(fields.count) fields")
            }
            guard let role = Role(name: fields[1]) else {
                throw HomeError(
                    .invalidArgument, "\(path):\(index + 1): \"\(fields[1])\" is not a role (viewer, user or admin)")
            }
            guard fields[2].hasPrefix("$2") else {
                throw HomeError(
                    .invalidArgument,
                    "\(path):\(index + 1): the password of \(fields[0]) is not a bcrypt hash (homed-web hash-password makes one)"
                )
            }
            users[fields[0]] = WebUser(name: fields[0], role: role, passwordHash: fields[2])
        }
        return users
    }
}

/// Sessions by their cookie's token, in memory: a restart of homed-web logs everyone
/// out, which is the safe way round for a household's page.
public final class SessionStore: Sendable {
    private let users: [String: WebUser]
    private let sessions = Mutex<[String: Session]>([:])
    private let lifetime: Duration
    /// The session of the person at this machine, when local requests are trusted.
    public let local: Session?

    private let identities: [Role: ConnectIdentity]

    public init(
        users: [String: WebUser], identities: [Role: ConnectIdentity], localRole: Role?,
        lifetime: Duration = .seconds(7 * 24 * 3600)
    ) {
        self.users = users
        self.identities = identities
        self.lifetime = lifetime
        // The person at this machine acts as the user running homed-web: its own
        // connection, with whatever role homed gives that user.
        self.local = localRole.map {
            Session(
                user: "local", role: $0, identity: nil, csrfToken: Self.token(), loggedIn: false,
                expiresAt: .now + .seconds(100 * 365 * 24 * 3600))
        }
    }

    /// Checks the password (bcrypt, in constant time for the hash) and opens a session;
    /// nil when the name or the password is wrong (one answer for both, so that names
    /// cannot be probed).
    public func logIn(name: String, password: String) -> (token: String, session: Session)? {
        // An unknown name still costs a bcrypt check, so that timing does not tell.
        let user = users[name]
        let hash = user?.passwordHash ?? Self.decoyHash
        guard Bcrypt.verify(password, hash: hash), let user else { return nil }
        let token = Self.token()
        let session = Session(
            user: user.name, role: user.role, identity: identities[user.role], csrfToken: Self.token(), loggedIn: true,
            expiresAt: .now + lifetime)
        sessions.withLock { sessions in
            let now = ContinuousClock.now
            sessions = sessions.filter { $0.value.expiresAt > now }
            sessions[token] = session
        }
        return (token, session)
    }

    public func session(token: String) -> Session? {
        sessions.withLock { sessions in
            guard let session = sessions[token] else { return nil }
            guard session.expiresAt > .now else {
                sessions[token] = nil
                return nil
            }
            return session
        }
    }

    public func logOut(token: String) {
        _ = sessions.withLock { $0.removeValue(forKey: token) }
    }

    /// 32 random bytes as hex: session tokens and CSRF tokens.
    static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static let decoyHash = Bcrypt.hash("no such user", cost: 10)
}
