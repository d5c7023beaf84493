import Foundation
@_spi(Wire) import HomeTesting
import Testing

@Suite("homectl import", .timeLimit(.safetyNet))
struct ImportCLITests {
    /// A home changed by hand, exported: rooms, a zone, a renamed and moved
    /// accessory, a group, a scene with actions, an event and a timer trigger.
    private func exportedLayout() throws -> String {
        let source = try DaemonProcess()
        for arguments in [
            ["rooms", "add", "Attic"], ["zones", "add", "Upstairs"], ["zones", "add-room", "Upstairs", "Attic"],
            ["rename", "Living Room/Lamp", "Reading Lamp"], ["assign", "Living Room/Reading Lamp", "Attic"],
            ["groups", "create", "Lights"], ["groups", "add", "Lights", "Attic/Reading Lamp/Lightbulb"],
            ["scenes", "create", "Evening"], ["scenes", "add-action", "Evening", "Attic/Reading Lamp/On", "true"],
            ["scenes", "add-action", "Evening", "Attic/Reading Lamp/Brightness", "30"],
            [
                "triggers", "create", "Lamp watch", "--when", "Attic/Reading Lamp/On", "--equals", "true", "--scene",
                "Evening",
            ],
            [
                "triggers", "create", "Morning", "--at", "2026-12-01T07:00:00", "--recurrence", "daily", "--scene",
                "Evening",
            ],
            ["homes", "set-location", "Demo Home", "--latitude", "52.52", "--longitude", "13.405"],
            [
                "triggers", "create", "Porch", "--at", "sunset-30m", "--days", "mon-fri", "--time-zone",
                "Europe/Berlin", "--scene", "Evening", "--run", "/bin/true", "--arg", "porch light", "--condition",
                "Attic/Reading Lamp/On == false",
            ],
            [
                "triggers", "create", "Lamp left on", "--when", "Attic/Reading Lamp/On", "--equals", "true", "--for",
                "10m", "--from", "22:00", "--until", "06:00", "--time-zone", "UTC", "--undo-when-ended", "--once",
            ],
            // A uint8 characteristic: the file's 1 is the model's uint 1, not another value.
            [
                "triggers", "create", "Heating on", "--when", "Living Room/Thermostat/Target Heating Cooling State",
                "--equals", "1", "--scene", "Evening",
            ],
        ] {
            let result = try run(builtExecutable("homectl"), arguments, environment: source.environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        return try source.homectl("export").stdout
    }

    @Test("an exported home imported into another daemon makes the same layout; again, nothing changes")
    func roundTrip() throws {
        let layout = try exportedLayout()
        let target = try DaemonProcess()
        let file = target.directory + "/home.yaml"
        try layout.write(toFile: file, atomically: true, encoding: .utf8)
        let dry = try target.homectl("import", file, "--dry-run")
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would add trigger \"Morning\" to \"Demo Home\""), "\(dry.stdout)")
        #expect(try !target.homectl("rooms").stdout.contains("Attic"), "a dry run changes nothing")
        let applied = try target.homectl("import", file)
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.hasSuffix("imported: 16 changes\n"), "\(applied.stdout)")
        #expect(try target.homectl("export").stdout == layout)
        let again = try target.homectl("import", file)
        #expect(again.stdout == "nothing to change: the home already has everything the file names\n")
        // What exists and differs is said and left alone.
        try layout.replacingOccurrences(of: "value: 30", with: "value: 31").write(
            toFile: file, atomically: true, encoding: .utf8)
        let differs = try target.homectl("import", file)
        #expect(differs.status == 0)
        #expect(
            differs.stdout.contains(
                "differs: scene \"Evening\" sets \"Attic/Reading Lamp/Lightbulb/Brightness\" to 30, the file to 31: "
                    + "left as it is"), "\(differs.stdout)")
        // A trigger that differs says in what.
        #expect(layout.contains("for: \"10m\""))
        try layout.replacingOccurrences(of: "for: \"10m\"", with: "for: \"20m\"").write(
            toFile: file, atomically: true, encoding: .utf8)
        let hold = try target.homectl("import", file)
        #expect(
            hold.stdout.contains("differs: trigger \"Lamp left on\" exists with another hold than the file's"),
            "\(hold.stdout)")
    }

    @Test("a value the characteristic cannot take refuses the file, where the scene has the action already too")
    func wrongValueRefused() throws {
        let layout = try exportedLayout()
        let target = try DaemonProcess()
        let file = target.directory + "/home.yaml"
        try layout.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try target.homectl("import", file).status == 0)
        let before = try target.homectl("export").stdout
        #expect(layout.contains("      value: 30"))
        try layout.replacingOccurrences(of: "      value: 30", with: "      value: \"bright\"").write(
            toFile: file, atomically: true, encoding: .utf8)
        for arguments in [["import", "--dry-run", file], ["import", file]] {
            let result = try run(builtExecutable("homectl"), arguments, environment: target.environment)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("homes[0].scenes[0].actions[1].value: "), "\(result.stderr)")
        }
        #expect(try target.homectl("export").stdout == before, "nothing changed")
    }

    @Test(
        "a bad file is refused naming the place in it, and nothing is changed",
        arguments: [
            (
                "    category: \"thermostat\"", "    colour: \"red\"", 3,
                "homes[0].accessories[1] has an unknown key 'colour' (it takes bridge, category, key, name, provider, room)"
            ),
            (
                "    key: \"HMD-0002\"", "    key: \"NOPE\"", 5,
                "homes[0].accessories[1]: provider \"simulator\" has registered no accessory with key \"NOPE\"; an import "
                    + "does not hold places for accessories"
            ),
            ("  - \"Attic\"", "  - 42", 3, "homes[0].rooms[4] is not text (42)"),
            ("      value: 30", "      value: [1]", 3, "homes[0].scenes[0].actions[1]: [1] is not a value"),
            (
                "      recurrence: \"daily\"", "      recurrence: \"fortnightly\"", 3,
                "homes[0].triggers[1].timer.recurrence 'fortnightly' is no recurrence"
            ),
        ])
    func badFiles(original: String, replacement: String, status: Int32, message: String) throws {
        let layout = try exportedLayout()
        #expect(layout.contains(original))
        let target = try DaemonProcess()
        let before = try target.homectl("export").stdout
        let file = target.directory + "/bad.yaml"
        try layout.replacingOccurrences(of: original, with: replacement).write(
            toFile: file, atomically: true, encoding: .utf8)
        let result = try target.homectl("import", file)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(try target.homectl("export").stdout == before, "nothing changed")
    }

    @Test("a name that clashes in the home is refused by the daemon's own rules before anything changed")
    func clash() throws {
        let layout = try exportedLayout()
        let target = try DaemonProcess()
        // A home has one wake-up scene at most: the file's would be a second.
        #expect(try target.homectl("scenes", "create", "Rise", "--kind", "wake-up").status == 0)
        let before = try target.homectl("export").stdout
        let file = target.directory + "/clash.yaml"
        try layout.replacingOccurrences(of: "kind: \"user-defined\"", with: "kind: \"wake-up\"").write(
            toFile: file, atomically: true, encoding: .utf8)
        let result = try target.homectl("import", file)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot add scene \"Evening\" to \"Demo Home\": "), "\(result.stderr)")
        #expect(try target.homectl("export").stdout == before, "nothing changed, the rooms and zone included")
    }

    @Test("a trigger's command that is not on this machine stops the import before anything changed")
    func missingProgram() throws {
        let layout = try exportedLayout()
        let target = try DaemonProcess()
        let before = try target.homectl("export").stdout
        let file = target.directory + "/missing.yaml"
        #expect(layout.contains("/bin/true"))
        try layout.replacingOccurrences(of: "/bin/true", with: "/nonexistent/homed-porch-light").write(
            toFile: file, atomically: true, encoding: .utf8)
        for arguments in [["import", "--dry-run", file], ["import", file]] {
            let result = try run(builtExecutable("homectl"), arguments, environment: target.environment)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr.contains(
                    "cannot add trigger \"Porch\" to \"Demo Home\": the command /nonexistent/homed-porch-light "
                        + "does not exist"),
                "\(result.stderr)")
        }
        #expect(try target.homectl("export").stdout == before, "nothing changed, the rooms and zone included")
    }
}
