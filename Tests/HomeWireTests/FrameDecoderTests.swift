import HomeModel
@_spi(Wire) import HomeWire
import NIOCore
import NIOTestUtils
import Testing

@Suite("frame decoder")
struct FrameDecoderTests {
    /// Frames of assorted sizes (0, 1, a few bytes, a few KiB) as (header+body, body).
    static func sampleFrames() -> [(ByteBuffer, ByteBuffer)] {
        [0, 1, 5, 127, 128, 4000].map { size in
            let body = ByteBuffer(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) })
            var framed = ByteBuffer()
            framed.writeInteger(UInt32(size))
            framed.writeImmutableBuffer(body)
            return (framed, body)
        }
    }

    @Test("frames fed one byte at a time, whole, and merged all decode (ByteToMessageDecoderVerifier)")
    func verifier() throws {
        let frames = Self.sampleFrames()
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: frames.map { ($0.0, [$0.1]) },
            decoderFactory: { FrameDecoder() })
    }

    @Test("arbitrary splits and merges of a frame stream yield exactly the frames, in order")
    func arbitrarySplits() throws {
        let frames = Self.sampleFrames() + Self.sampleFrames().reversed()
        var stream: [UInt8] = []
        for (framed, _) in frames { stream += Array(framed.readableBytesView) }
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<200 {
            var decoder = FrameDecoder()
            var buffer = ByteBuffer()
            var decoded: [ByteBuffer] = []
            var offset = 0
            while offset < stream.count {
                let chunk = Int(generator.next() % 300) + 1
                let end = min(offset + chunk, stream.count)
                buffer.writeBytes(stream[offset..<end])
                offset = end
                while let frame = try decoder.decode(buffer: &buffer) { decoded.append(frame) }
            }
            #expect(decoded == frames.map(\.1))
            #expect(buffer.readableBytes == 0)
        }
    }

    @Test("a length over the limit is refused before its body arrives")
    func tooLarge() {
        var decoder = FrameDecoder(maxFrameSize: 1024)
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(1025))
        #expect(
            throws: HomeError(.resourceExhausted, "frame of 1025 bytes exceeds the maximum frame size of 1024 bytes")
        ) {
            _ = try decoder.decode(buffer: &buffer)
        }
        var huge = ByteBuffer()
        huge.writeInteger(UInt32.max)
        var defaultDecoder = FrameDecoder()
        #expect(
            throws: HomeError(
                .resourceExhausted,
                "frame of \(UInt32.max) bytes exceeds the maximum frame size of \(defaultMaxFrameSize) bytes")
        ) {
            _ = try defaultDecoder.decode(buffer: &huge)
        }
    }

    @Test("a frame at exactly the limit is accepted")
    func exactlyAtLimit() throws {
        var decoder = FrameDecoder(maxFrameSize: 16)
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(16))
        buffer.writeBytes([UInt8](repeating: 7, count: 16))
        let frame = try #require(try decoder.decode(buffer: &buffer))
        #expect(frame.readableBytes == 16)
    }

    @Test("end of stream in the middle of a frame is a truncated-frame error")
    func truncated() {
        var decoder = FrameDecoder()
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(10))
        buffer.writeBytes([1, 2, 3])
        #expect(
            throws: HomeError(
                .unavailable, "connection closed in the middle of a frame (7 bytes of an incomplete frame)")
        ) {
            _ = try decoder.decodeLast(buffer: &buffer, seenEOF: true)
        }
    }
}

/// A small deterministic generator, so a failing split pattern can be reproduced.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
