import Testing
@testable import SimKit

/// `WorldEvent` packs into the queue's `Event` and back without loss: every case, with
/// its payloads at their edges, and the packed fields where the world's digest and the
/// queue's runs read them.
struct WorldEventTests {
    /// The largest device index an event may name (`Event.world` is the world's own).
    static let maxDevice: DeviceIndex = Event.world - 1
    static let devices: [DeviceIndex] = [0, 1, maxDevice]
    static let words: [UInt32] = [0, 1, .max]
    static let stamps: [UInt16] = [0, 1, 0x100, .max]

    /// Every case, each with payloads at 0, 1 and their largest values.
    static var samples: [WorldEvent] {
        var out: [WorldEvent] = [.statement]
        for d in devices {
            for w in words {
                out.append(.personAction(device: d, statement: w))
                out.append(.requestArrives(device: d, slot: w))
                out.append(.responseArrives(device: d, slot: w))
                for kind in TimerKind.allCases {
                    for stamp in stamps { out.append(.timer(kind, device: d, arg: w, stamp: stamp)) }
                }
            }
        }
        for kind: UInt8 in [0, 1, .max] {
            for target in devices + [Event.world] { out.append(.faultEnds(FaultEnd(kind: kind, target: target))) }
        }
        return out
    }

    @Test func everyCaseRoundTrips() {
        let samples = Self.samples
        #expect(samples.count == 1 + 3 * (3 * (3 + TimerKind.allCases.count * 4)) + 3 * 4)
        for (i, event) in samples.enumerated() {
            for time: SimTime in [0, 1, .max] {
                let packed = event.packed(time: time)
                #expect(packed.time == time)
                #expect(packed.seq == 0)
                #expect(packed.target == event.target)
                #expect(WorldEvent(packed) == event, "sample \(i): \(event) unpacked as \(WorldEvent(packed))")
                // Through the queue, which sets `seq`: the same event comes out.
                var q = EventQueue()
                let due = min(time, 1 << 40)
                q.push(event.packed(time: due))
                let popped = q.pop()
                #expect(popped.map(WorldEvent.init) == event)
                #expect(popped?.target == event.target && popped?.time == due)
            }
        }
    }

    /// The event's target is the device it names, or the world.
    @Test func targets() {
        let d = Self.maxDevice
        #expect(WorldEvent.statement.target == Event.world)
        #expect(WorldEvent.personAction(device: d, statement: 3).target == d)
        #expect(WorldEvent.requestArrives(device: d, slot: 3).target == d)
        #expect(WorldEvent.responseArrives(device: d, slot: 3).target == d)
        #expect(WorldEvent.timer(.reportRetry, device: d, arg: 3, stamp: 4).target == d)
        // A fault's end is its device's, or the world's for a server-wide window.
        #expect(WorldEvent.faultEnds(FaultEnd(kind: Offline.endCode, target: d)).target == d)
        #expect(WorldEvent.faultEnds(FaultEnd(kind: ServerDown.endCode, target: Event.world)).target == Event.world)
    }

    /// The packed kinds are the digest's numbers (`stateParts`), and only request and
    /// response events carry a request slot.
    @Test func packedKindsAndSlots() {
        let cases: [(WorldEvent, UInt8)] = [
            (.statement, 1), (.personAction(device: 2, statement: 9), 2), (.requestArrives(device: 2, slot: 9), 3),
            (.responseArrives(device: 2, slot: 9), 4), (.timer(.indexChunk, device: 2, arg: 9, stamp: 1), 5),
            (.faultEnds(FaultEnd(kind: ServerDown.endCode, target: Event.world)), 7),
        ]
        for (event, kind) in cases {
            let packed = event.packed(time: 5)
            #expect(packed.kind == kind, "\(event)")
            let isRequest = kind == 3 || kind == 4
            #expect(WorldEvent.requestSlot(of: packed) == (isRequest ? 9 : nil), "\(event)")
        }
        // A timer's `sub` and `aux` hold its kind and stamp; a fault end's `sub` says whose kind.
        let timer = WorldEvent.timer(.reportRetry, device: 2, arg: 9, stamp: 0x1234).packed(time: 5)
        #expect(timer.sub == TimerKind.reportRetry.rawValue && timer.aux == 0x1234 && timer.arg == 9)
        let end = WorldEvent.faultEnds(FaultEnd(kind: SlowResponses.endCode, target: 7)).packed(time: 5)
        #expect(end.sub == SlowResponses.endCode && end.target == 7 && end.arg == 0)
    }
}
