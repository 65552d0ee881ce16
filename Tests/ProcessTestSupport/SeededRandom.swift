/// SplitMix64: the one seeded generator of every test module, so a test that draws random
/// inputs (fuzzed bytes, kill moments, jitter) draws the same ones on every run and machine.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The generator's whole state; two generators with the same state draw the same numbers.
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (`bound` > 0), with SplitMix64's own modulo, as the tests were seeded.
    public mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
