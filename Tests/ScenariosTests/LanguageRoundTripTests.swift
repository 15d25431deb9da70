import Testing
import SimKit
@testable import ScenarioLanguage

/// `parse(print(ast)) == ast` and stable printing, over thousands of random valid scenarios.
@Suite("Language: print and parse round trip")
struct LanguageRoundTripTests {
    /// Seed ranges; each argument runs 500 scenarios, so a failure names a small range to re-run.
    @Test(arguments: 0..<5)
    func roundTrip(batch: Int) throws {
        for i in 0..<500 {
            let seed = UInt64(batch * 500 + i)
            var gen = LanguageASTGenerator(seed: seed)
            let ast = gen.make()
            #expect(ScenarioValidator.validate(ast).isEmpty, "seed \(seed): generated scenario is invalid")
            let text = ScenarioPrinter.print(ast)
            let result = ScenarioParser.parse(text, file: "gen-\(seed).scenario")
            guard let parsed = result.scenario else {
                Issue.record("seed \(seed): printed text does not parse:\n\(result.rendered)\n\(text)")
                return
            }
            #expect(parsed == ast, "seed \(seed)\n\(text)")
            #expect(ScenarioPrinter.print(parsed) == text, "seed \(seed): printing is not stable")
        }
    }

    @Test func sharesPrintWithUpToTwoDecimals() {
        #expect(Share(basisPoints: 50).text == "0.5")
        #expect(Share(basisPoints: 5).text == "0.05")
        #expect(Share(basisPoints: 1_234).text == "12.34")
        #expect(Share(basisPoints: 10_000).text == "100")
        #expect(Share(basisPoints: 6_000).count(of: 2_000) == 1_200)
        #expect(Share(basisPoints: 50).count(of: 2_000) == 10)
    }

    @Test func quantifiersMeanExactly() {
        #expect(Quantifier.compare(.exactly, .count(3)).holds(matching: 3, of: 10))
        #expect(!Quantifier.compare(.exactly, .count(3)).holds(matching: 4, of: 10))
        #expect(Quantifier.compare(.exactly, .share(Share(percent: 50))).holds(matching: 5, of: 10))
        #expect(Quantifier.compare(.atLeast, .share(Share(percent: 50))).holds(matching: 7, of: 10))
        #expect(Quantifier.all.holds(matching: 10, of: 10) && Quantifier.none.holds(matching: 0, of: 10))
    }
}
