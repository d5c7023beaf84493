internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

extension Triggers {
    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say whether a trigger would fire now, and why not, without running it.",
            discussion: """
                For a timer or sun trigger: whether its conditions hold now, and its next fire (a \
                one-off time that has passed never fires). For an event trigger: whether its \
                characteristic's current value is what it fires on, whether its conditions hold \
                now, and for one with --for whether its hold is running (it starts when the value \
                changes to what it waits for, so a value already there when the trigger was made \
                or changed waits for the next change). And whether it has anything to run. \
                Nothing is run and nothing is recorded.
                """)

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The trigger.", completion: .homeNames(.trigger))
        var trigger: String

        func run() async throws {
            let name = self.trigger
            let (graph, trigger, standing) = try await options.withClient {
                client throws(HomeError) -> (HomeGraph, Trigger, HoldStanding?) in
                let graph = try await client.getHome().graph
                let id = try graph.resolveNamed(name, .trigger)
                guard let trigger = graph.triggers[id] else { throw HomeError(.notFound, "no trigger \(id)") }
                return (graph, trigger, try await Self.holdStanding(of: trigger, in: graph, client: client))
            }
            let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            let location = graph.homes[trigger.homeID]?.location
            var reasons = Self.reasons(trigger, in: graph, nowMs: nowMs, location: location)
            var holding: (sinceMs: Int64, dueMs: Int64)?
            if let standing, case .event(let characteristicID, _, _, _, _) = trigger.kind,
                let current = graph.characteristics[characteristicID]?.value
            {
                let shown = graph.shown(current, of: characteristicID)
                switch standing {
                case .holding(let sinceMs, _):
                    holding = (sinceMs, sinceMs.addingReportingOverflow(trigger.holdMs).partialValue)
                case .alreadyInState:
                    reasons.append(
                        "already \(shown) when it was made or last changed: it waits for the next change to \(shown)")
                case .fired:
                    reasons.append(
                        "it fired after \(shown) held: it waits for the value to leave \(shown) and come back")
                case .unknown:
                    reasons.append("the history does not reach back to when it became \(shown): it may not be holding")
                case .notWaitedFor:
                    break
                }
            }
            // Firing still announces itself (an EVENT_TRIGGER clients may watch), so this is no reason it would not fire.
            let runsNothing = trigger.actionSetIDs.allSatisfy { graph.actionSets[$0] == nil } && trigger.command == nil
            let zone = Triggers.zone(of: trigger)
            let next = Triggers.nextText(trigger, location: location, nowMs: nowMs)
            if options.json {
                var fields: [(String, JSON)] = [
                    ("trigger", .string(trigger.name)), ("id", .uint(trigger.id)),
                    ("would_fire", .bool(reasons.isEmpty)),
                    ("reasons", .array(reasons.map(JSON.string))), ("next_fire", .string(next)),
                    ("runs_nothing", .bool(runsNothing)),
                ]
                if let holding {
                    fields.append(("holding_since", .string(isoTime(holding.sinceMs))))
                    fields.append(("hold_ends", .string(isoTime(holding.dueMs))))
                }
                Output.structured(.object(fields), options)
                return
            }
            Output.line("\(trigger.name): \(Triggers.describe(trigger, in: graph, nowMs: nowMs))")
            if reasons.isEmpty {
                if let holding {
                    Output.line(
                        "now: holding since \(TimeText.local(holding.sinceMs, in: zone)): it fires at "
                            + "\(TimeText.local(holding.dueMs, in: zone)) unless the value leaves first")
                } else if case .event = trigger.kind {
                    Output.line("now: would fire")
                } else {
                    // A timer or sun trigger fires at its time, not now: now only its conditions are known to hold.
                    Output.line("now: its conditions hold; it fires at its time")
                }
            } else {
                for reason in reasons { Output.line("now: would not fire: \(reason)") }
            }
            if runsNothing {
                Output.line(
                    "note: it runs nothing: it has no scene (left) and no command; a firing only announces itself")
            }
            Output.line("next fire: \(next)")
        }

        /// What keeps it from firing now, besides its hold.
        static func reasons(_ trigger: Trigger, in graph: HomeGraph, nowMs: Int64, location: GeoLocation?) -> [String] {
            var reasons: [String] = []
            if !trigger.isEnabled { reasons.append("it is disabled") }
            switch trigger.kind {
            case .event(let characteristicID, let value, let rangeMin, let rangeMax, _):
                let current = graph.characteristics[characteristicID]?.value
                if !(current.map { EventMatch.matches($0, value: value, rangeMin: rangeMin, rangeMax: rangeMax) }
                    ?? false)
                {
                    let path = graph.path(of: characteristicID) ?? "characteristic \(characteristicID)"
                    reasons.append(
                        "\(path) is \(current.map { graph.shown($0, of: characteristicID) } ?? "unknown"), "
                            + "not what it fires on")
                }
            case .timer(let fireDateMs, _, .none) where fireDateMs <= nowMs:
                reasons.append("its time has passed: it never fires")
            default:
                break
            }
            for condition in trigger.characteristicConditions
            where !condition.holds(for: graph.characteristics[condition.characteristicID]?.value) {
                let path = graph.path(of: condition.characteristicID) ?? "characteristic \(condition.characteristicID)"
                reasons.append(
                    "its condition \(path) \(condition.comparison.rawValue) "
                        + "\(graph.shown(condition.value, of: condition.characteristicID)) does not hold")
            }
            if let reason = TriggerSchedule.whyNot(trigger.condition, at: nowMs, location: location) {
                reasons.append(reason)
            }
            return reasons
        }

        /// How far back `triggers test` reads the history for a hold.
        static let holdLookBack: UInt32 = 1000

        /// Where its hold stands, from the history; nil for a trigger without a hold.
        static func holdStanding(of trigger: Trigger, in graph: HomeGraph, client: HomeClient) async throws(HomeError)
            -> HoldStanding?
        {
            guard trigger.holdMs > 0, case .event(let characteristicID, _, _, _, _) = trigger.kind else { return nil }
            var values = SubscriptionFilter()
            values.characteristicIDs = [characteristicID]
            values.kinds = [.valueChanged]
            var others = SubscriptionFilter()
            others.kinds = [.triggerFired, .layoutChanged]
            let valuePage = try await client.readHistory(
                ReadHistoryRequest(filter: values, limit: holdLookBack, newestFirst: true))
            let otherPage = try await client.readHistory(
                ReadHistoryRequest(filter: others, limit: holdLookBack, newestFirst: true))
            // Each page reaches back to its own oldest event: only what both cover is whole.
            let cuts: [UInt64] = [valuePage, otherPage].compactMap { page in
                page.nextSeq == 0 ? nil : page.events.last.map(\.seq)
            }
            let floor = cuts.max() ?? 0
            let events = (valuePage.events + otherPage.events).filter { $0.seq >= floor }.sorted { $0.seq > $1.seq }
            return HoldStanding.reckon(
                trigger, current: graph.characteristics[characteristicID]?.value, newestFirst: events,
                complete: valuePage.nextSeq == 0 && otherPage.nextSeq == 0)
        }
    }
}
