import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch
import SimKit
import Testing

/// `StateDigest.add(any:)` decides how to read a type once per digest (`KindCache`); these
/// tests hold it equal, word for word, to the plain version that casts and reflects on
/// every value (`addPlain`).
@Suite struct StateDigestTests {
    enum Payload { case none, one(Int8), two(UInt16, String) }
    struct Mixed {
        var small: Int8 = -3
        var wide: Int16 = -1
        var word: Int = -42
        var unsigned: UInt32 = 0xFFFF_FFFF
        var flag = true
        var ratio = 0.25
        var name = "photos#1"
        var maybe: UInt16? = 7
        var nothing: UInt16? = nil
        var pair: (UInt8, Bool) = (200, false)
        var list: [Payload] = [.none, .one(-128), .two(65_535, "x")]
        var inner = Inner()
        var nothingAtAll = Empty()
        /// Elements that open as `Any`, not as their own type (read by `Mirror`).
        var boxed: [Any] = [Inner(), (UInt8(7), Int16(-2)), Empty()]
    }
    struct Inner { var big: UInt64 = .max; var tiny: Int8 = .min; var on = false; var tag: Payload = .none }
    struct Empty {}
    final class Box { var n = 1 }
    /// Members whose bytes are not a strong reference (`weak`, `unowned`): read by `Mirror`.
    struct Holder {
        var n: UInt8 = 1
        weak var weakly: Box?
        unowned var unownedly: Box
        var strongly: Box?
        var maybe: UInt32? = 5
        init(_ b: Box) { weakly = b; unownedly = b; strongly = b }
    }

    func bothWays(_ value: Any) -> (fast: StateDigest, plain: StateDigest) {
        var fast = StateDigest(), plain = StateDigest()
        fast.add(any: value)
        plain.addPlain(any: value)
        return (fast, plain)
    }

    @Test func everyKindOfValueDigestsAsThePlainWay() {
        for value in [Mixed(), Mixed(small: 127, wide: .min, word: .max, unsigned: 0, flag: false, ratio: -0.0,
                                     name: "", maybe: nil, nothing: 0, pair: (0, true), list: [])] as [Mixed] {
            let (fast, plain) = bothWays(value)
            #expect(fast == plain)
            #expect(fast.words == plain.words)
            #expect(fast.words >= 13, "every member is read")
        }
        #expect(bothWays(Mixed()).fast != bothWays(Mixed(small: -4)).fast)
        // An optional is marked, so nil is not the same as a value equal to nil's marker.
        #expect(bothWays(Mixed(maybe: nil)).fast != bothWays(Mixed(maybe: 0x0E)).fast)
        #expect(bothWays(Mixed(maybe: nil)).plain != bothWays(Mixed(maybe: 0x0E)).plain)
        // Twice, so the second digest reads every type from the kinds the first one found.
        #expect(bothWays(Mixed()).fast == bothWays(Mixed()).plain)
        var inner = Inner()
        inner.big = 3
        #expect(bothWays(Mixed(boxed: [inner])).fast != bothWays(Mixed(boxed: [Inner()])).fast)
    }

    @Test func weakAndUnownedMembersAreReadSafely() {
        let box = Box()
        for _ in 0..<2 {   // the second time from the kinds the first found
            let (fast, plain) = bothWays(Holder(box))
            #expect(fast == plain && fast.words == plain.words)
            #expect(fast.references == 3)
        }
        withExtendedLifetime(box) {}
    }

    /// The world and checker states of an exploration's paths, both ways.
    @Test func worldStatesDigestAsThePlainWay() throws {
        var o = ExploreOptions()
        o.devices = 2
        o.maxActions = 2
        let explorer = try Explorer(options: o)
        let d1 = DeviceSelector.device(group: "photos", index: 1), d2 = DeviceSelector.device(group: "photos", index: 2)
        let paths: [[ExploreStep]] = [
            [ExploreStep(time: Ms.minute, action: .person(.open, d1))],
            [ExploreStep(time: Ms.minute, action: .person(.reset, d2)), ExploreStep(time: 2 * Ms.minute, action: .person(.open, d1))],
            [ExploreStep(time: Ms.minute, action: .person(.close, d1)), ExploreStep(time: Ms.minute + 30, action: .person(.query, d2))],
        ]
        var seen = 0
        for path in paths {
            let compiled = try ScenarioCompiler.compile(explorer.scenario(path: path, duration: path.last!.time + 25))
            var world = World<ReferenceSDK, InvariantChecker>(setup: compiled.setup, observer: InvariantChecker())
            world.run()
            let parts = world.stateParts() + world.observer.stateParts()
            var fast = StateDigest(), plain = StateDigest()
            fast.add(parts: parts)
            plain.addPlain(parts: parts)
            #expect(fast == plain)
            #expect(fast.words == plain.words && fast.references == plain.references)
            #expect(fast.references == 0)
            seen += fast.words
        }
        #expect(seen > 300)
    }
}
