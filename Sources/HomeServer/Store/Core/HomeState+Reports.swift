internal import HomeModel

// A provider's own report decided on the state: the values its devices hold
// (read-only ones included) and its accessories' reachability, each checked to
// be the provider's.
extension HomeState {
    /// One report applied to a commit under way.
    ///
    /// - Parameters:
    ///   - owner: the provider reporting; nil applies everything (the daemon's
    ///     own reachability changes).
    ///   - adjusted: where the values kept in another form than reported go.
    /// - Returns: what it refused: not the owner's (PERMISSION_DENIED), unknown
    ///   (NOT_FOUND), invalid (INVALID_ARGUMENT).
    static func applyReport(
        _ report: ProviderReport, owner: String?, adjusted: inout [AdjustedValue], in transaction: inout Transaction
    ) -> [WriteResult] {
        var rejected: [WriteResult] = []
        func owned(_ accessoryID: ObjectID) -> Bool {
            owner == nil || transaction.graph.accessories[accessoryID]?.provider == owner
        }
        // Reachable first, so that the values that follow are of a reachable accessory.
        for (accessoryID, reachable) in report.reachability where reachable {
            guard owned(accessoryID) else {
                rejected.append(notOwned(accessoryID: accessoryID, provider: owner ?? ""))
                continue
            }
            if (try? transaction.graph.setReachable(true, accessoryID: accessoryID)) == true {
                transaction.emit(.reachability(accessoryID: accessoryID, reachable: true))
            }
        }
        for write in report.values {
            do throws(HomeError) {
                guard
                    let checked = try transaction.graph.checkWrite(
                        write.value, to: write.characteristicID, enforceWritable: false, source: .device)
                else {
                    throw HomeError(.notFound, "no characteristic with id \(write.characteristicID)")
                }
                if let owner, !owned(checked.accessoryID) {
                    let holder = transaction.graph.accessories[checked.accessoryID]?.provider ?? ""
                    throw HomeError(
                        .permissionDenied,
                        "characteristic \(write.characteristicID) belongs to accessory \(checked.accessoryID) of "
                            + (holder.isEmpty ? "no provider" : "provider \"\(holder)\"") + ", not of \"\(owner)\"")
                }
                _ = transaction.store(checked, to: write.characteristicID)
                if AdjustedValue.isAdjusted(reported: write.value, kept: checked.value) {
                    adjusted.append(
                        AdjustedValue(
                            characteristicID: write.characteristicID, reported: write.value, kept: checked.value))
                }
            } catch {
                rejected.append(WriteResult(characteristicID: write.characteristicID, error: error))
            }
        }
        for (accessoryID, reachable) in report.reachability where !reachable {
            guard owned(accessoryID) else {
                rejected.append(notOwned(accessoryID: accessoryID, provider: owner ?? ""))
                continue
            }
            if (try? transaction.graph.setReachable(false, accessoryID: accessoryID)) == true {
                transaction.emit(.reachability(accessoryID: accessoryID, reachable: false))
            }
        }
        return rejected
    }

    private static func notOwned(accessoryID: ObjectID, provider: String) -> WriteResult {
        let error = HomeError(
            .permissionDenied,
            "accessory \(accessoryID) is not one of provider \"\(provider)\"'s; its reachability is not the "
                + "provider's to report")
        return WriteResult(characteristicID: 0, error: error, accessoryID: accessoryID)
    }
}
