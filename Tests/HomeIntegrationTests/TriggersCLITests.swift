import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// `homectl triggers` and `homes set-location` against a real homed.
@Suite("homectl triggers: times of day, the sun, holds, conditions", .timeLimit(.safetyNet))
struct TriggersCLITests {
    private func json(_ text: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
    }

    private func trigger(_ daemon: DaemonProcess, _ name: String) throws -> [String: Any] {
        try #require(try json(daemon.homectl("triggers", "--json").stdout).first { $0["name"] as? String == name })
    }

    @Test("a sunset trigger on weekdays and a 07:00 timer: listed with today's sunset and their next fire")
    func sunAndTimeOfDay() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("triggers", "create", "Porch", "--at", "sunset").status != 0, "no location yet")
        let located = try daemon.homectl(
            "homes", "set-location", "Demo Home", "--latitude", "52.52", "--longitude", "13.405")
        #expect(located.status == 0, "\(located.stderr)")
        let homes = try json(daemon.homectl("homes", "--json").stdout)
        #expect(homes.first?["latitude"] as? Double == 52.52)
        let porch = try daemon.homectl(
            "triggers", "create", "Porch", "--at", "sunset-30m", "--days", "mon-fri", "--time-zone", "Europe/Berlin")
        #expect(porch.status == 0, "\(porch.stderr)")
        #expect(try daemon.homectl("scenes", "create", "Wake").status == 0)
        let wake = try daemon.homectl(
            "triggers", "create", "Wake", "--at", "07:00", "--time-zone", "Europe/Berlin", "--scene", "Wake", "--once",
            "--condition", "Living Room/Lamp/On == true")
        #expect(wake.status == 0, "\(wake.stderr)")

        let listed = try daemon.homectl("triggers")
        #expect(listed.stdout.contains("at sunset-30m Europe/Berlin (today "), "\(listed.stdout)")
        #expect(listed.stdout.contains(", only mon-fri"))
        #expect(listed.stdout.contains("last never"))
        let sun = try trigger(daemon, "Porch")
        #expect(sun["kind"] as? String == "sun" && sun["sun"] as? String == "sunset")
        #expect(sun["offset_ms"] as? Int == -1_800_000)
        #expect((sun["condition"] as? [String: Any])?["days"] as? String == "mon-fri")
        #expect(sun["next_fire"] is String)
        let timer = try trigger(daemon, "Wake")
        #expect(timer["kind"] as? String == "timer" && timer["recurrence"] as? String == "daily")
        #expect((timer["fire_date"] as? String)?.contains(":00:00") == true)
        #expect(timer["next_fire"] is String && timer["last_fired"] is NSNull)
        #expect(timer["execute_once"] as? Bool == true)
        #expect((timer["conditions"] as? [[String: Any]])?.first?["comparison"] as? String == "==")
        let tested = try daemon.homectl("triggers", "test", "Wake")
        #expect(tested.stdout.contains("now: its conditions hold; it fires at its time"), "\(tested.stdout)")
        #expect(tested.stdout.contains("next fire: 20"))
        #expect(timer["command"] is NSNull)
        let run = try daemon.homectl(
            "triggers", "set", "Wake", "--run", "/bin/echo", "--arg", "-n", "--run-timeout", "5s")
        #expect(run.status == 0, "\(run.stderr)")
        let command = try #require(try trigger(daemon, "Wake")["command"] as? [String: Any])
        #expect(command["program"] as? String == "/bin/echo" && command["arguments"] as? [String] == ["-n"])
        #expect(command["timeout_ms"] as? Int == 5000)
        let missing = try daemon.homectl("triggers", "set", "Wake", "--run", "/nonexistent/notify")
        #expect(missing.status != 0 && missing.stderr.contains("the command /nonexistent/notify does not exist"))
        #expect(try daemon.homectl("triggers", "set", "Wake", "--no-run").status == 0)
        #expect(try trigger(daemon, "Wake")["command"] is NSNull)
        #expect(try daemon.homectl("triggers", "set", "Wake", "--repeating").status == 0)
        #expect(try trigger(daemon, "Wake")["execute_once"] as? Bool == false)
    }

    @Test("an event held for 10m in a window with a condition; set changes it all at once; test says why not")
    func holdConditionSetTest() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "false").status == 0)
        let created = try daemon.homectl(
            "triggers", "create", "Lamp left on", "--when", "Living Room/Lamp/On", "--equals", "true", "--for", "10m",
            "--from", "22:00", "--until", "06:00", "--time-zone", "UTC", "--undo-when-ended", "--undo-after", "5m",
            "--condition",
            "Bedroom/Temperature Sensor/CurrentTemperature < 40")
        #expect(created.status == 0, "\(created.stderr)")
        var listed = try trigger(daemon, "Lamp left on")
        #expect(listed["hold_ms"] as? Int == 600_000)
        #expect((listed["condition"] as? [String: Any])?["from"] as? String == "22:00")
        #expect((listed["condition"] as? [String: Any])?["until"] as? String == "06:00")
        #expect((listed["conditions"] as? [Any])?.count == 1)
        #expect((listed["end"] as? [String: Any])?["after_ms"] as? Int == 300_000)
        #expect((listed["end"] as? [String: Any])?["when_event_ends"] as? Bool == true)
        #expect(try daemon.homectl("triggers").stdout.contains("undo 5m after it ends"))

        let tested = try daemon.homectl("triggers", "test", "Lamp left on")
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(
            tested.stdout.contains("now: would not fire: Living Room/Lamp/Lightbulb/On is off, not what it fires on")
                || tested.stdout.contains("not what it fires on"), "\(tested.stdout)")

        let set = try daemon.homectl("triggers", "set", "Lamp left on", "--for", "5m", "--always", "--no-undo")
        #expect(set.status == 0, "\(set.stderr)")
        listed = try trigger(daemon, "Lamp left on")
        #expect(listed["hold_ms"] as? Int == 300_000)
        #expect(listed["condition"] is NSNull)
        #expect(listed["end"] is NSNull)
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
        let now = try json("[" + daemon.homectl("triggers", "test", "Lamp left on", "--json").stdout + "]")
        #expect(now.first?["would_fire"] as? Bool == true, "\(now)")

        #expect(try daemon.homectl("scenes", "create", "Off").status == 0)
        #expect(try daemon.homectl("scenes", "create", "Dim").status == 0)
        let scenes = try daemon.homectl("triggers", "set", "Lamp left on", "--add-scene", "Off", "--add-scene", "Dim")
        #expect(scenes.status == 0, "\(scenes.stderr)")
        #expect(try daemon.homectl("triggers", "set", "Lamp left on", "--remove-scene", "Off").status == 0)
        listed = try trigger(daemon, "Lamp left on")
        #expect(listed["action_sets"] as? [String] == ["Dim"])
        #expect(listed["hold_ms"] as? Int == 300_000, "scene changes leave the rest")
    }

    @Test("test tells the truth of a hold, a one-off time gone by and a trigger with nothing left to run")
    func testTellsTheTruth() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
        let created = try daemon.homectl(
            "triggers", "create", "Left on", "--when", "Living Room/Lamp/On", "--equals", "true", "--for", "10m")
        #expect(created.status == 0, "\(created.stderr)")
        let already = try daemon.homectl("triggers", "test", "Left on")
        #expect(
            already.stdout.contains(
                "now: would not fire: already true when it was made or last changed: it waits for the next change to true"
            ),
            "\(already.stdout)")
        #expect(
            try json("[" + daemon.homectl("triggers", "test", "Left on", "--json").stdout + "]").first?["would_fire"]
                as? Bool == false)

        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "false").status == 0)
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
        let holding = try daemon.homectl("triggers", "test", "Left on")
        #expect(holding.stdout.contains("now: holding since "), "\(holding.stdout)")
        #expect(holding.stdout.contains("unless the value leaves first"), "\(holding.stdout)")
        let holdingJSON = try json("[" + daemon.homectl("triggers", "test", "Left on", "--json").stdout + "]").first
        #expect(
            holdingJSON?["would_fire"] as? Bool == true && holdingJSON?["hold_ends"] is String,
            "\(String(describing: holdingJSON))")

        let past = try daemon.homectl("triggers", "create", "Old", "--at", "2020-01-01T07:00", "--time-zone", "UTC")
        #expect(past.status != 0)
        #expect(
            past.stderr.contains("trigger \"Old\": its time, 2020-01-01 07:00, has passed: it never fires"),
            "\(past.stderr)")
        #expect(!(try daemon.homectl("triggers").stdout.contains("Old")), "nothing was made")

        #expect(try daemon.homectl("scenes", "create", "Coffee").status == 0)
        #expect(try daemon.homectl("triggers", "create", "Brew", "--at", "07:00", "--scene", "Coffee").status == 0)
        let refused = try daemon.homectl("scenes", "remove", "Coffee")
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains("scene \"Coffee\" is run by trigger \"Brew\": give --force to remove it anyway"),
            "\(refused.stderr)")
        #expect(try daemon.homectl("scenes").stdout.contains("Coffee"), "nothing was removed")
        #expect(try daemon.homectl("scenes", "remove", "Coffee", "--force").status == 0)
        let none = try daemon.homectl("triggers", "trace", "Brew")
        #expect(none.status == 0 && none.stdout.contains("Brew: no run in the history"), "\(none.stdout)")
        let missing = try daemon.homectl("triggers", "trace", "Nope")
        #expect(missing.status != 0 && missing.stderr.contains("Nope"), "\(missing.stderr)")
        let empty = try daemon.homectl("triggers", "test", "Brew")
        #expect(
            empty.stdout.contains("note: it runs nothing: it has no scene (left) and no command"), "\(empty.stdout)")
        #expect(
            try json("[" + daemon.homectl("triggers", "test", "Brew", "--json").stdout + "]").first?["runs_nothing"]
                as? Bool == true)
    }

    @Test(
        "bad input: an unknown zone, a zero duration, an out-of-range latitude, an unreadable condition; nothing changes"
    )
    func badInput() throws {
        let daemon = try DaemonProcess()
        let before = try daemon.homectl("export").stdout
        let zone = try daemon.homectl("triggers", "create", "T", "--at", "07:00", "--time-zone", "Mars/Olympus_Mons")
        #expect(zone.status != 0 && zone.stderr.contains("unknown time zone 'Mars/Olympus_Mons'"), "\(zone.stderr)")
        let zero = try daemon.homectl("triggers", "create", "T", "--when", "Living Room/Lamp/On", "--for", "0s")
        #expect(zero.status != 0 && zero.stderr.contains("--for takes a duration above 0"), "\(zero.stderr)")
        let days = try daemon.homectl("triggers", "create", "T", "--at", "07:00", "--days", "mon-fry")
        #expect(days.status != 0 && days.stderr.contains("\"mon-fry\""), "\(days.stderr)")
        let latitude = try daemon.homectl("homes", "set-location", "Demo Home", "--latitude", "91", "--longitude", "0")
        #expect(latitude.status != 0 && latitude.stderr.contains("latitude 91 is outside -90…90"), "\(latitude.stderr)")
        let sun = try daemon.homectl("triggers", "create", "T", "--at", "sunrise+10m")
        #expect(sun.status != 0 && sun.stderr.contains("has none (homectl homes set-location"), "\(sun.stderr)")
        let unreadable = try daemon.homectl(
            "triggers", "create", "T", "--when", "Living Room/Lamp/On", "--condition",
            "Living Room/Lamp/Identify == true")
        #expect(unreadable.status != 0 && unreadable.stderr.contains("cannot be read"), "\(unreadable.stderr)")
        #expect(try daemon.homectl("export").stdout == before, "nothing changed")

        // A location in use by a sun trigger stays.
        #expect(
            try daemon.homectl("homes", "set-location", "Demo Home", "--latitude", "-33.87", "--longitude", "151.21")
                .status == 0)
        #expect(try daemon.homectl("triggers", "create", "Dawn", "--at", "sunrise", "--time-zone", "UTC").status == 0)
        let cleared = try daemon.homectl("homes", "set-location", "Demo Home", "--clear")
        #expect(cleared.status != 0 && cleared.stderr.contains("\"Dawn\" use the sun's times"), "\(cleared.stderr)")
    }
}
