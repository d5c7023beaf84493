import Foundation
@_spi(Wire) import HomeTesting
import Testing

@Suite("homectl history, last and watch --since", .timeLimit(.safetyNet))
struct HistoryCLITests {
    @Test("history lists a characteristic's changes for people, as CSV and as JSON; last says when, what and who")
    func historyAndLast() throws {
        let daemon = try DaemonProcess()
        for value in ["20", "30", "40"] {
            #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", value).status == 0)
        }
        let text = try daemon.homectl("history", "Living Room/Lamp/Brightness", "--since", "1h")
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(text.stdout)")
        #expect(lines.last?.contains("Living Room/Lamp/Brightness = 40%  (by homectl, connection ") == true)
        let csv = try daemon.homectl("history", "Living Room/Lamp/Brightness", "--since", "1h", "-o", "csv")
        let rows = csv.stdout.split(separator: "\n")
        #expect(rows.first == "TIME,KIND,ROOM,ACCESSORY,CHARACTERISTIC,VALUE,BY,SEQ,NAME")
        #expect(rows.count == 4 && rows.last?.contains(",value,Living Room,Lamp,Brightness,40,homectl,") == true)
        let json = try daemon.homectl("history", "Lamp", "--limit", "2", "-o", "json")
        let items = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(items?.count == 2)
        #expect(items?.last?["value"] as? Int == 40 && items?.last?["characteristic"] as? String == "Brightness")
        let last = try daemon.homectl("last", "Living Room/Lamp/Brightness")
        #expect(last.status == 0, "\(last.stderr)")
        #expect(last.stdout.hasPrefix("Living Room/Lamp/Brightness: 40%, just now, at "), "\(last.stdout)")
        #expect(last.stdout.contains(", by homectl, connection "))
        let never = try daemon.homectl("last", "Living Room/Lamp/Hue")
        #expect(never.status == 5)
        #expect(never.stderr.contains("the history holds no change of \"Living Room/Lamp/Hue\""))
    }

    @Test("history --kind layout answers who changed the layout; --plot draws a numeric characteristic")
    func auditAndPlot() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("rooms", "add", "Attic").status == 0)
        let layout = try daemon.homectl("history", "--kind", "layout", "--since", "1h")
        #expect(layout.stdout.contains("room \"Attic\""), "\(layout.stdout)")
        #expect(layout.stdout.contains("added  (by homectl, connection "))
        for value in ["10", "90", "50"] {
            #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", value).status == 0)
        }
        let plot = try daemon.homectl("history", "Living Room/Lamp/Brightness", "--since", "5m", "--plot")
        #expect(plot.status == 0, "\(plot.stderr)")
        let rows = plot.stdout.split(separator: "\n")
        // Eight rows of chart, the time axis, the count. The three writes fall in the
        // last column of five minutes, which shows the value in force at its end.
        #expect(rows.count == 10, "\(plot.stdout)")
        // One value throughout: the chart is filled half way, labelled 50 at top and bottom.
        #expect(rows.first?.hasPrefix("50 ┤") == true && rows.first?.hasSuffix(" ") == true, "\(plot.stdout)")
        #expect(rows[7].hasPrefix("50 ┤") && rows[7].hasSuffix("█") && rows[4].hasSuffix("█"))
        #expect(rows.last == "Living Room/Lamp/Brightness: 3 values")
    }

    @Test("bad times and targets get clear errors, exit 3 or 5")
    func badInput() throws {
        let daemon = try DaemonProcess()
        let future = try daemon.homectl("history", "--since", "2999-01-01")
        #expect(future.status == 3)
        #expect(future.stderr.contains("--since '2999-01-01' is in the future"))
        let garbled = try daemon.homectl("history", "--since", "yesterdayish")
        #expect(garbled.status == 3)
        #expect(garbled.stderr.contains("--since 'yesterdayish' is not a time: write how long ago (10m, 2h, 3d)"))
        let reversed = try daemon.homectl("history", "--since", "1h", "--until", "2h")
        #expect(reversed.status == 3 && reversed.stderr.contains("is not after --since"))
        let missing = try daemon.homectl("history", "Nowhere/Nothing")
        #expect(missing.status == 5)
        #expect(missing.stderr.contains("no characteristic, accessory, room or home is named \"Nowhere/Nothing\""))
        let bareNumber = try daemon.homectl("watch", "--since", "5", "-C", "1")
        #expect(bareNumber.status == 64 && bareNumber.stderr.contains("a sequence number needs --journal"))
        let table = try daemon.homectl("get", "Living Room/Lamp/On", "-o", "csv")
        #expect(table.status == 64 && table.stderr.contains("-o csv is for the commands that list"))
    }

    @Test("last and history resolve a PATH as get does; a press is told by its button, in accessories too")
    func pathsAsGet() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--no-simulator", "--in-memory"])
        let file = daemon.directory + "/remote.yaml"
        try """
        provider: hall
        rooms: [Hallway]
        accessories:
          - {key: remote, name: Remote, room: Hallway, category: programmableSwitch,
             services: [{type: StatelessProgrammableSwitch, name: Up, characteristics: {ServiceLabelIndex: 1}},
                        {type: StatelessProgrammableSwitch, name: Down, characteristics: {ServiceLabelIndex: 2}}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let simulator = try ChildProcess(
            builtExecutable("homed-sim"), [file, "--socket", daemon.socketPath, "--log-level", "warning"])
        defer { simulator.signal(SIGKILL) }
        let deadline = Date().addingTimeInterval(patience)
        while try !daemon.homectl("accessories").stdout.contains("Remote"), Date() < deadline { usleep(50_000) }
        let path = "Hallway/Remote/ProgrammableSwitchEvent"
        let several = "accessory \"Remote\" has 2 ProgrammableSwitchEvent characteristics; name the service"
        for (command, result) in [
            ("get", try daemon.homectl("get", path)), ("last", try daemon.homectl("last", path)),
            ("history", try daemon.homectl("history", path)),
        ] {
            #expect(result.status == 3, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(several), "\(command): \(result.stderr)")
        }
        let named = try daemon.homectl("last", "Hallway/Remote/Up/ProgrammableSwitchEvent")
        #expect(named.status == 1 || named.status == 5, "\(named.stderr)")
        #expect(named.stderr.contains("the history holds no change of"), "\(named.stderr)")
        // A press is told by its button, in watch, history and last alike.
        let watch = try ChildProcess(
            builtExecutable("homectl"),
            ["--socket", daemon.socketPath, "watch", "--accessory", "Hallway/Remote", "-C", "1", "-o", "text"])
        try daemon.waitForSubscriptions(1)
        // The simulator presses an accessory's first button: Up.
        #expect(try daemon.homectl("sim", "press", "Hallway/Remote").status == 0)
        let line = watch.readLine() ?? ""
        #expect(line.contains("Hallway/Remote/Up/ProgrammableSwitchEvent"), "\(line)")
        let last = try daemon.homectl("last", "Hallway/Remote/Up/ProgrammableSwitchEvent")
        #expect(last.stdout.hasPrefix("Hallway/Remote/Up/ProgrammableSwitchEvent: "), "\(last.stdout)")
        let history = try daemon.homectl("history", "Hallway/Remote")
        #expect(history.stdout.contains("Hallway/Remote/Up/ProgrammableSwitchEvent"), "\(history.stdout)")
        // And a remote's state, where people look at it, is its last press, by button.
        let listed = try daemon.homectl("accessories").stdout
        #expect(listed.contains("Up: Single press, just now"), "\(listed)")
    }

    @Test("watch --since 10m prints the changes kept since then, then goes on live")
    func watchSince() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "61").status == 0)
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "62").status == 0)
        let watch = try daemon.homectl(
            "watch", "--since", "10m", "--characteristic", "Living Room/Lamp/Brightness", "-C", "2", "-W", "20")
        #expect(watch.status == 0, "\(watch.stderr)")
        let values = watch.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["value"] as? Int
        }
        #expect(values == [61, 62], "\(watch.stdout)")
    }

    @Test("history --every 5m shows a numeric characteristic's rollups, current as soon as the values are stored")
    func rollups() throws {
        let daemon = try DaemonProcess()
        for value in ["10", "30", "20"] {
            #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", value).status == 0)
        }
        let json = try daemon.homectl(
            "history", "Living Room/Lamp/Brightness", "--every", "5m", "--since", "1h", "-o", "json")
        #expect(json.status == 0, "\(json.stderr)")
        let slices = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        // The three writes (and the demo's initial value, if in the hour) in the last slice.
        let last = try #require(slices?.last)
        #expect(last["count"] as? Int == 3 && last["min"] as? Double == 10 && last["max"] as? Double == 30)
        #expect(last["mean"] as? Double == 20 && last["last"] as? Double == 20)
        let text = try daemon.homectl("history", "Living Room/Lamp/Brightness", "--every", "1h")
        #expect(text.stdout.hasPrefix("Living Room/Lamp/Brightness, per hour:\nSTART"), "\(text.stdout)")
        let bad = try daemon.homectl("history", "Living Room/Lamp/Brightness", "--every", "10m")
        #expect(bad.status == 64 && bad.stderr.contains("--every takes 5m or 1h"))
        let notOne = try daemon.homectl("history", "Living Room/Lamp", "--every", "5m")
        #expect(notOne.status == 3 && notOne.stderr.contains("is not one"), "\(notOne.stderr)")
    }

    @Test("the audit: a provider's connection is noted with its uid, only for those who ask for the kind")
    func auditNotes() throws {
        // The demo's simulator is a provider connecting in-process, as this uid.
        let daemon = try DaemonProcess(arguments: ["--demo", "--simulator-interval-ms", "60000"])
        let audit = try daemon.homectl("history", "--kind", "audit", "-o", "json")
        #expect(audit.status == 0, "\(audit.stderr)")
        let notes = (try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]]) ?? []
        let connected = notes.first { $0["action"] as? String == "provider-connected" }
        #expect(
            (connected?["detail"] as? String)?.hasPrefix("provider \"simulator\" connected (client ") == true,
            "\(audit.stdout)")
        #expect((connected?["origin"] as? [String: Any])?["uid"] as? Int == Int(getuid()))
        // Not among everything else unless asked for.
        let all = try daemon.homectl("history", "--limit", "1000", "-o", "json")
        #expect(!all.stdout.contains("\"kind\":\"audit\""))
    }
}
