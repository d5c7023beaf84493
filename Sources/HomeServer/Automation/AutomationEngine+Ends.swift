internal import HomeModel
internal import NIOCore

/// What a firing does besides its scenes: the command it runs, and the undo of
/// what its scenes changed when its end comes.
extension AutomationEngine {
    /// Runs a trigger's command with an environment describing the firing, and
    /// notes in the history how it ended.
    func runCommand(
        _ command: TriggerCommand, of trigger: Trigger, in graph: HomeGraph, cause: String, origin: Origin
    ) {
        var environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "HOMED_TRIGGER": trigger.name, "HOMED_TRIGGER_ID": "\(trigger.id)",
            "HOMED_HOME": graph.homes[trigger.homeID]?.name ?? "", "HOMED_CAUSE": cause,
            "HOMED_TIME_MS": "\(clock.nowMs)",
        ]
        if case .event(let characteristicID, _, _, _, _) = trigger.kind {
            environment["HOMED_CHARACTERISTIC_ID"] = "\(characteristicID)"
            environment["HOMED_CHARACTERISTIC"] = graph.path(of: characteristicID) ?? ""
            environment["HOMED_VALUE"] = graph.characteristics[characteristicID]?.value.map { "\($0)" } ?? ""
        }
        let store = self.store
        let prefix = "trigger \(trigger.id) \"\(trigger.name)\": \(command.text) "
        commands.run(command, environment: environment) { outcome in
            store.audit("trigger-command", detail: prefix + outcome, origin: origin)
        }
    }

    /// Undoes what a trigger's scenes changed: writes each old value back on the
    /// condition that the characteristic's last change is still the scene's, and
    /// notes in the history what was restored and what was kept.
    func undo(_ triggerID: ObjectID, _ pending: EndTable.Pending) {
        let writes = EndTable.undoWrites(pending)
        let origin = Origin.automation(name: pending.name, triggerChain: [triggerID])
        let store = self.store
        let why = pending.end.text + (pending.carriedOver ? " (begun before homed restarted)" : "")
        let report: @Sendable (Result<WriteOutcome, any Error>) -> Void = { result in
            var restored: [String] = []
            var kept: [String] = []
            let graph = store.snapshot().graph
            switch result {
            case .success(let outcome):
                for result in outcome.results {
                    if result.error == nil {
                        let value = pending.previous[result.characteristicID]
                        restored.append(
                            value.map { graph.described(result.characteristicID, taking: $0) }
                                ?? graph.path(of: result.characteristicID)
                                ?? "characteristic \(result.characteristicID)")
                    } else {
                        kept.append(
                            graph.path(of: result.characteristicID) ?? "characteristic \(result.characteristicID)")
                    }
                }
            case .failure(let error):
                kept.append("everything (\(error))")
            }
            var detail = "trigger \(triggerID) \"\(pending.name)\": \(why): "
            detail += restored.isEmpty ? "nothing to restore" : "restored " + restored.joined(separator: ", ")
            if !kept.isEmpty { detail += "; kept, changed since by someone else: " + kept.joined(separator: ", ") }
            store.audit("trigger-ended", detail: detail, origin: origin)
        }
        if writes.isEmpty {
            report(.success(WriteOutcome(results: [], seq: 0)))
            return
        }
        if let values {
            values.write(writes, origin: origin, timeoutMs: nil, on: values.eventLoops.next())
                .whenComplete(report)
            return
        }
        report(.success(store.write(writes, origin: origin)))
    }
}
