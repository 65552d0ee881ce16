import App
import Foundation
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

    @Test func aDayIsMidnightUTCInTheProlepticGregorianCalendar() throws {
        let specs: [CommandLineOptions.Spec] = [.init("--since", value: "DATE", "")]
        // Days since 1970 from Python's date.toordinal(), which is proleptic Gregorian.
        for (text, days) in [("1970-01-01", 0), ("1500-03-01", -171_605), ("1582-10-04", -141_438), ("0001-01-01", -719_162),
                             ("2000-02-29", 11_016), ("0000-01-01", -719_528)] {
            let options = try CommandLineOptions(["--since", text], specs: specs, usage: "u")
            #expect(try options.date("--since", usage: "u") == Date(timeIntervalSince1970: Double(days) * 86_400), "\(text)")
        }
        for text in ["2026-02-30", "2026-13-01", "2026-1-01", "+026-01-01", "2026-01-01x", "1900-02-29"] {
            let options = try CommandLineOptions(["--since", text], specs: specs, usage: "u")
            #expect(throws: UsageError.self, "\(text)") { try options.date("--since", usage: "u") }
        }
    }
}

/// `--` ends options (POSIX Utility Syntax Guideline 10): what follows is positional, whatever it looks like.
@Suite struct DoubleDashTests {
    let specs: [CommandLineOptions.Spec] = [.init("--config", value: "PATH", ""), .init("--purge", ""), .init("--name", value: "NAME", "")]

    @Test(arguments: [
        (["--", "-x"], ["-x"], false, nil as String?),
        (["--purge", "--", "-x"], ["-x"], true, nil),
        (["--", "--purge"], ["--purge"], false, nil),
        (["--", "-h", "--config", "c.json"], ["-h", "--config", "c.json"], false, nil),
        (["--config", "c.json", "--", "-x", "--"], ["-x", "--"], false, "c.json"),
        (["a", "--", "b"], ["a", "b"], false, nil),
        (["--"], [], false, nil),
        (["--", ""], [""], false, nil),
    ])
    func everythingAfterADoubleDashIsPositional(_ arguments: [String], _ positionals: [String], _ purge: Bool, _ config: String?) throws {
        let options = try CommandLineOptions(arguments, specs: specs, usage: "u")
        #expect(options.positionals == positionals)
        #expect(options.has("--purge") == purge)
        #expect(options["--config"] == config)
    }

    @Test func aDashValueIsAValueButADoubleDashIsNot() throws {
        #expect(try CommandLineOptions(["--name", "-x"], specs: specs, usage: "u")["--name"] == "-x")
        #expect(try CommandLineOptions(["--name=-x"], specs: specs, usage: "u")["--name"] == "-x")
        #expect(throws: UsageError.self) { try CommandLineOptions(["--name", "--", "x"], specs: specs, usage: "u") }
    }

    @Test func aLoneDashWordSaysHowToPassIt() {
        do {
            _ = try CommandLineOptions(["-x"], specs: specs, usage: "u")
            Issue.record("-x parsed")
        } catch let error as UsageError {
            #expect(error.message.contains("put -- before it"), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
