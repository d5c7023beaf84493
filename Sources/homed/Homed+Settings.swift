internal import Foundation
internal import HomeConfig
internal import HomeModel
internal import HomeServer
internal import HomeSystemd
internal import Logging

#if canImport(Glibc)
    internal import Glibc
#endif

/// Everything homed runs with, from its flags over its configuration file over the
/// defaults: each value the first of the three that gives it.
struct DaemonSettings {
    var socket: String?
    var database: String?
    var valueFoldIntervalMs: Int
    var journalCapacity: Int
    /// How long the stored history keeps events; nil: no stored history.
    var history: HistoryRetention?
    var queueLimit: Int
    var providerTimeoutMs: Int
    var providerPingIntervalMs: Int
    var providerPingTimeoutMs: Int
    var providerStartupGraceMs: Int
    var logLevel: Logger.Level
    var logFormat: LogFormat
    var access: AccessSettings
    /// Whether a timer or sun trigger missed while homed was down fires once at start.
    var catchUpMissedTriggers: Bool
    /// Whether a trigger's end missed while homed was down is undone at start.
    var runMissedEnds: Bool
}

extension Homed {
    /// The configuration file: `--config` (which must exist), else the default if it
    /// exists: homed.yaml in $CONFIGURATION_DIRECTORY (systemd's, /etc/homed), else
    /// /etc/homed/homed.yaml as root, else $XDG_CONFIG_HOME/homed/homed.yaml
    /// (~/.config/homed/homed.yaml).
    func loadConfigFile(environment: [String: String]) throws(HomeError) -> ConfigFile? {
        let path: String
        if let config {
            path = config
        } else {
            path = Self.defaultConfigPath(environment: environment, uid: getuid())
            guard access(path, F_OK) == 0 else { return nil }
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = access(path, F_OK) == 0 ? "cannot be read" : "does not exist"
            throw HomeError(.notFound, "the configuration file \(path) \(reason)")
        }
        return try ConfigFile.parse(text, path: path)
    }

    static func defaultConfigPath(environment: [String: String], uid: uid_t) -> String {
        if let directory = environment["CONFIGURATION_DIRECTORY"]?.split(separator: ":").first,
            directory.hasPrefix("/")
        {
            return directory + "/homed.yaml"
        }
        if uid == 0 { return "/etc/homed/homed.yaml" }
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") { return base + "/homed/homed.yaml" }
        return (environment["HOME"] ?? "/") + "/.config/homed/homed.yaml"
    }

    /// The flags over the file over the defaults, each checked; errors name the flag
    /// or the file's line and key.
    func settings(file: ConfigFile?) throws(HomeError) -> DaemonSettings {
        func positive(
            _ flag: Int?, _ flagName: String, _ key: String, default value: Int, atMost limit: Int = .max,
            zeroAllowed: Bool = false
        ) throws(HomeError) -> Int {
            let (chosen, source) =
                flag.map { ($0, flagName) } ?? file?.integer(key).map { ($0, file!.source(key)) } ?? (value, "")
            guard chosen > 0 || (zeroAllowed && chosen == 0) else {
                throw HomeError(
                    .invalidArgument,
                    "\(source) must be \(zeroAllowed ? "0 or more" : "positive"), not \(chosen)")
            }
            guard chosen <= limit else {
                throw HomeError(.invalidArgument, "\(source) may be at most \(limit), not \(chosen)")
            }
            return chosen
        }
        func named<Value>(
            _ flag: String?, _ flagName: String, _ key: String, default value: Value,
            parse: (String) -> Value?, expected: String
        ) throws(HomeError) -> Value {
            let (text, source) =
                flag.map { ($0, flagName) } ?? file?.string(key).map { ($0, file!.source(key)) } ?? (nil, "")
            guard let text else { return value }
            guard let parsed = parse(text) else {
                throw HomeError(.invalidArgument, "\(source): unknown value '\(text)'; use \(expected)")
            }
            return parsed
        }
        return DaemonSettings(
            socket: socket ?? file?.string("socket.path"),
            database: db ?? file?.string("database.path"),
            valueFoldIntervalMs: try positive(
                valueFoldIntervalMs, "--value-fold-interval-ms", "database.fold_interval_ms", default: 500),
            journalCapacity: try positive(journalCapacity, "--journal-capacity", "journal.capacity", default: 100_000),
            history: try historySettings(file: file),
            queueLimit: try positive(
                queueLimit, "--queue-limit", "subscriptions.queue_limit", default: 1024,
                atMost: ServerConfiguration.defaultMaxQueueLimit),
            providerTimeoutMs: try positive(
                providerTimeoutMs, "--provider-timeout-ms", "providers.timeout_ms", default: 5_000),
            providerPingIntervalMs: try positive(
                providerPingIntervalMs, "--provider-ping-interval-ms", "providers.ping_interval_ms", default: 300),
            providerPingTimeoutMs: try positive(
                providerPingTimeoutMs, "--provider-ping-timeout-ms", "providers.ping_timeout_ms", default: 600),
            providerStartupGraceMs: try positive(
                providerStartupGraceMs, "--provider-startup-grace-ms", "providers.startup_grace_ms", default: 10_000,
                zeroAllowed: true),
            logLevel: try named(
                logLevel, "--log-level", "log.level", default: .info, parse: { Logger.Level(rawValue: $0) },
                expected: "trace, debug, info, notice, warning, error or critical"),
            logFormat: try named(
                logFormat, "--log-format", "log.format", default: .auto, parse: { LogFormat(rawValue: $0) },
                expected: "auto, human or journal"),
            access: try accessSettings(file: file),
            catchUpMissedTriggers: try named(
                missedTriggers, "--missed-triggers", "automation.missed_triggers", default: false,
                parse: { ["catch-up": true, "skip": false][$0] }, expected: "skip or catch-up"),
            runMissedEnds: try named(
                missedEnds, "--missed-ends", "automation.missed_ends", default: true,
                parse: { ["run": true, "skip": false][$0] }, expected: "run or skip"))
    }
}

extension Homed {
    /// `--history-retention` over `history.*`: nil when it is off.
    func historySettings(file: ConfigFile?) throws(HomeError) -> HistoryRetention? {
        let retention = historyRetention ?? file?.string("history.retention")
        if retention == "off" { return nil }
        do throws(HomeError) {
            return try HistoryRetention.parse(
                default: retention, audit: file?.string("history.audit_retention"),
                rollups: file?.string("history.rollup_retention"),
                keep: file?.list("history.keep") ?? [])
        } catch {
            let source = historyRetention != nil ? "--history-retention" : file.map { "\($0.path)" } ?? "history"
            throw HomeError(.invalidArgument, "\(source): \(error.message)")
        }
    }
}

/// What a reload changes in the running daemon: each is read at every use.
struct LiveSettings {
    let roles: RoleTable
    let limits: LiveLimits
    let logLevel: LiveLogLevel
}

extension Homed {
    /// Reads the configuration again (SIGHUP): applies the roles, limits and log
    /// level, logs every setting that changed, and which of them wait for the next
    /// start. A file that does not load leaves everything as it was, with an error
    /// in the log. Flags still win over the file, as at the start.
    func reload(from current: DaemonSettings, live: LiveSettings, logger: Logger) -> DaemonSettings {
        let next: DaemonSettings
        do throws(HomeError) {
            next = try settings(file: try loadConfigFile(environment: ProcessInfo.processInfo.environment))
        } catch {
            logger.error("reload refused; the configuration in force is kept", metadata: ["error": "\(error.message)"])
            return current
        }
        var changed: [String] = []
        var atRestart: [String] = []
        func compare<Value: Equatable>(_ name: String, _ old: Value, _ new: Value, live: Bool = false) {
            guard old != new else { return }
            (live ? { changed.append($0) } : { atRestart.append($0) })("\(name): \(old) → \(new)")
        }
        compare("roles", describe(current.access.roles), describe(next.access.roles), live: true)
        compare("socket", current.socket ?? "default", next.socket ?? "default")
        compare("socket mode", String(current.access.socketMode, radix: 8), String(next.access.socketMode, radix: 8))
        compare(
            "socket group", current.access.socketGroup.map(String.init) ?? "own",
            next.access.socketGroup.map(String.init) ?? "own")
        compare("database", current.database ?? "default", next.database ?? "default")
        compare("database.fold_interval_ms", current.valueFoldIntervalMs, next.valueFoldIntervalMs)
        compare("journal.capacity", current.journalCapacity, next.journalCapacity)
        compare("history", current.history.map(describe) ?? "off", next.history.map(describe) ?? "off")
        compare("subscriptions.queue_limit", current.queueLimit, next.queueLimit, live: true)
        compare("providers.timeout_ms", current.providerTimeoutMs, next.providerTimeoutMs, live: true)
        compare("providers.ping_interval_ms", current.providerPingIntervalMs, next.providerPingIntervalMs)
        compare("providers.ping_timeout_ms", current.providerPingTimeoutMs, next.providerPingTimeoutMs)
        compare("providers.startup_grace_ms", current.providerStartupGraceMs, next.providerStartupGraceMs)
        compare("log.level", current.logLevel, next.logLevel, live: true)
        compare("log.format", current.logFormat, next.logFormat)
        compare(
            "automation.missed_triggers", current.catchUpMissedTriggers ? "catch-up" : "skip",
            next.catchUpMissedTriggers ? "catch-up" : "skip")
        compare(
            "automation.missed_ends", current.runMissedEnds ? "run" : "skip", next.runMissedEnds ? "run" : "skip")
        live.roles.replace(with: next.access.roles)
        live.limits.replace(
            with: LiveLimits.Values(
                defaultQueueLimit: next.queueLimit, providerTimeoutMs: UInt32(clamping: next.providerTimeoutMs)))
        live.logLevel.level = next.logLevel
        if changed.isEmpty && atRestart.isEmpty {
            logger.info("reload: nothing changed")
        }
        for change in changed { logger.notice("reload: \(change)") }
        for change in atRestart { logger.warning("reload: \(change) (takes effect at the next start)") }
        // What waits for a restart is still the old value: the next reload compares with it.
        var applied = current
        applied.access.roles = next.access.roles
        applied.queueLimit = next.queueLimit
        applied.providerTimeoutMs = next.providerTimeoutMs
        applied.logLevel = next.logLevel
        return applied
    }

    /// Roles as one line for the log: "admin: uid 1001, group 27; viewer: uid 65534; default user".
    private func describe(_ retention: HistoryRetention) -> String {
        var parts = ["retention \(DurationText.format(milliseconds: retention.defaultMs))"]
        if retention.auditMs != retention.defaultMs {
            parts.append("audit \(DurationText.format(milliseconds: retention.auditMs))")
        }
        for (type, keep) in retention.byType.sorted(by: { $0.key < $1.key }) {
            parts.append(
                "\(HAPCatalog.characteristic(uuid: type)?.name ?? type)=\(DurationText.format(milliseconds: keep))")
        }
        for (id, keep) in retention.byAccessory.sorted(by: { $0.key < $1.key }) {
            parts.append("accessory \(id)=\(DurationText.format(milliseconds: keep))")
        }
        return parts.joined(separator: ", ")
    }

    private func describe(_ policy: RolePolicy) -> String {
        var parts: [String] = []
        for role in Role.allCases.reversed() {
            guard let members = policy.members[role], !members.isEmpty else { continue }
            let names = members.map { member in
                switch member {
                case .user(let uid): "uid \(uid)"
                case .group(let gid): "group \(gid)"
                }
            }.sorted()
            parts.append("\(role.name): \(names.joined(separator: ", "))")
        }
        parts.append("default \(policy.defaultRole?.name ?? "none")")
        return parts.joined(separator: "; ")
    }
}
