import App
import Testing

@Suite struct CommandLineOptionsTests {
    let specs: [CommandLineOptions.Spec] = [.init("--config", value: "PATH", ""), .init("--json", ""), .init("--limit", value: "N", "")]

    @Test func valuesFlagsAndPositionalsParse() throws {
        let options = try CommandLineOptions(["p1", "--config", "a.json", "--json", "--limit=5"], specs: specs, usage: "u")
        #expect(options["--config"] == "a.json" && options.has("--json") && options.positionals == ["p1"])
        #expect(try options.int("--limit", in: 1...10, default: 20, usage: "u") == 5)
    }

    @Test(arguments: [["--bogus"], ["--config"], ["--config", "--json"], ["--json=yes"], ["--config", "a", "--config", "b"], ["-x"]])
    func badCommandLinesAreUsageErrors(arguments: [String]) {
        #expect(throws: UsageError.self) { try CommandLineOptions(arguments, specs: specs, usage: "u") }
    }

    @Test func anOutOfRangeNumberIsAUsageError() throws {
        let options = try CommandLineOptions(["--limit", "0"], specs: specs, usage: "u")
        #expect(throws: UsageError.self) { try options.int("--limit", in: 1...10, default: 20, usage: "u") }
    }
}
