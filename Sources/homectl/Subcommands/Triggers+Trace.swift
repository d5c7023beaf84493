internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

extension Triggers {
    struct Trace: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what a trigger did each time it fired or did not, newest first.",
            discussion: """
                For each run, from the history (as long as it keeps the events): why it fired or why \
                not (the event by path and value with its seq, or its time; the condition that \
                stopped it and the value it saw), then what followed: the firing, each change its \
                scenes made with its seq, its end (what it restored and kept), its command's exit \
                and output.
                """)

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The trigger.", completion: .homeNames(.trigger))
        var trigger: String

        @Option(help: "At most this many runs (1…100; default 10).")
        var last: UInt32 = 10

        func validate() throws {
            guard (1...100).contains(last) else { throw ValidationError("--last takes 1…100, not \(last)") }
        }

        func run() async throws {
            let name = self.trigger
            let last = self.last
            let (trigger, response) = try await options.withClient {
                client throws(HomeError) -> (Trigger, TraceTriggerResponse) in
                let graph = try await client.getHome().graph
                let id = try graph.resolveNamed(name, .trigger)
                guard let trigger = graph.triggers[id] else { throw HomeError(.notFound, "no trigger \(id)") }
                return (trigger, try await client.traceTrigger(id, limit: last))
            }
            if options.json {
                Output.structured(.array(response.runs.map(Self.json)), options)
                return
            }
            if response.runs.isEmpty {
                Output.line("\(trigger.name): no run in the history")
                return
            }
            let zone = Triggers.zone(of: trigger)
            for run in response.runs {
                Output.line(
                    "\(TimeText.local(run.timeMs, in: zone))  \(run.fired ? "fired" : "did not fire"): \(run.cause)"
                        + "  (seq \(run.seq))")
                for step in run.steps {
                    Output.line(
                        "    \(TimeText.local(step.timeMs, in: zone))  \(step.kind): \(step.detail)  (seq \(step.seq))")
                }
            }
        }

        static func json(_ run: TriggerRun) -> JSON {
            .object([
                ("time", .string(isoTime(run.timeMs))), ("seq", .uint(run.seq)), ("fired", .bool(run.fired)),
                ("cause", .string(run.cause)),
                (
                    "steps",
                    .array(
                        run.steps.map { step in
                            .object([
                                ("time", .string(isoTime(step.timeMs))), ("seq", .uint(step.seq)),
                                ("kind", .string(step.kind)), ("detail", .string(step.detail)),
                                ("object_id", .uint(step.objectID)),
                            ])
                        })
                ),
            ])
        }
    }
}
