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

    /// The three answers that stop access (D2). A `switch`, which the optimiser folds: a
    /// chain of `==` called the enum's derived equality three times (every reply built by
    /// the server and read by the checkers asks this).
    @inlinable public var isLockError: Bool {
        switch self {
        case .appKeyInvalid, .appDisabled, .appKeyMismatch: true
        case .ok, .appPending, .deviceUnknown, .attestationFailed, .serverError, .timedOut, .offline: false
        }
    }
    /// A verdict from the server on the key: 200 or one of the 4xx of S2 (D1 "answered").
    @inlinable public var isVerdict: Bool {
        switch self {
        case .ok, .appKeyInvalid, .appDisabled, .appPending, .deviceUnknown, .appKeyMismatch, .attestationFailed: true
        case .serverError, .timedOut, .offline: false
        }
    }
    /// Offline, a timeout or a 5xx: never a reason to lock (D6).
    @inlinable public var isTransient: Bool { !isVerdict }

    /// The HTTP status for reports: 503 stands for every 5xx (the injected status of a
    /// `server errors` window is traced with the fault, not with the answer).
    public var httpStatus: UInt16 {
        switch self {
        case .ok: 200
        case .appKeyInvalid, .deviceUnknown, .appKeyMismatch, .attestationFailed: 401
        case .appDisabled, .appPending: 403
        case .serverError: 503
        case .timedOut, .offline: 0
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
    /// "No such time": the reply is no verdict, or not a lock error.
    public static let none: SimTime = .max

    @inlinable public init(_ answer: Answer, credential: Credential = .none,
                           servedAt: SimTime = ServerReply.none, stoppedSince: SimTime = ServerReply.none) {
        self.answer = answer
        self.servedAt = servedAt
        payload = answer.isLockError ? stoppedSince : UInt64(credential.device) << 32 | UInt64(credential.generation)
    }

    /// The credential a served `register` issued, or `.none`.
    @inlinable public var credential: Credential {
        answer.isLockError ? .none : Credential(device: DeviceIndex(truncatingIfNeeded: payload >> 32),
                                                generation: UInt32(truncatingIfNeeded: payload))
    }

    /// For a lock error: since when access has been stopped without a break; otherwise `none`.
    @inlinable public var stoppedSince: SimTime { answer.isLockError ? payload : ServerReply.none }

    /// How long access had been stopped when this lock error was served, or 0.
    @inlinable public var stoppedForMs: SimTime {
        stoppedSince <= servedAt && servedAt != ServerReply.none ? servedAt - stoppedSince : 0
    }
}
