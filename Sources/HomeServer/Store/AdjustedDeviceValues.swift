internal import HomeModel
internal import Logging

/// Notes a device value the daemon kept in another form than reported (rounded to
/// the characteristic's step, or clamped to what its format holds): once per
/// characteristic for the daemon's lifetime, so that a sensor that always reports
/// 51.92 % against a step of 1 says so once in the log, not at every reading.
final class AdjustedDeviceValues: Sendable {
    private let noted = Locked<Set<ObjectID>>([])
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Logs each adjustment whose characteristic has not been noted before.
    func note(_ adjustments: [AdjustedValue], provider: String?) {
        guard !adjustments.isEmpty else { return }
        let first = noted.withLock { noted in adjustments.filter { noted.insert($0.characteristicID).inserted } }
        for adjustment in first {
            logger.notice(
                "characteristic \(adjustment.characteristicID): the device reported \(adjustment.reported.shortDescription); kept \(adjustment.kept.shortDescription) (on the characteristic's step, within what its format holds); said once per characteristic",
                metadata: provider.map { ["provider": "\($0)"] } ?? [:])
        }
    }
}
