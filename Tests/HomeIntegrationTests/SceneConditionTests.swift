import Foundation
@_spi(Wire) import HomeTesting
import Testing

@Suite("scenes with conditional actions", .serialized, .timeLimit(.safetyNet))
struct SceneConditionTests {
    @Test("an action with --if writes only while the characteristic holds that value; the others run; it is kept")
    func conditionalAction() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-scene-if")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var daemon: DaemonProcess? = try DaemonProcess(directory: directory)
        for arguments in [
            ["scenes", "create", "Brighter"],
            ["scenes", "add-action", "Brighter", "Living Room/Lamp/Brightness", "80", "--if", "20"],
            ["scenes", "add-action", "Brighter", "Living Room/Lamp/On", "true"],
            ["set", "Living Room/Lamp/Brightness", "50"], ["set", "Living Room/Lamp/On", "false"],
        ] {
            let result = try run(builtExecutable("homectl"), arguments, environment: daemon!.environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let refused = try daemon!.homectl("scenes", "run", "Brighter")
        #expect(refused.status == 9, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("is 50"), "\(refused.stderr)")
        #expect(try daemon!.homectl("get", "Living Room/Lamp/Brightness").stdout.contains("50%"))
        #expect(try daemon!.homectl("get", "Living Room/Lamp/On").stdout.contains("true"), "the other action ran")
        #expect(try daemon!.homectl("set", "Living Room/Lamp/Brightness", "20").status == 0)
        let ran = try daemon!.homectl("scenes", "run", "Brighter")
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(try daemon!.homectl("get", "Living Room/Lamp/Brightness").stdout.contains("80%"))
        // Kept across a restart, shown in the listing and the export.
        daemon!.child.signal(SIGKILL)
        daemon!.child.wait()
        daemon = nil
        daemon = try DaemonProcess(directory: directory)
        let listing = try daemon!.homectl("scenes")
        #expect(listing.stdout.contains("if 20%"), "\(listing.stdout)")
        #expect(try daemon!.homectl("export").stdout.contains("only_if: 20"))
        let bad = try daemon!.homectl(
            "scenes", "add-action", "Brighter", "Living Room/Lamp/Brightness", "80", "--if", "abc")
        #expect(bad.status == 3, "\(bad.stderr)")
    }
}
