internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire
public import Prometheus

/// `/metrics`, in Prometheus' text format: homed-web's own counters, and what
/// `homectl stats` and `homectl providers` show of homed, read when scraped.
public final class WebMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let requests: Counter
    let refused: Counter
    let streamsOpen: Gauge
    let eventsSent: Counter
    let resyncs: Counter
    let writes: Counter
    let writeErrors: Counter
    let logins: Counter
    let loginFailures: Counter

    public init() {
        requests = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "requests", unitName: "total", helpText: "HTTP requests served"))
        refused = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "refused", unitName: "total",
                helpText: "Requests refused with 503 because homed-web was at its limit"))
        streamsOpen = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "streams", unitName: "", helpText: "Event streams (pages) open"))
        eventsSent = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "events_sent", unitName: "total", helpText: "Events sent to pages"))
        resyncs = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "resyncs", unitName: "total",
                helpText: "Streams homed could not resume"))
        writes = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "writes", unitName: "total",
                helpText: "Writes and scenes sent to homed"))
        writeErrors = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "write_errors", unitName: "total",
                helpText: "Writes and scenes homed refused or failed"))
        logins = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "logins", unitName: "total", helpText: "Successful logins"))
        loginFailures = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "homed_web", metricName: "login_failures", unitName: "total", helpText: "Refused logins"))
    }

    /// The text to serve: homed's figures first (each gauge set from a fresh read; a
    /// homed that cannot be read, or will not let homed-web read its stats, leaves
    /// `homed_up` or `homed_stats_readable` at 0), then homed-web's.
    public func render(link: HomedLink, identity: ConnectIdentity?) async -> String {
        var lines: [String] = []
        func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: Double)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) gauge")
            for sample in samples {
                lines.append("\(name)\(sample.labels.isEmpty ? "" : "{\(sample.labels)}") \(Self.number(sample.value))")
            }
        }
        do throws(HomeError) {
            let status = try await link.call(as: identity) { client throws(HomeError) in try await client.status() }
            gauge("homed_up", "1 when homed answered", [("", 1)])
            gauge("homed_seq", "homed's latest sequence number", [("", Double(status.seq))])
            gauge("homed_uptime_seconds", "How long homed has run", [("", Double(status.uptimeMs) / 1000)])
            let providers = try await link.call(as: identity) { client throws(HomeError) in
                try await client.listProviders()
            }
            let label = { (provider: ProviderInfo) in "provider=\"\(Self.escape(provider.providerID))\"" }
            gauge(
                "homed_provider_connected", "1 when the provider is connected",
                providers.map { (label($0), $0.connected ? 1 : 0) })
            gauge(
                "homed_provider_accessories", "Accessories the provider serves",
                providers.map { (label($0), Double($0.accessoryIDs.count)) })
            gauge(
                "homed_provider_requests", "Reads and writes sent to the provider",
                providers.map { (label($0), Double($0.requests)) })
            gauge(
                "homed_provider_timeouts", "Requests the provider did not answer in time",
                providers.map { (label($0), Double($0.timeouts)) })
            gauge(
                "homed_provider_latency_p50_seconds", "Median provider answer time",
                providers.map { (label($0), Double($0.latencyP50Us) / 1e6) })
            gauge(
                "homed_provider_latency_p99_seconds", "99th percentile provider answer time",
                providers.map { (label($0), Double($0.latencyP99Us) / 1e6) })
            do throws(HomeError) {
                let stats = try await link.call(as: identity) { client throws(HomeError) in try await client.stats() }
                let subscriptions = stats.connections.flatMap(\.subscriptions)
                gauge("homed_stats_readable", "1 when homed let homed-web read its statistics (admin)", [("", 1)])
                gauge("homed_connections", "Connections to homed", [("", Double(stats.connections.count))])
                gauge("homed_subscriptions", "Subscriptions open in homed", [("", Double(subscriptions.count))])
                gauge(
                    "homed_subscription_events_sent", "Events homed sent to subscribers",
                    [("", Double(subscriptions.reduce(0) { $0 + $1.sent }))])
                gauge(
                    "homed_subscription_events_merged", "Events coalesced for slow subscribers",
                    [("", Double(subscriptions.reduce(0) { $0 + $1.merged }))])
                gauge(
                    "homed_subscription_events_dropped", "Events dropped for slow subscribers",
                    [("", Double(subscriptions.reduce(0) { $0 + $1.dropped }))])
                gauge(
                    "homed_subscription_queue_depth", "Events waiting in subscribers' queues",
                    [("", Double(subscriptions.reduce(0) { $0 + UInt64($1.queueDepth) }))])
                gauge(
                    "homed_pending_bytes", "Bytes written to clients and not yet read",
                    [("", Double(stats.connections.reduce(0) { $0 + $1.pendingBytes }))])
            } catch {
                gauge("homed_stats_readable", "1 when homed let homed-web read its statistics (admin)", [("", 0)])
            }
            do throws(HomeError) {
                let history = try await link.call(as: identity) { client throws(HomeError) in
                    try await client.readHistory(ReadHistoryRequest(limit: 1, newestFirst: true))
                }
                let held = history.oldestSeq > 0 ? Double(status.seq - min(status.seq, history.oldestSeq) + 1) : 0
                gauge(
                    "homed_history_oldest_seq", "The oldest event homed's history holds",
                    [("", Double(history.oldestSeq))])
                gauge("homed_history_events", "Events between the oldest held and the latest", [("", held)])
            } catch {}
        } catch {
            gauge("homed_up", "1 when homed answered", [("", 0)])
        }
        return lines.joined(separator: "\n") + "\n" + registry.emitToString()
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
