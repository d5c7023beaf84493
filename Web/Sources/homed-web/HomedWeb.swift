internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWeb
internal import HomeWire
internal import Hummingbird
internal import HummingbirdBcrypt
internal import Logging

@main
struct HomedWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homed-web",
        abstract: "The home in a browser: a live page of homed's rooms and accessories.",
        discussion: """
            A client of homed on its socket. Serves the page, the home's state, each page's \
            changes as server-sent events (their ids are homed's sequence numbers, so a page \
            that reconnects gets exactly what it missed), writes, scenes, history and /metrics.
            """,
        subcommands: [Serve.self, HashPassword.self],
        defaultSubcommand: Serve.self)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the page (the default).")

    @Option(help: "homed's socket (default: HOMED_SOCKET, else homed's default path).")
    var socket: String?

    @Option(
        help: ArgumentHelp(
            "Where to listen: HOST:PORT, or unix:PATH for a reverse proxy (default 127.0.0.1:8080).",
            valueName: "address"))
    var listen = "127.0.0.1:8080"

    @Option(
        help: ArgumentHelp(
            "Users who log in: a file of lines \"name role bcrypt-hash\" (homed-web hash-password makes the hash).",
            valueName: "path"))
    var usersFile: String?

    @Option(
        help: ArgumentHelp(
            "Who needs to log in: remote (default: requests to 127.0.0.1 or the Unix socket act as the user running "
                + "homed-web), or always.",
            valueName: "when"))
    var login = "remote"

    @Option(
        help: ArgumentHelp(
            "Connect a role's sessions to homed as this Unix user, whom homed gives that role: viewer=homed-viewer "
                + "(repeatable; needs CAP_SETUID and CAP_SETGID). Without it a role's sessions use homed-web's own "
                + "connection, and homed-web refuses a viewer's writes itself.",
            valueName: "role=user"))
    var connectAs: [String] = []

    @Option(help: ArgumentHelp("TLS certificate chain (PEM); with --tls-key, serve HTTPS.", valueName: "path"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("TLS private key (PEM).", valueName: "path"))
    var tlsKey: String?

    @Option(help: "Event streams (open pages) at once; one more is answered 503 (default 256).")
    var maxStreams = 256

    @Option(help: "Requests in progress at once; one more is answered 503 (default 512).")
    var maxRequests = 512

    @Option(help: "Log level: trace, debug, info (default), notice, warning, error.")
    var logLevel = "info"

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        guard ["remote", "always"].contains(login) else { throw ValidationError("--login is remote or always") }
        guard maxStreams > 0, maxRequests > 0 else { throw ValidationError("the limits must be above 0") }
    }

    func run() async throws {
        var logger = Logger(label: "homed-web")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var configuration = WebConfiguration(socketPath: socket ?? HomeClient.defaultSocketPath())
        configuration.listen = try Self.parseListen(listen)
        configuration.certificatePath = tlsCertificate
        configuration.keyPath = tlsKey
        configuration.maxStreams = maxStreams
        configuration.maxRequests = maxRequests
        if let usersFile {
            do {
                configuration.users = try UsersFile.load(path: usersFile)
            } catch {
                throw ValidationError(error.message)
            }
        }
        for entry in connectAs {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let role = Role(name: parts[0]) else {
                throw ValidationError("--connect-as \(entry): write ROLE=USER, ROLE viewer, user or admin")
            }
            guard let identity = ConnectIdentity.lookUp(parts[1]) else {
                throw ValidationError("--connect-as \(entry): no user \(parts[1])")
            }
            configuration.identities[role] = identity
        }
        if configuration.identities[.viewer] == nil, configuration.users.values.contains(where: { $0.role == .viewer })
        {
            logger.warning(
                """
                viewers' sessions reach homed on homed-web's own connection: homed-web refuses their writes itself, \
                homed cannot (give --connect-as viewer=USER, a user homed gives the viewer role)
                """)
        }
        // The person at this machine acts as the user running homed-web: with the role
        // homed gives that user (asked now; user when homed is not up yet).
        var localRole: Role?
        if login == "remote", configuration.listen.isLocal {
            do {
                let client = try await HomeClient.connect(to: configuration.socketPath, name: "homed-web")
                localRole = try await client.status().callerRole ?? .viewer
                await client.close()
            } catch {
                logger.notice(
                    "homed is not answering yet; local requests get the user role", metadata: ["error": "\(error)"])
                localRole = .user
            }
        }
        try await Self.checkIdentities(configuration, logger: logger)
        let server = WebServer(configuration: configuration, localRole: localRole, logger: logger)
        logger.info(
            "homed-web serving",
            metadata: [
                "listen": "\(listen)", "homed": "\(configuration.socketPath)",
                "local": "\(localRole.map { "no login, \($0.name)" } ?? "login required")",
                "tls": "\(configuration.tls)",
            ])
        try await server.application().runService()
    }

    /// Each `--connect-as` user must have, in homed, no more than its role: a viewer
    /// identity that homed takes for a user would let viewers write. Checked when homed
    /// answers at start (it is looked up again by homed at every call).
    static func checkIdentities(_ configuration: WebConfiguration, logger: Logger) async throws {
        let link = HomedLink(socketPath: configuration.socketPath)
        for (role, identity) in configuration.identities {
            let given: Role?
            do {
                let client = try await link.connect(as: identity, name: "homed-web (check)")
                given = try await client.status().callerRole
                await client.close()
            } catch  where error.code == .unavailable {
                logger.notice("homed is not answering yet; --connect-as \(role.name) is not checked")
                continue
            } catch {
                throw ValidationError("--connect-as \(role.name)=\(identity.name): \(error.message)")
            }
            if let given, given > role {
                throw ValidationError(
                    "--connect-as \(role.name)=\(identity.name): homed gives \(identity) the \(given.name) role, "
                        + "more than \(role.name); give it the \(role.name) role in homed (--\(role.name)s, or roles in "
                        + "homed.yaml)")
            }
            logger.info(
                "\(role.name) sessions connect to homed as \(identity), whom homed gives the \(given?.name ?? "no") role"
            )
        }
    }

    static func parseListen(_ text: String) throws -> WebConfiguration.Listen {
        if text.hasPrefix("unix:") { return .unix(path: String(text.dropFirst(5))) }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ValidationError("--listen \(text): write HOST:PORT (127.0.0.1:8080) or unix:PATH")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return .tcp(host: host, port: port)
    }
}

struct HashPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a password on standard input; print its bcrypt hash for the users file.")

    @Option(help: "bcrypt's cost (default 12).")
    var cost: UInt8 = 12

    func run() throws {
        guard let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw ValidationError("no password on standard input")
        }
        print(Bcrypt.hash(password, cost: cost))
    }
}
