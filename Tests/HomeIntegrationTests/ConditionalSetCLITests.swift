import Foundation
import Testing

@Suite("homectl set --if", .timeLimit(.safetyNet))
struct ConditionalSetCLITests {
    @Test("--if a value the characteristic does not hold: exit 9 with the current value and seq, nothing written")
    func refused() throws {
        let daemon = try DaemonProcess()
        let refused = try daemon.homectl("set", "Living Room/Lamp/Brightness", "42", "--if", "79")
        #expect(refused.status == 9, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("(Brightness) is 80, last changed at seq 0, not 79 as the write expected"))
        #expect(refused.stderr.contains("nothing written"))
        let get = try daemon.homectl("get", "Living Room/Lamp/Brightness", "--json")
        let reads = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [[String: Any]]
        #expect(reads?.first?["value"] as? Int == 80)
    }

    @Test("--if the value it holds (read like VALUE: on, off): written")
    func accepted() throws {
        let daemon = try DaemonProcess()
        let set = try daemon.homectl("set", "Living Room/Lamp/Brightness", "42", "--if", "80")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("Brightness = 42% (seq "))
        let off = try daemon.homectl("set", "Living Room/Lamp/On", "off", "--if", "on")
        #expect(off.status == 0, "\(off.stderr)")
        let again = try daemon.homectl("set", "Living Room/Lamp/On", "on", "--if", "on")
        #expect(again.status == 9)
        #expect(again.stderr.contains("(On) is false"))
        let badCurrent = try daemon.homectl("set", "Living Room/Lamp/Brightness", "42", "--if", "bright")
        #expect(badCurrent.status == 3)
        #expect(badCurrent.stderr.contains("takes a whole number, not 'bright'"))
    }
}
