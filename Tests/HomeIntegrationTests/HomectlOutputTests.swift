import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// homectl for people and for scripts: -o json|yaml|table|wide, --no-headers,
/// each accessory's state, `get ACCESSORY`, and shell completion that asks the
/// daemon for names. The real homectl against a real `homed --demo --no-simulator`.
@Suite("homectl's output formats, states and completion", .serialized, .timeLimit(.safetyNet))
struct HomectlOutputTests {
    @Test("-o table and -o wide print columns with a header; --no-headers drops it; --json is -o json")
    func tables() throws {
        let daemon = try DaemonProcess()
        let table = try daemon.homectl("accessories", "-o", "table")
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("NAME") == true, "\(table.stdout)")
        #expect(lines.first?.contains("STATE") == true && lines.first?.contains("MODEL") == false, "\(table.stdout)")
        #expect(lines.count == 7, "a header and the demo's six accessories: \(table.stdout)")
        let lamp = try #require(lines.first { $0.hasPrefix("Lamp ") })
        #expect(lamp.contains("Living Room") && lamp.contains("lightbulb"), "\(lamp)")

        let wide = try daemon.homectl("accessories", "-o", "wide", "--no-headers")
        let wideLines = wide.stdout.split(separator: "\n").map(String.init)
        #expect(wideLines.count == 6, "no header: \(wide.stdout)")
        #expect(wideLines.contains { $0.hasPrefix("Lamp ") && $0.contains("Simulated Color Bulb") }, "\(wide.stdout)")

        let rooms = try daemon.homectl("rooms", "-o", "table")
        let hallway = try #require(rooms.stdout.split(separator: "\n").first { $0.hasPrefix("Hallway ") })
        #expect(hallway.contains("Front Door Lock,Doorbell"), "\(rooms.stdout)")

        let json = try daemon.homectl("rooms", "-o", "json")
        let alias = try daemon.homectl("rooms", "--json")
        #expect(json.status == 0 && json.stdout == alias.stdout, "\(json.stdout) vs \(alias.stdout)")
        #expect(json.stdout.hasPrefix("[{\"id\":"), "\(json.stdout)")

        let both = try daemon.homectl("rooms", "--json", "-o", "yaml")
        #expect(both.status == 64, "\(both.stderr)")
        #expect(both.stderr.contains("--json and -o yaml ask for two formats"), "\(both.stderr)")
        let watch = try daemon.homectl("watch", "-o", "table")
        #expect(watch.status == 64, "\(watch.stderr)")
        #expect(watch.stderr.contains("-o table is for the commands that list"), "\(watch.stderr)")
    }

    @Test("-o yaml holds the same objects as -o json, strings quoted, fields in order")
    func yaml() throws {
        let daemon = try DaemonProcess()
        let yaml = try daemon.homectl("homes", "-o", "yaml")
        #expect(yaml.status == 0, "\(yaml.stderr)")
        #expect(yaml.stdout.hasPrefix("- id: 1\n  name: \"Demo Home\"\n  primary: true\n"), "\(yaml.stdout)")
        // Global options go before the subcommand too.
        let status = try run(builtExecutable("homectl"), ["-o", "yaml", "--socket", daemon.socketPath, "status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("server_version: \""), "\(status.stdout)")
        #expect(status.stdout.contains("\nrole: \"admin\""), "\(status.stdout)")
    }

    @Test("accessories shows each one's state: On with its brightness, a temperature, Secured")
    func states() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "40").status == 0)
        #expect(try daemon.homectl("set", "Hallway/Front Door Lock/LockTargetState", "1").status == 0)
        let text = try daemon.homectl("accessories")
        #expect(text.status == 0, "\(text.stderr)")
        let lamp = try #require(text.stdout.split(separator: "\n").first { $0.contains("Lamp") })
        #expect(lamp.contains("On, 40%"), "\(text.stdout)")
        let thermostat = try #require(text.stdout.split(separator: "\n").first { $0.contains("Thermostat") })
        #expect(thermostat.contains(" °C"), "\(text.stdout)")
        let json = try daemon.homectl("accessories", "--json")
        #expect(json.stdout.contains("\"name\":\"Lamp\""), "\(json.stdout)")
        #expect(json.stdout.contains("\"state\":\"On, 40%\""), "\(json.stdout)")

        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "false").status == 0)
        let off = try daemon.homectl("accessories", "-o", "table")
        let lampOff = try #require(off.stdout.split(separator: "\n").first { $0.hasPrefix("Lamp ") })
        #expect(lampOff.contains(" Off "), "\(off.stdout)")
    }

    @Test("get ACCESSORY reads every readable characteristic of it; a name that is neither fails as before")
    func getAccessory() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "33").status == 0)
        let get = try daemon.homectl("get", "Lamp")
        #expect(get.status == 0, "\(get.stderr)")
        #expect(
            get.stdout.contains("Living Room/Lamp/Lightbulb/Brightness") && get.stdout.contains("33%"), "\(get.stdout)")
        #expect(get.stdout.contains("Living Room/Lamp/Lightbulb/Hue"), "\(get.stdout)")
        #expect(get.stdout.contains("Living Room/Lamp/AccessoryInformation/Manufacturer"), "\(get.stdout)")
        #expect(!get.stdout.contains("/Identify"), "Identify is write-only: \(get.stdout)")
        let byRoom = try daemon.homectl("get", "Living Room/Lamp", "--json")
        #expect(byRoom.status == 0 && byRoom.stdout.contains("\"value\":33"), "\(byRoom.stdout)")

        let nothing = try daemon.homectl("get", "Nowhere")
        #expect(nothing.status == 5, "\(nothing.stderr)")
    }

    /// What bash's completion offers for a command line whose last word is being
    /// completed: the real script from `--generate-completion-script bash`, sourced
    /// and called as bash calls it.
    private func bashCompletes(_ daemon: DaemonProcess, _ words: String) throws -> [String] {
        let script = """
            source <("$HOMECTL" --generate-completion-script bash)
            COMP_WORDS=("$HOMECTL" \(words))
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _homectl "$HOMECTL" "${COMP_WORDS[$COMP_CWORD]}" "${COMP_WORDS[$((COMP_CWORD-1))]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        var environment = daemon.environment
        environment["HOMECTL"] = builtExecutable("homectl")
        let result = try run("/bin/bash", ["-c", script], environment: environment)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("bash completes after a backslashed space, after global options, rename, assign, scenes, values; once each")
    func bashCompletion() throws {
        let daemon = try DaemonProcess()
        let escaped = try bashCompletes(daemon, #"get 'Living\ Room/'"#)
        #expect(escaped.contains("Living Room/Lamp") && escaped.contains("Living Room/Lamp/Brightness"), "\(escaped)")
        let quoted = try bashCompletes(daemon, #"get "'Living Room/La""#)
        #expect(quoted.contains("Living Room/Lamp"), "\(quoted)")
        let afterGlobal = try bashCompletes(daemon, "--socket \(daemon.socketPath) --timeout 5 show La")
        #expect(afterGlobal == ["Lamp"], "\(afterGlobal)")
        let values = try bashCompletes(daemon, #"set 'Hallway/Front\ Door\ Lock/LockTargetState' ''"#)
        #expect(values == ["Unlocked", "Locked"], "\(values)")
        let bool = try bashCompletes(daemon, #"set 'Living\ Room/Lamp/On' ''"#)
        #expect(bool == ["true", "false"], "\(bool)")
        let renamable = try bashCompletes(daemon, "rename Liv")
        #expect(renamable.contains("Living Room") && renamable.contains("Living Room/Lamp"), "\(renamable)")
        #expect(Set(renamable).count == renamable.count, "each name once: \(renamable)")
        #expect(try bashCompletes(daemon, "assign Lamp Bed") == ["Bedroom"])
        #expect(try daemon.homectl("scenes", "create", "Good Night").status == 0)
        let scenes = try bashCompletes(daemon, "triggers create X --scene Go")
        #expect(scenes == ["Good Night"], "\(scenes)")
    }

    @Test("completion asks the daemon for PATHs and accessories; nothing, at once, when no daemon answers")
    func completion() throws {
        let daemon = try DaemonProcess()
        let paths = try daemon.homectl("---completion", "get", "--", "positional@0", "0", "6", "Living")
        #expect(paths.status == 0, "\(paths.stderr)")
        let names = paths.stdout.split(separator: "\n").map(String.init)
        #expect(names.contains("Living Room/Lamp"), "\(paths.stdout)")
        #expect(names.contains("Living Room/Lamp/Brightness"), "\(paths.stdout)")
        #expect(names.allSatisfy { $0.hasPrefix("Living") }, "\(paths.stdout)")

        let accessories = try daemon.homectl(
            "---completion", "watch", "--", "--accessory", "1", "2", "--accessory", "La")
        #expect(accessories.stdout.split(separator: "\n").contains("Lamp"), "\(accessories.stdout)")

        let lonely = try run(
            builtExecutable("homectl"),
            ["---completion", "get", "--", "positional@0", "2", "0", "--socket", daemon.directory + "/none.sock", ""])
        #expect(lonely.status == 0 && lonely.stdout.isEmpty, "\(lonely.stdout) \(lonely.stderr)")
    }
}
