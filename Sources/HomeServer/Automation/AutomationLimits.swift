/// The guards that keep automation from running away, and how late a timer may be.
///
/// Two rules keep triggers from looping on their own writes:
/// - **Cascade**: a change made by a trigger's scenes never fires that trigger
///   again, nor any trigger already in the chain that led to it (T1's scene fires
///   T2, whose scene cannot fire T1 or T2); and a chain stops after
///   `maxCascadeDepth` triggers. The chain travels in the origin of the changes
///   the scenes make, so this holds for a write a provider confirms later just as
///   for one the daemon applies at once.
/// - **Rate**: an event trigger fires at most `maxFirings` times in any
///   `rateWindowMs`; later matches in the window are dropped and logged once. This
///   bounds loops that pass through something outside that reports as itself (a
///   provider answering a scene's write with a further change of its own).
public struct AutomationLimits: Sendable, Hashable {
    /// How many times an event trigger may fire within `rateWindowMs`.
    public var maxFirings: Int
    public var rateWindowMs: Int64
    /// How many triggers may follow one another, each fired by its predecessor's scenes.
    public var maxCascadeDepth: Int
    /// A timer whose moment passed longer ago than this (the machine slept, the
    /// clock was set forward) is skipped, not fired late.
    public var timerGraceMs: Int64
    /// What a daemon that was down when a timer or sun trigger was due does at its
    /// next start: false (the default) skips the missed moments; true fires each
    /// such trigger once, at start, if it was due since it last fired (as the
    /// history tells; a trigger that never fired has nothing to catch up).
    public var catchUpMissed: Bool
    /// What a daemon that was down when a trigger's end (an undo) was due does at
    /// its next start: true (the default) undoes at once; false leaves the values
    /// as they are, with a note.
    public var runMissedEnds: Bool

    public init(
        maxFirings: Int = 10, rateWindowMs: Int64 = 10_000, maxCascadeDepth: Int = 8,
        timerGraceMs: Int64 = 60_000, catchUpMissed: Bool = false, runMissedEnds: Bool = true
    ) {
        self.catchUpMissed = catchUpMissed
        self.runMissedEnds = runMissedEnds
        self.maxFirings = max(maxFirings, 1)
        self.rateWindowMs = max(rateWindowMs, 0)
        self.maxCascadeDepth = max(maxCascadeDepth, 1)
        self.timerGraceMs = max(timerGraceMs, 0)
    }
}
