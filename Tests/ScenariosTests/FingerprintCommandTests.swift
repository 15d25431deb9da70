import Foundation
import Testing
import SimKit
import Scenarios
@testable import SimKitCommand

/// An SDK core that hands every input to the reference, as a thin adapter would: to the
/// engine it is not `ReferenceSDK`, so it runs through the generic path.
struct DelegatingSDK: SDKCore {
    var core = ReferenceSDK()
    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
    }
    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
}

/// `simkit fingerprint` runs custom cores by name, as `simkit fuzz` does: one that behaves
/// as the reference prints the reference's line, and an unknown name is bad input.
@Suite struct FingerprintCommandTests {
    static let cores = SDKCores(["same": DelegatingSDK.self, "other": OtherConstantsSDK.self],
                                servers: ["backend": DelegatingServer.self, "leaky": IgnoresDisableServer.self])
    static let small = ["--seed", "3", "--devices", "40", "--days", "14"]

    @Test func aDelegatingCorePrintsTheReferenceLine() throws {
        let reference = try FingerprintCommand.output(Self.small, Self.cores)
        #expect(reference.status == 0 && reference.text.hasPrefix("fingerprint "), "\(reference.text)")
        // What the command returns is what the reference `simkit` prints.
        let printed = try SimkitProcess.run(["fingerprint"] + Self.small)
        #expect(printed.status == 0 && printed.stdout == reference.text, "\(printed.stdout) vs \(reference.text)")

        let same = try FingerprintCommand.output(Self.small + ["--sdk", "custom:same"], Self.cores)
        #expect(same.status == 0 && same.text == reference.text, "\(same.text) vs \(reference.text)")
        let backend = try FingerprintCommand.output(Self.small + ["--sdk", "custom:same", "--server", "custom:backend"], Self.cores)
        #expect(backend.text == reference.text, "\(backend.text) vs \(reference.text)")
        // The named core is the one that runs: another core writes another trace.
        let other = try FingerprintCommand.output(Self.small + ["--sdk", "custom:other"], Self.cores)
        #expect(other.text.hasPrefix("fingerprint ") && other.text != reference.text, "\(other.text)")
        // Checked, too: the same lines, nothing broken.
        let checked = try FingerprintCommand.output(Self.small + ["--check"], Self.cores)
        let sameChecked = try FingerprintCommand.output(Self.small + ["--check", "--server", "custom:backend"], Self.cores)
        #expect(checked.status == 0 && sameChecked.status == 0 && sameChecked.text == checked.text, "\(sameChecked.text)")
        #expect(SimKitCommand.run(["fingerprint"] + Self.small + ["--sdk", "custom:same"], cores: Self.cores) == 0)
    }

    /// The standard workload disables the app on day 10: a server that ignores the disable
    /// is caught by `--check` on the generic path (exit 1, the S4 invariant named).
    @Test func aLeakyServerIsCaughtByCheck() throws {
        let leaky = try FingerprintCommand.output(Self.small + ["--check", "--server", "custom:leaky"], Self.cores)
        #expect(leaky.status == 1)
        #expect(leaky.text.contains("broken: disable-stops-every-key x"), "\(leaky.text)")
        #expect(SimKitCommand.run(["fingerprint"] + Self.small + ["--check", "--server", "custom:leaky"], cores: Self.cores) == 1)
    }

    @Test func anUnknownCoreIsBadInput() throws {
        #expect(SimKitCommand.run(["fingerprint", "--server", "custom:nope"], cores: Self.cores) == 2)
        #expect(SimKitCommand.run(["fingerprint", "--sdk", "custom:nope"], cores: Self.cores) == 2)
        #expect(SimKitCommand.run(["fingerprint", "--server", "mutant:x"], cores: Self.cores) == 2)
        #expect(throws: UsageError.self) { try FingerprintCommand.output(["--server", "custom:leak"], Self.cores) }
        let r = try SimkitProcess.run(["fingerprint", "--server", "custom:nope"])
        #expect(r.status == 2 && r.stdout.isEmpty)
        #expect(r.stderr.contains("unknown server core 'nope'"), "\(r.stderr)")
        let help = try FingerprintCommand.output(["--help"], Self.cores).text
        #expect(help.contains("--server S") && help.contains("custom server cores of this tool (--server custom:NAME): backend, leaky"), "\(help)")
    }
}
