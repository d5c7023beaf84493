import Dispatch
import Foundation
import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

/// A real `homed` killed with SIGKILL at a random moment while a client writes
/// values and changes the layout, a hundred times on one database: every trial's
/// restart must show every acknowledged change (and may show the one in flight).
@Suite("kill -9 trials", .timeLimit(.safetyNet))
struct KillNineTrialsTests {
    /// The three values one write call sets together, from a counter that never repeats a state.
    struct ValueState: Equatable, CustomStringConvertible {
        var counter: Int
        var brightness: CharacteristicValue { .int(Int64(counter % 101)) }
        var target: CharacteristicValue { .float(10 + Double(counter % 281) / 10) }
        var on: CharacteristicValue { .bool(counter % 2 == 0) }
        var description: String { "write #\(counter)" }
    }

    /// What the client knows of one trial: the last acknowledged write and layout
    /// change, and the ones it sent without hearing back.
    final class Acknowledged: @unchecked Sendable {
        private let lock = NSLock()
        private var _values: ValueState?
        private var _valuesInFlight: ValueState?
        private var _rooms: [String] = []
        private var _roomInFlight: String?

        func sending(_ state: ValueState) { lock.withLock { _valuesInFlight = state } }
        func acknowledged(_ state: ValueState) {
            lock.withLock {
                _values = state
                _valuesInFlight = nil
            }
        }
        func sending(room: String) { lock.withLock { _roomInFlight = room } }
        func acknowledged(room: String) {
            lock.withLock {
                _rooms.append(room)
                _roomInFlight = nil
            }
        }
        var values: (acked: ValueState?, inFlight: ValueState?) { lock.withLock { (_values, _valuesInFlight) } }
        var rooms: (acked: [String], inFlight: String?) { lock.withLock { (_rooms, _roomInFlight) } }
    }

    @Test("kill -9 at a random moment, 100 times: no acknowledged value or layout change is lost")
    func hundredKills() async throws {
        // Blocking clients on threads of their own: a test that blocks (spawning,
        // killing and waiting for processes) stays off the concurrency pool.
        try await onDedicatedThread { try Self.trials() }
    }

    static func trials() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-kill-trials")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The daemon's demo home has the same ids as the model's.
        let demo = DemoHome.make(nowMs: 0)
        let brightness = try demo.resolve(path: "Living Room/Lamp/Brightness")
        let target = try demo.resolve(path: "Living Room/Thermostat/TargetTemperature")
        let on = try demo.resolve(path: "Living Room/Lamp/On")
        let homeID = try #require(demo.homes.first?.key)
        var counter = 0
        // The value states the database may hold: the last acknowledged and any sent
        // since (before the first acknowledged write, the initial values too).
        var possibleValues: [[CharacteristicValue?]] = [
            [brightness, target, on].map { demo.characteristics[$0]?.value }
        ]
        var acknowledgedRooms: [String] = []
        var writesAcknowledged = 0
        var trialsWithWriteInFlight = 0
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<100 {
            let daemon = try DaemonProcess(directory: directory)
            let reader = try BlockingHomeClient(path: daemon.socketPath, name: "kill-trials-reader")
            let found = try reader.read([brightness, target, on]).reads.map(\.value)
            #expect(
                possibleValues.contains(found),
                "trial \(trial): values \(found.map { "\($0.map(String.init(describing:)) ?? "none")" }) are none of \(possibleValues)"
            )
            let rooms = try daemon.homectl("rooms", "--json").stdout
            for room in acknowledgedRooms where !rooms.contains("\"\(room)\"") {
                Issue.record("trial \(trial): acknowledged room \(room) is gone")
            }

            let current = Acknowledged()
            let startCounter = counter
            let done = DispatchGroup()
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                guard let client = try? BlockingHomeClient(path: daemon.socketPath, name: "kill-trials-values") else {
                    return
                }
                var next = startCounter
                while true {
                    next += 1
                    let state = ValueState(counter: next)
                    current.sending(state)
                    let request = WriteCharacteristicsRequest(writes: [
                        CharacteristicWrite(characteristicID: brightness, value: state.brightness),
                        CharacteristicWrite(characteristicID: target, value: state.target),
                        CharacteristicWrite(characteristicID: on, value: state.on),
                    ])
                    guard let response = try? client.write(request) else { return }
                    guard response.results.allSatisfy({ $0.error == nil }) else {
                        Issue.record("trial \(trial): write #\(next) refused: \(response.results)")
                        return
                    }
                    current.acknowledged(state)
                }
            }
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                guard let client = try? BlockingHomeClient(path: daemon.socketPath, name: "kill-trials-layout") else {
                    return
                }
                for index in 0... {
                    let name = "Trial \(trial) Room \(index)"
                    current.sending(room: name)
                    guard
                        (try? client.call(
                            HomeMethods.changeLayout, LayoutRequest(.addRoom(name: name, homeID: homeID)))) != nil
                    else { return }
                    current.acknowledged(room: name)
                }
            }
            // Anywhere from the first acknowledged write to a few dozen milliseconds after
            // it: from the writes' progress, not from their start, which a busy machine
            // may delay past any fixed time.
            let deadline = Date().addingTimeInterval(patience)
            while current.values.acked == nil && Date() < deadline { usleep(1_000) }
            usleep(UInt32.random(in: 0..<40_000, using: &generator))
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
            done.wait()
            let (acked, inFlight) = current.values
            counter = inFlight?.counter ?? acked?.counter ?? counter
            if let acked {
                writesAcknowledged += 1
                possibleValues = [[acked.brightness, acked.target, acked.on]]
            }
            if let inFlight {
                trialsWithWriteInFlight += 1
                possibleValues.append([inFlight.brightness, inFlight.target, inFlight.on])
            }
            acknowledgedRooms += current.rooms.acked
        }
        // The trials did exercise the race: most were killed with a write acknowledged
        // (each waits for one, for as long as it takes) and one in flight.
        #expect(writesAcknowledged > 50)
        #expect(trialsWithWriteInFlight > 50)
    }
}
