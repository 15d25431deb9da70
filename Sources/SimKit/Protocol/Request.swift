/// What the SDK can ask the server for. Every kind carries the app's key (S1).
public enum RequestKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The key check of D1, for a device that holds a credential.
    case check
    /// Registration with App Attest (S6); also the key check of a device without a credential.
    case register
    case query, profile, placeData, modelDownload, runReport
    /// Deletes the device's record on the server (S8).
    case reset

    public var description: String {
        switch self {
        case .check: "check"
        case .register: "register"
        case .query: "query"
        case .profile: "profile"
        case .placeData: "place-data"
        case .modelDownload: "model-download"
        case .runReport: "run-report"
        case .reset: "reset"
        }
    }
}

/// How a request ended, as the SDK sees it: a server verdict, or a transient failure.
public enum Answer: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 200: served.
    case ok
    /// 401 `app_key_invalid` (S2.1).
    case appKeyInvalid
    /// 403 `app_disabled` (S2.2).
    case appDisabled
    /// 403 `app_pending` (S2.3).
    case appPending
    /// 401 `device_unknown` (S2.4).
    case deviceUnknown
    /// 401 `app_key_mismatch` (S2.5).
    case appKeyMismatch
    /// 401 `attestation_failed` (S6).
    case attestationFailed
    /// A 5xx from the server (error injection or outage).
    case serverError
    /// No answer within the request's timeout (D9).
    case timedOut
    /// The device had no network.
    case offline
    /// An answer that is not Rollup's (P6): a captive portal, a proxy or a load balancer
    /// answered in the server's place (a login page, a redirect, a bare 401, 403 or 407, a
    /// body cut short). No verdict: the server never saw the request. What came back on the
    /// wire is the reply's `notRollup` (status, headers, body).
    case notRollup

    /// The three answers that stop access (D2). A `switch`, which the optimiser folds: a
    /// chain of `==` called the enum's derived equality three times (every reply built by
    /// the server and read by the checkers asks this).
    @inlinable public var isLockError: Bool {
        switch self {
        case .appKeyInvalid, .appDisabled, .appKeyMismatch: true
        case .ok, .appPending, .deviceUnknown, .attestationFailed, .serverError, .timedOut, .offline, .notRollup: false
        }
    }
    /// A verdict from the server on the key: 200 or one of the 4xx of S2 (D1 "answered").
    @inlinable public var isVerdict: Bool {
        switch self {
        case .ok, .appKeyInvalid, .appDisabled, .appPending, .deviceUnknown, .appKeyMismatch, .attestationFailed: true
        case .serverError, .timedOut, .offline, .notRollup: false
        }
    }
    /// Offline, a timeout, a 5xx or an answer that is not Rollup's: never a reason to lock (D6, P6).
    @inlinable public var isTransient: Bool { !isVerdict }

    /// The HTTP status for reports: 503 stands for every 5xx (the injected status of a
    /// `server errors` window is traced with the fault, not with the answer); 0 for an
    /// answer that is not Rollup's, whose status its reply's `notRollup` holds.
    public var httpStatus: UInt16 {
        switch self {
        case .ok: 200
        case .appKeyInvalid, .deviceUnknown, .appKeyMismatch, .attestationFailed: 401
        case .appDisabled, .appPending: 403
        case .serverError: 503
        case .timedOut, .offline, .notRollup: 0
        }
    }

    public var description: String {
        switch self {
        case .ok: "200"
        case .appKeyInvalid: "app_key_invalid"
        case .appDisabled: "app_disabled"
        case .appPending: "app_pending"
        case .deviceUnknown: "device_unknown"
        case .appKeyMismatch: "app_key_mismatch"
        case .attestationFailed: "attestation_failed"
        case .serverError: "5xx"
        case .timedOut: "timeout"
        case .offline: "offline"
        case .notRollup: "not-rollup"
        }
    }
}

/// A request as it reaches the server: everything the server may judge it by.
public struct Request: Sendable, Equatable {
    public var kind: RequestKind
    /// The publishable key the installed app version carries.
    public var key: KeyID
    /// The device credential, or `.none` (always `.none` on `register`).
    public var credential: Credential
    /// The device sending it: registration issues the credential for it, and every later
    /// request's App Attest assertion is made with its attested key (S6).
    public var device: DeviceIndex
    /// App Attest: the app whose team ID and bundle ID this install genuinely is, or nil
    /// for a non-genuine install (a clone), which can make no attestation and no assertion.
    public var attestedApp: AppID?
    /// The installed app build: 0 as installed when the world starts, one more at each
    /// update. Real requests carry the app version; the server uses it to tell when an
    /// install may have changed keys (S2 `stoppedSince`), as it cannot see updates.
    public var build: UInt16

    @inlinable
    public init(kind: RequestKind, key: KeyID, credential: Credential, device: DeviceIndex, attestedApp: AppID?,
                build: UInt16 = 0) {
        self.kind = kind; self.key = key; self.credential = credential
        self.device = device; self.attestedApp = attestedApp; self.build = build
    }

    /// S6: whether the request's App Attest assertion is valid for its credential: only the
    /// genuine install that registered the credential can make one.
    @inlinable public var assertionMatchesCredential: Bool {
        attestedApp != nil && credential.device == device
    }
}

/// The server's answer to one request. `credential` is set on a served `register`.
///
/// Every verdict (a 200 or a 4xx of S2) carries `servedAt`, the server's time of the
/// verdict; a lock error also carries `stoppedSince`, the server's time since which this
/// device's requests have been refused with a lock error without a break (S2). A 5xx, a
/// timeout or no network is no verdict: both are `ServerReply.none`.
///
/// A reply carries a credential (a served `register`) or a `stoppedSince` (a lock error),
/// never both, so they share one word (`payload`): a reply is 24 bytes, and every request
/// on the wire, answer handed to an SDK and trace record of one is that much smaller.
public struct ServerReply: Sendable, Equatable {
    /// When the server gave this verdict, or `ServerReply.none` (no verdict).
    public var servedAt: SimTime
    /// The credential's bits, or `stoppedSince` for a lock error.
    @usableFromInline var payload: UInt64
    public var answer: Answer
    /// For `notRollup`, which answer came back (`NotRollup.rawValue`); 0 otherwise. In the
    /// padding after `answer`: a reply stays 24 bytes.
    @usableFromInline var foreign: UInt8
    /// "No such time": the reply is no verdict, or not a lock error.
    public static let none: SimTime = .max

    @inlinable public init(_ answer: Answer, credential: Credential = .none,
                           servedAt: SimTime = ServerReply.none, stoppedSince: SimTime = ServerReply.none) {
        self.answer = answer
        self.servedAt = servedAt
        foreign = 0
        payload = answer.isLockError ? stoppedSince : UInt64(credential.device) << 32 | UInt64(credential.generation)
    }

    /// The credential a served `register` issued, or `.none`.
    @inlinable public var credential: Credential {
        answer.isLockError ? .none : Credential(device: DeviceIndex(truncatingIfNeeded: payload >> 32),
                                                generation: UInt32(truncatingIfNeeded: payload))
    }

    /// For a lock error: since when access has been stopped without a break; otherwise `none`.
    @inlinable public var stoppedSince: SimTime { answer.isLockError ? payload : ServerReply.none }

    /// An answer that is not Rollup's (P6): `form` came back in the server's place. No
    /// verdict: no `servedAt`, no credential, no `stoppedSince`.
    @inlinable public static func notRollup(_ form: NotRollup) -> ServerReply {
        var r = ServerReply(.notRollup)
        r.foreign = form.rawValue
        return r
    }

    /// For an answer that is not Rollup's (`Answer.notRollup`), what came back on the wire
    /// in the server's place; nil for every other answer.
    @inlinable public var notRollup: NotRollup? {
        answer == .notRollup ? NotRollup(rawValue: foreign) : nil
    }

    /// How long access had been stopped when this lock error was served, or 0.
    @inlinable public var stoppedForMs: SimTime {
        stoppedSince <= servedAt && servedAt != ServerReply.none ? servedAt - stoppedSince : 0
    }
}

/// What a captive portal, a proxy or a load balancer answers in the server's place (SPEC
/// §1.5, P6), as a real network delivers it: a status, headers and a body
/// (`status`, `headers`, `body`), none of them Rollup's. None is a verdict: an SDK that
/// reads the bytes finds no `servedAt` and no Rollup error code in any of them.
public enum NotRollup: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 200 with a web page: the portal's login form.
    case loginPage = 1
    /// 302 to the portal's login page.
    case redirect
    /// 401 from a proxy that wants credentials, with no Rollup error code.
    case unauthorized
    /// 403 from a proxy or a firewall's policy, with no Rollup error code.
    case forbidden
    /// 407: the proxy wants its own authentication.
    case proxyAuthentication
    /// 200 whose JSON body was cut short: no `servedAt` to read.
    case cutShort

    /// The form's name in the scenario language (`portal … answers NAME`) and the trace.
    public var description: String {
        switch self {
        case .loginPage: "login-page"
        case .redirect: "redirect"
        case .unauthorized: "401"
        case .forbidden: "403"
        case .proxyAuthentication: "407"
        case .cutShort: "cut-short"
        }
    }

    /// The HTTP status that came back.
    public var status: Int {
        switch self {
        case .loginPage, .cutShort: 200
        case .redirect: 302
        case .unauthorized: 401
        case .forbidden: 403
        case .proxyAuthentication: 407
        }
    }

    /// The headers that came back, in order (names as the portal wrote them).
    public var headers: [(name: String, value: String)] {
        switch self {
        case .loginPage: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")]
        case .redirect: [("Location", "http://portal.example/login?continue=https%3A%2F%2Fapi.rollup.example%2F"),
                         ("Content-Length", "0")]
        case .unauthorized: [("WWW-Authenticate", "Basic realm=\"guest-wifi\""), ("Content-Type", "text/html")]
        case .forbidden: [("Content-Type", "text/html")]
        case .proxyAuthentication: [("Proxy-Authenticate", "Basic realm=\"corp-proxy\""), ("Content-Type", "text/html")]
        case .cutShort: [("Content-Type", "application/json"), ("Content-Length", "96")]
        }
    }

    /// The body that came back, as text (UTF-8): a web page, nothing, or JSON cut short.
    public var bodyText: String {
        switch self {
        case .loginPage:
            "<!DOCTYPE html><html><head><title>Guest Wi-Fi</title></head><body><form method=\"post\" action=\"/login\"><input name=\"room\"><button>Connect</button></form></body></html>"
        case .redirect: ""
        case .unauthorized: "<html><body><h1>401 Authorization Required</h1></body></html>"
        case .forbidden: "<html><body><h1>403 Forbidden</h1><p>Blocked by network policy.</p></body></html>"
        case .proxyAuthentication: "<html><body><h1>407 Proxy Authentication Required</h1></body></html>"
        case .cutShort: "{\"served_a"
        }
    }

    /// The body's bytes.
    public var body: [UInt8] { Array(bodyText.utf8) }

    /// The first value of header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
