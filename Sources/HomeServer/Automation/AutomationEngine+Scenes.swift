internal import HomeModel
internal import HomeWire
internal import Logging
internal import NIOCore

/// How a firing runs its scenes.
extension AutomationEngine {
    /// Runs one scene of a trigger: through the value router when there is one (a
    /// provider's writes complete later; their outcome is logged then).
    func run(
        _ actionSetID: ObjectID, of triggerID: ObjectID, origin: Origin,
        onWritten: (@Sendable (ObjectID, [WriteResult]) -> Void)?
    ) {
        let logger = self.logger
        let report: @Sendable (Result<WriteOutcome, any Error>) -> Void = { result in
            switch result {
            case .success(let response):
                onWritten?(triggerID, response.results)
                for result in response.results {
                    guard let error = result.error else { continue }
                    notWritten(result, error: error, of: triggerID, actionSetID: actionSetID, origin: origin)
                    logger.warning(
                        "a write of a triggered scene failed",
                        metadata: [
                            "trigger": "\(triggerID)", "actionSet": "\(actionSetID)",
                            "characteristic": "\(result.characteristicID)", "error": "\(error)",
                        ])
                }
            case .failure(let error):
                logger.warning(
                    "a triggered scene could not run",
                    metadata: ["trigger": "\(triggerID)", "actionSet": "\(actionSetID)", "error": "\(error)"])
            }
        }
        if let values {
            values.executeActionSet(
                actionSetID, origin: origin, timeoutMs: nil, on: values.eventLoops.next()
            ).whenComplete(report)
            return
        }
        do throws(HomeError) {
            report(.success(try store.executeActionSet(actionSetID, origin: origin)))
        } catch {
            report(.failure(error))
        }
    }
}
