/// What a fault kind's file gives the scenario language and the tools, on the kind's main
/// type: the statement as a scenario writes it (devices by name, shares in percent). The
/// language parses, checks and prints it through this protocol, the runner lowers it to the
/// `Fault` the world injects, and the trace's readers read its records (`FaultRecords`).
/// None of it runs per event, so the language holds a statement as an existential
/// (`AnyFaultStatement`) and finds the kinds in a table (`Faults.kinds`).
package protocol FaultKind: FaultRecords, Equatable {
    /// The words that start the statement after its time: `["offline"]`, `["server", "errors"]`.
    /// Kinds that share a first word each have a second one, which tells them apart.
    static var keyword: [String] { get }

    /// The rest of the statement, after its keyword; a syntax error points at its token.
    static func parse(_ c: inout Cursor) throws(ParseError) -> Self

    /// Reports what is wrong with the statement's meaning (a group not declared, a share
    /// over 100%, a window of 0 s or past the language's bounds) through `c`, in the order
    /// a reader meets them on the line.
    func check<C: FaultChecks>(_ c: inout C)

    /// The statement as the printer writes it, keyword first; the parser reads it back equal.
    var text: String { get }

    /// The devices it acts on, or nil for a fault of the server or the network as a whole.
    var selectedDevices: DeviceSelector? { get }

    /// The same statement on `devices` instead (for one that acts on devices).
    func selecting(_ devices: DeviceSelector) -> Self

    /// The number its end events carry (`FaultEnd.kind`, which `faultEnds` dispatches on):
    /// unique over the kinds, whether or not its windows end by an event.
    static var endCode: UInt8 { get }

    /// The fault the world injects: its devices resolved by `resolve`.
    func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault

    /// The generator's draw: writes a statement of this kind at `t` into a generated script,
    /// its parameters drawn from `g`, with whatever traffic around it makes it bite. Every
    /// draw keeps its place: the scripts of old seeds depend on their order.
    static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G)

    /// For a kind the generator draws on its own rather than among its swarm's features
    /// (`ScenarioGenerator.Feature`): how often, and from which stream. nil: a feature draws it.
    static var drawnAlone: FaultDrawnAlone? { get }

    /// The guided mutator's change: the statement with one of its parameters redrawn from `m`.
    func mutated<M: FaultMutations>(_ m: inout M) -> Self

    /// Its name in `simkit explore --faults`, or nil when the explorer's alphabet leaves it out.
    static var exploreName: String? { get }

    /// Its statements in the explorer's alphabet, in order.
    static func explored(_ alphabet: FaultAlphabet) -> [Self]

    /// Whether `simkit explore` takes it without `--faults` naming it (true for the network's
    /// windows; a phone fault that adds actions to every path may leave itself to be asked for).
    static var exploredByDefault: Bool { get }

    /// A moment worth trying an action at just after this statement, fired at `t`, stops
    /// acting (the explorer adds it to its race moments: a request judged then overtakes
    /// what the window did); nil when there is none.
    func raceMoment(firedAt t: SimTime) -> SimTime?
}

extension FaultKind {
    /// A fault of the server or the network as a whole acts on no device of its own.
    package var selectedDevices: DeviceSelector? { nil }
    package func selecting(_ devices: DeviceSelector) -> Self { self }

    package static var drawnAlone: FaultDrawnAlone? { nil }
    package static var exploreName: String? { nil }
    package static func explored(_ alphabet: FaultAlphabet) -> [Self] { [] }
    package static var exploredByDefault: Bool { true }
    package func raceMoment(firedAt t: SimTime) -> SimTime? { nil }

    /// Whether `other` is this very statement.
    func isEqual(to other: any FaultKind) -> Bool { (other as? Self) == self }
}

/// What a fault statement's `check` asks of the language's validator, which reports each
/// problem at the statement's line, at the token it names.
package protocol FaultChecks {
    /// The selector names a declared group (or `all`), and a count or a device within it.
    mutating func devices(_ selector: DeviceSelector)
    /// The share is at most 100%.
    mutating func share(_ share: Share)
    /// A window's length, written after `for`: longer than 0 s and within the language's
    /// bound. `what` names the statement in the message (`'offline'`).
    mutating func window(_ forMs: SimTime, of what: String)
    /// An error at the first token spelled `text` on the statement's line, or at the token
    /// after the word `after`.
    mutating func error(at text: String?, after word: String?, _ message: String)
    /// The token after the word `after` on the statement's line, as written; `value` printed
    /// when there is no source (a scenario built in code).
    func spelled(after word: String, _ value: SimTime) -> String
}

/// What a fault kind's `draw` asks of the scenario generator: the seed's draws, the script's
/// main group, and a place in the script for its statement and the traffic around it.
package protocol FaultDraws {
    /// A number in `0..<n`.
    mutating func below(_ n: UInt64) -> UInt64
    /// True `k` times in `n`.
    mutating func chance(_ k: UInt64, outOf n: UInt64) -> Bool
    /// Some devices of the main group: all of them, the group, a share of it, or one device.
    mutating func someDevices() -> DeviceSelector
    /// A share of requests: 10, 25, 50, 75 or 100%.
    mutating func someShare() -> Share
    /// A fault window's length: a minute, an hour, 6 hours, 2 days or 40 days.
    mutating func faultLength() -> SimTime
    /// The script's main group of genuine devices: its name and size.
    var mainGroup: (name: String, count: UInt64) { get }
    /// Puts `statement` into the script at `t` (not past its end).
    mutating func add(_ statement: some FaultKind, at t: SimTime)
    /// Every device talks to the server at `t`: a launch, an open or a query, drawn.
    mutating func poke(_ t: SimTime)
    /// Every device meets the person's `action` at `t` (`launch`, `open`, `query`, …).
    mutating func everyone(_ action: PersonAction, at t: SimTime)
    /// The dashboard stops access to the main app at `t` (`disable`), or gives it back (`enable`).
    mutating func mainAppAccess(stopped: Bool, at t: SimTime)
    /// Every device's library gets `n` more photos at `t` (`add-photos N all`).
    mutating func addPhotos(_ n: UInt64, at t: SimTime)
}

extension FaultDraws {
    /// A drawer that writes no traffic writes none of this either.
    package mutating func addPhotos(_ n: UInt64, at t: SimTime) {}
}

/// How often the generator draws a kind on its own (`FaultKind.drawnAlone`): in one seed in
/// `oneIn`, at a time and with parameters drawn from the seed's fork `stream` (a key no
/// other draw forks), after the generator's other draws but its interleavings, so that
/// every other seed keeps the script it had before the kind existed.
package struct FaultDrawnAlone: Sendable, Equatable {
    package var oneIn: UInt64
    package var stream: UInt64
    package init(oneIn: UInt64, stream: UInt64) { self.oneIn = oneIn; self.stream = stream }
}

/// What a fault statement's `mutated` asks of the guided mutator: its draws, and the length
/// and share it drew for whichever statement it changes.
package protocol FaultMutations {
    /// A window's length: a second, a minute, an hour, a day or 30 days.
    var lengthMs: SimTime { get }
    /// A share of requests: 1, 10, 50 or 100%.
    var share: Share { get }
    /// A number in `0..<n`.
    mutating func below(_ n: UInt64) -> UInt64
    /// True `k` times in `n`.
    mutating func chance(_ k: UInt64, outOf n: UInt64) -> Bool
    /// Some devices of the scenario's first group of genuine devices.
    mutating func someDevices() -> DeviceSelector
}

/// What `simkit explore` lets its fault statements be (`FaultKind.explored`).
package struct FaultAlphabet: Sendable {
    /// Each device of the explored world, one selector each.
    package var devices: [DeviceSelector]
    /// How long a fault window lasts: longer than "soon", so the next action meets it.
    package var windowMs: SimTime
    /// How long a window lasts whose end is a race moment (`raceMoment`): short, so that the
    /// moment just after it comes before "soon".
    package var shortWindowMs: SimTime
    /// How much later a delayed answer comes back.
    package var delayMs: SimTime
    package init(devices: [DeviceSelector], windowMs: SimTime, shortWindowMs: SimTime, delayMs: SimTime) {
        self.devices = devices; self.windowMs = windowMs; self.shortWindowMs = shortWindowMs; self.delayMs = delayMs
    }
}

/// A fault statement of any kind, as the language's syntax tree holds it (`Action.fault`).
package struct AnyFaultStatement: Sendable, Equatable, CustomStringConvertible {
    /// The statement.
    package let base: any FaultKind
    /// `base`, of any kind.
    package init(_ base: any FaultKind) { self.base = base }
    package static func == (a: AnyFaultStatement, b: AnyFaultStatement) -> Bool { a.base.isEqual(to: b.base) }
    /// Its text, as the printer writes it.
    package var description: String { base.text }
}
