// The faults' registry. Each kind of injected fault (SPEC §1.4) lives in one file of this
// folder, named after it: its statement, what it does to the world, how the search tools
// draw it, how the timeline shows it and its trace records. Here are only the lines that
// plug a kind in, each marked with what a new kind adds (docs/architecture.md, "Adding a
// fault kind"): the world reaches a kind through a `switch` on `Fault`, never through an
// existential, so each kind's code is specialised and inlined where the world runs.

/// A fault as the world injects it when its statement fires: one case a kind, each holding
/// its kind's `Injection` (devices by index, rates in basis points).
/// A new kind adds its case.
public enum Fault: Sendable, Equatable {
    case offline(Offline.Injection)
    case serverErrors(ServerErrors.Injection)
    case serverDown(ServerDown.Injection)
    case timeouts(Timeouts.Injection)
    case lostResponses(LostResponses.Injection)
    case slowResponses(SlowResponses.Injection)
    case serverRestart(ServerRestart.Injection)
    case portal(Portal.Injection)
    case phoneClock(PhoneClock.Injection)
    case backgroundLimit(BackgroundLimit.Injection)
    case diskFull(DiskFull.Injection)
    case reboot(Reboot.Injection)
    case kill(Kill.Injection)
}

/// The kinds, for what reads them one at a time (their trace records' text and marks, and
/// the language and the search tools): a table, not a `switch`, since none of it runs per event.
package enum Faults {
    /// The kinds, in the order the language lists them (and its did-you-mean hints).
    /// A new kind adds itself.
    package static let kinds: [any FaultKind.Type] = [
        Offline.self, ServerErrors.self, ServerDown.self, Timeouts.self, LostResponses.self, SlowResponses.self,
        ServerRestart.self, Portal.self, PhoneClock.self, BackgroundLimit.self, DiskFull.self, Reboot.self, Kill.self,
    ]

    /// Whose trace records are whose: the kinds, and the record the server-wide windows share.
    static let recordOwners: [any FaultRecords.Type] = kinds.map { $0 as any FaultRecords.Type } + [ServerWindow.self]
}

/// The fault windows in force in a world: each kind's own state (but `offline`'s, kept with
/// each device, `DeviceState.offlineUntil`, which the send path reads anyway), and the gates
/// of the stages of a request where windows act (`World+Network.swift` tests a gate, one
/// compare a request, and takes the faults' path only before it). A new kind that keeps
/// state adds its member; one that acts on requests raises its stage's gate when it opens
/// a window.
@usableFromInline struct FaultWindows: Sendable {
    @usableFromInline var serverErrors = ServerWindow()
    @usableFromInline var serverDown = ServerWindow()
    @usableFromInline var timeouts = ServerWindow()
    @usableFromInline var lostResponses = ServerWindow()
    @usableFromInline var slowResponses = SlowResponses.Windows()
    @usableFromInline var serverRestart = ServerWindow()
    @usableFromInline var portal = Portal.Windows()
    @usableFromInline var phoneClock = PhoneClock.Clocks()
    @usableFromInline var backgroundLimit = BackgroundLimit.Limits()
    @usableFromInline var diskFull = DiskFull.Disks()
    @usableFromInline var reboot = Reboot.Locks()
    @usableFromInline var kill = Kill.Pending()
    /// Raised when a kind that changes what a step is told (`clock`, `disk-full`, `reboot`)
    /// or how its writes land (`kill … at-write`) first sets a device's state, never
    /// lowered: the gate of `faultsOnTheStep` and of the plain step (`stepInline`).
    @usableFromInline var onTheStep = false
    /// The latest end of the windows that answer in the server's place (`server down`,
    /// `server errors`, `server restart`, any device's `portal`): the gate of `faultAnswer`.
    @usableFromInline var serverAnsweredUntil: SimTime = 0
    /// The latest end of the windows that act on answers after the server judged them
    /// (`lost-responses`, any device's `slow-responses`, `server restart`): the gate of `faultsOnTheWayBack`.
    @usableFromInline var answersFaultedUntil: SimTime = 0
    @inlinable init() {}
}

/// Which kind's window a `faultEnds` event may close (the kind's `endCode`), and whose: a
/// device, or `Event.world` for a server-wide window. `WorldEvent` packs it in the event's
/// `sub` and `target`.
@usableFromInline struct FaultEnd: Sendable, Equatable {
    @usableFromInline var kind: UInt8
    @usableFromInline var target: UInt32
    @inlinable init(kind: UInt8, target: UInt32) { self.kind = kind; self.target = target }
}

/// Where an answer goes once the server has judged its request (`faultsOnTheWayBack`).
@usableFromInline enum AnswerWay {
    /// Back at the link's speed (`answerTime`).
    case usual
    /// Nowhere: the server acted, the answer never arrives (S9).
    case lost
    /// Back this much later than the link would bring it.
    case delayed(SimTime)
}

extension SimWorld {
    /// Injects `fault`, fired by statement `index` (its `firing`-th firing).
    /// A new kind adds its line.
    @inlinable mutating func inject(_ fault: Fault, statement index: Int, firing: UInt32) {
        switch fault {
        case .offline(let f): inject(f, statement: index, firing: firing)
        case .serverErrors(let f): inject(f)
        case .serverDown(let f): inject(f)
        case .timeouts(let f): inject(f)
        case .lostResponses(let f): inject(f)
        case .slowResponses(let f): inject(f, statement: index, firing: firing)
        case .serverRestart(let f): inject(f)
        case .portal(let f): inject(f, statement: index, firing: firing)
        case .phoneClock(let f): inject(f, statement: index, firing: firing)
        case .backgroundLimit(let f): inject(f, statement: index, firing: firing)
        case .diskFull(let f): inject(f, statement: index, firing: firing)
        case .reboot(let f): inject(f, statement: index, firing: firing)
        case .kill(let f): inject(f, statement: index, firing: firing)
        }
    }

    /// A window may end now: the kind's `end` closes it unless a later one of the kind
    /// extended it. A new kind whose windows end by an event adds its line.
    @inlinable mutating func faultEnds(_ end: FaultEnd) {
        switch end.kind {
        case Offline.endCode: offlineEnds(device: end.target)
        case ServerErrors.endCode: serverWindowEnds(faults.serverErrors)
        case ServerDown.endCode: serverWindowEnds(faults.serverDown)
        case Timeouts.endCode: serverWindowEnds(faults.timeouts)
        case LostResponses.endCode: serverWindowEnds(faults.lostResponses)
        case SlowResponses.endCode: slowResponsesEnd(device: end.target)
        case ServerRestart.endCode: serverWindowEnds(faults.serverRestart)
        case Portal.endCode: portalEnds(device: end.target)
        case BackgroundLimit.endCode: backgroundLimitEvent(device: end.target)
        case Reboot.endCode: rebootBackgroundRun(device: end.target)
        default: preconditionFailure("no fault kind ends with code \(end.kind)")
        }
    }

    // MARK: - The stages of an SDK step where faults act
    // A new kind that acts on the SDK's steps adds its line to its stage.

    /// A step of device `d`'s SDK begins: what the faults tell it (its phone's clock, a full
    /// disk, locked data). In a world where no kind set any, the plain context, one flag
    /// tested (a debug check shows the gate tells nothing the three readings would not).
    @inline(__always)
    @inlinable func faultsOnTheStep(_ d: DeviceIndex) -> SDKContext {
        let i = Int(d)
        guard faults.onTheStep else {
            assert(faultsOnTheWallClock(of: i) == 0 && !faultsOnTheDisk(of: i) && !faultsOnProtectedData(of: i))
            return SDKContext(device: d, photoCount: _devices[i].photoCount, photosAllowed: _devices[i].photosAllowed)
        }
        return SDKContext(device: d, photoCount: _devices[i].photoCount, photosAllowed: _devices[i].photosAllowed,
                          wallClockOffsetSeconds: faultsOnTheWallClock(of: i), diskFull: faultsOnTheDisk(of: i),
                          dataLocked: faultsOnProtectedData(of: i))
    }

    /// A step of device `i`'s SDK begins: its phone's wall clock, as seconds from the true
    /// time (`SDKContext.wallClockOffsetSeconds`, P2), 0 where no kind moved it.
    @inline(__always)
    @inlinable func faultsOnTheWallClock(of i: Int) -> Int32 {
        phoneClockOffset(of: i)
    }

    /// The OS fired a background run of device `d`'s and its step ended: a limit may start
    /// counting the launch's time (P5). Behind the gate a `background-limit` raises: its
    /// arrays exist.
    @inline(__always)
    @inlinable mutating func faultsOnBackgroundRun(device d: DeviceIndex) {
        if !faults.backgroundLimit.limitMs.isEmpty { backgroundRunFired(device: d) }
    }

    /// Device `d`'s SDK started an indexing run (its `runStarted` effect): a limit notes
    /// that a run is going (P5). Behind the same gate.
    @inline(__always)
    @inlinable mutating func faultsOnRunStarted(device d: DeviceIndex) {
        if !faults.backgroundLimit.limitMs.isEmpty { backgroundLimitRunStarted(device: d) }
    }

    /// Device `d`'s SDK ended an indexing run (its `runEnded` effect): a limit counting its
    /// time stops (P5). Behind the same gate.
    @inline(__always)
    @inlinable mutating func faultsOnRunEnded(device d: DeviceIndex) {
        if !faults.backgroundLimit.limitMs.isEmpty { backgroundRunEnded(device: d) }
    }

    /// A step of device `i`'s SDK begins: whether its writes that take room fail
    /// (`SDKContext.diskFull`, P3), false where no kind filled its disk. The step's effects
    /// then go through `applyEffectsOnAFullDisk`.
    @inline(__always)
    @inlinable func faultsOnTheDisk(of i: Int) -> Bool {
        diskIsFull(i)
    }

    /// A step of device `i`'s SDK begins: whether its protected data is locked (a phone
    /// restarted and not yet unlocked, `SDKContext.dataLocked`, P4): every write fails.
    @inline(__always)
    @inlinable func faultsOnProtectedData(of i: Int) -> Bool {
        dataIsLocked(i)
    }
    /// A step of device `i`'s SDK has effects to apply: whether a kind may end its process
    /// at one of its writes (`kill … at-write`, P1), one flag in a world without one.
    @inline(__always)
    @inlinable var faultsOnTheWrites: Bool { faults.kill.armed }

    /// Device `d`'s SDK reported state `s`: for an SDK that reports no run events, a limit
    /// sees its runs by their `indexing` state (P5). Behind the same gate.
    @inline(__always)
    @inlinable mutating func faultsOnState(device d: DeviceIndex, _ s: SDKState) {
        if !faults.backgroundLimit.limitMs.isEmpty { backgroundLimitState(device: d, s) }
    }

    // MARK: - The stages of a request where windows act, in the order a request meets them
    // A new kind that acts on requests adds its line to its stage (its own draws from `r`
    // follow the rule of `World+Network.swift`: a request makes the same draws whatever
    // its fate, so draws that depend on a window come after every draw that does not).

    /// A request leaves its device, its round trip drawn from `r`: a window may pick it to
    /// come back only after its timeout (`timeouts`).
    @inline(__always)
    @inlinable func faultsOnTheWayOut(_ slot: inout RequestPool.Slot, _ r: inout KeyedRandom) {
        timeoutsPick(&slot, &r)
    }

    /// A request of `d`'s reaches the server: a window may answer in its place without
    /// touching the server's state (S9), drawing from `r`; nil lets the server judge it. A
    /// portal answers first: it stands between the device and the server.
    @inline(__always)
    @inlinable func faultAnswer(device d: DeviceIndex, _ r: inout KeyedRandom) -> ServerReply? {
        guard now < faults.serverAnsweredUntil else { return nil }
        if let reply = portalAnswer(device: d, &r) { return reply }
        if let reply = serverDownAnswer() { return reply }
        if let reply = serverRestartAnswer() { return reply }
        return serverErrorsAnswer(&r)
    }

    /// The server has judged a request of `d`'s: a window may lose its answer (S9) or slow
    /// it down, drawing from `r`.
    @inline(__always)
    @inlinable func faultsOnTheWayBack(device d: DeviceIndex, _ r: inout KeyedRandom) -> AnswerWay {
        guard now < faults.answersFaultedUntil else { return .usual }
        if lostResponsesLoses(&r) { return .lost }
        if serverRestartLoses(&r) { return .lost }   // the process was away: no answer at all
        if let delay = slowDelay(of: d) { return .delayed(delay) }
        return .usual
    }
}
