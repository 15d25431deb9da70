/// `portal SEL [answers FORM] for D` (SPEC §1.5, P6): the selected devices are behind a
/// captive portal, a proxy or a load balancer (a hotel's Wi-Fi, a corporate network) for
/// D. Every request they send meanwhile is answered in the server's place by an answer that
/// is not Rollup's (`NotRollup`: a login page, a redirect, a bare 401, 403 or 407, a body
/// cut short), the one written after `answers` or, without it, one drawn from the seed for
/// each request. The server never sees the request (S9): nothing it keeps changes. The
/// answer comes back at the link's speed, as any answer, and is no verdict (P6).
///
/// A device's windows: a new one sets its answer and ends at the later of the two ends.
/// Its end is kept per device (`Portal.Windows`); the stage where it acts, `faultAnswer`,
/// is behind the gate every window that answers in the server's place raises
/// (`FaultWindows.serverAnsweredUntil`), so a world with no portal pays nothing for it.
public struct Portal: Sendable, Equatable {
    /// The devices behind the portal.
    package var devices: DeviceSelector
    /// The answer it gives, or nil: one drawn for each request.
    package var answers: NotRollup?
    /// How long.
    package var forMs: SimTime
    /// `portal SEL [answers FORM] for D`.
    package init(devices: DeviceSelector, answers: NotRollup? = nil, forMs: SimTime) {
        self.devices = devices; self.answers = answers; self.forMs = forMs
    }

    /// The fault as the world injects it: the devices by index, the answer by its raw
    /// value (0: drawn for each request).
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var form: UInt8
        public var forMs: SimTime
        public init(devices: DeviceSelection, form: UInt8, forMs: SimTime) { self.devices = devices; self.form = form; self.forMs = forMs }
    }

    /// The devices' windows in a world (`FaultWindows.portal`): empty until one opens.
    @usableFromInline struct Windows: Sendable, Equatable {
        /// Per device, the end of its window (0: none).
        @usableFromInline var until: [SimTime] = []
        /// Per device, the answer of its window (0: drawn for each request).
        @usableFromInline var form: [UInt8] = []
        @inlinable init() {}
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 12 }

    /// The forms as the statement writes them after `answers`.
    static let formNames: String = NotRollup.allCases.map { "'\($0)'" }.joined(separator: ", ")
}

// MARK: - The statement

extension Portal: FaultKind {
    package static var keyword: [String] { ["portal"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> Portal {
        let devices = try c.selector()
        var answers: NotRollup?
        if c.isWord("answers") {
            try c.keyword("answers")
            guard let token = c.peek(), token.kind == .word || token.kind == .number else {
                throw c.expected("what the portal answers (\(formNames))")
            }
            guard let form = NotRollup.allCases.first(where: { $0.description == token.text }) else {
                throw ParseError(offset: token.offset, message: "a portal does not answer \(token.quoted): it answers one of \(formNames)")
            }
            _ = c.take()
            answers = form
        }
        return Portal(devices: devices, answers: answers, forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        c.window(forMs, of: "'portal'")
    }

    package var text: String {
        "portal \(devices.text)\(answers.map { " answers \($0)" } ?? "") for \(DurationText.format(forMs))"
    }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> Portal { Portal(devices: devices, answers: answers, forMs: forMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .portal(Injection(devices: try resolve(devices), form: answers?.rawValue ?? 0, forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `portal SEL [answers FORM] for D`, as the world runs it (`answers` nil: drawn for each request).
    public static func portal(_ devices: DeviceSelection, answers: NotRollup? = nil, forMs: SimTime) -> WorldAction {
        .fault(.portal(.init(devices: devices, form: answers?.rawValue ?? 0, forMs: forMs)))
    }
}

extension SimWorld {
    /// Puts each selected device behind the portal until `forMs` from now, unless it
    /// already is until later; its answer is the new window's.
    @inlinable mutating func inject(_ f: Portal.Injection, statement index: Int, firing: UInt32) {
        let until = now.saturatingAdd(f.forMs)
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            world.portalStart(device: d, form: f.form, until: until)
        }
    }

    /// Opens (or extends) device `d`'s portal window until `until`, and raises the gate of
    /// `faultAnswer`.
    @inlinable mutating func portalStart(device d: DeviceIndex, form: UInt8, until: SimTime) {
        if faults.portal.until.isEmpty {
            faults.portal.until = Array(repeating: 0, count: _devices.count)
            faults.portal.form = Array(repeating: 0, count: _devices.count)
        }
        let i = Int(d)
        faults.portal.form[i] = form
        if faults.portal.until[i] < until {
            faults.portal.until[i] = until
            schedule(.faultEnds(FaultEnd(kind: Portal.endCode, target: d)), at: until)
        }
        trace(d, .fault(.portal(form: form, until: faults.portal.until[i])))
        faults.serverAnsweredUntil = max(faults.serverAnsweredUntil, faults.portal.until[i])
    }

    /// A device's portal window ends (unless a later one extended it).
    @inlinable mutating func portalEnds(device d: DeviceIndex) {
        if faults.portal.until[Int(d)] == now { trace(d, .fault(.portalEnded)) }
    }

    /// In `d`'s window, the portal answers its request in the server's place: its window's
    /// answer, or one drawn from `r` (`faultAnswer`).
    @inline(__always)
    @inlinable func portalAnswer(device d: DeviceIndex, _ r: inout KeyedRandom) -> ServerReply? {
        let i = Int(d)
        guard i < faults.portal.until.count, now < faults.portal.until[i] else { return nil }
        let form = faults.portal.form[i]
        let drawn = form != 0 ? form : UInt8(1 + r.below(UInt64(NotRollup.allCases.count)))
        return ServerReply.notRollup(NotRollup(rawValue: drawn) ?? .loginPage)
    }
}

// MARK: - The search tools

extension Portal {
    /// One seed in eight, from the seed's fork 11 (`drawnAlone`): some devices of the main
    /// group behind a portal, with traffic in the window. Half the time the dashboard
    /// stopped the main app an hour before, so the devices are locked when the portal
    /// answers their key checks (its login page's 200 must not unlock, P6); otherwise they
    /// are served (a bare 403 must not lock). Its answer: a third of the time drawn for each
    /// request, a third the one that tempts the devices' state (the login page, the 403), a
    /// third one drawn for the window.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let length = [10 * Ms.minute, Ms.hour, 6 * Ms.hour][Int(g.below(3))]
        let locked = g.chance(1, outOf: 2)
        let answers: NotRollup?
        switch g.below(3) {
        case 0: answers = nil
        case 1: answers = locked ? .loginPage : .forbidden
        default: answers = NotRollup(rawValue: UInt8(1 + g.below(UInt64(NotRollup.allCases.count))))
        }
        if locked {
            g.mainAppAccess(stopped: true, at: t - Ms.hour)
            g.poke(t - Ms.hour + Ms.minute)
        }
        g.add(Portal(devices: g.someDevices(), answers: answers, forMs: length), at: t)
        g.everyone(.launch, at: t + Ms.minute)
        g.everyone(.query, at: t + 2 * Ms.minute)
        g.poke(t + length / 2)
        if locked {
            g.mainAppAccess(stopped: false, at: t + length + Ms.hour)
            g.poke(t + length + Ms.hour + Ms.minute)
        }
    }

    /// Fork 11 of the seed: the other seeds keep the scripts they had before portals existed.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 8, stream: 11) }

    /// A new length; half the time other devices, a third of the time another answer.
    package func mutated<M: FaultMutations>(_ m: inout M) -> Portal {
        let devices = m.chance(1, outOf: 2) ? m.someDevices() : devices
        let answers = m.chance(1, outOf: 3) ? NotRollup(rawValue: UInt8(m.below(UInt64(NotRollup.allCases.count) + 1))) : answers
        return Portal(devices: devices, answers: answers, forMs: m.lengthMs)
    }

    // Not in `simkit explore`'s alphabet (no `exploreName`): its default alphabet is every
    // kind that names itself, and a portal adds nothing to the orders of events it searches
    // (its answers are no verdict), only to its figures.
}

// MARK: - Trace records

extension Portal {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// A device is behind a portal until `until`, which answers `form` (0: drawn for
        /// each request) in the server's place.
        case portal(form: UInt8, until: SimTime)
        /// A device's portal window closed.
        case portalEnded

        /// The record as the trace carries it (tags 20 and 21; the answer above the tag).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .portal(let form, let until): FaultRecord(a: 20 | UInt64(form) << 8, b: until)
            case .portalEnded: FaultRecord(a: 21, b: 0)
            }
        }

        /// `r` read as one of these records, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 20: self = .portal(form: UInt8(truncatingIfNeeded: r.a >> 8), until: r.b)
            case 21: self = .portalEnded
            default: return nil
            }
        }
    }
}

extension FaultRecord {
    /// A device behind a portal answering `form` (0: drawn) until `until`.
    @inlinable public static func portal(form: UInt8, until: SimTime) -> FaultRecord { Portal.Record.portal(form: form, until: until).fault }
    /// A device's portal window closed.
    @inlinable public static var portalEnded: FaultRecord { Portal.Record.portalEnded.fault }
}

extension Portal: FaultRecords {
    package static var recordTags: [UInt8] { [20, 21] }
    package static func text(of r: FaultRecord) -> String {
        switch Record(r) {
        case .portal(let form, let until)?: "portal(answers: \(NotRollup(rawValue: form).map { "\($0)" } ?? "drawn"), until: \(until))"
        case .portalEnded?: "portalEnded"
        case nil: ""
        }
    }

    /// The device's lane on the timeline shows the window as its "portal" band.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        switch Record(r) {
        case .portal(_, let until)?: FaultWindowRecord(until: until, mark: .portalBandOpens)
        case .portalEnded?: FaultWindowRecord(until: nil, mark: .portalBandCloses)
        case nil: nil
        }
    }
}
