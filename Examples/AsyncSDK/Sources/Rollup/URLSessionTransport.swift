import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport the app ships: HTTPS to Rollup's API with URLSession. Compiled with the
/// SDK, never used under SimKit (whose adapter injects its simulated network instead).
public struct URLSessionTransport: RollupTransport {
    public var baseURL: URL
    public var publishableKey: String
    public var timeout: TimeInterval
    let session: URLSession

    public init(baseURL: URL, publishableKey: String, timeout: TimeInterval = 30) {
        self.baseURL = baseURL; self.publishableKey = publishableKey; self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    public func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        var request = URLRequest(url: baseURL.appendingPathComponent(Self.path(endpoint)))
        request.httpMethod = endpoint == .deleteDevice ? "DELETE" : "POST"
        request.timeoutInterval = timeout
        request.setValue(publishableKey, forHTTPHeaderField: "X-Rollup-Key")
        if let token { request.setValue(String(token.raw, radix: 16), forHTTPHeaderField: "X-Rollup-Device") }
        let data: Data, response: URLResponse
        do { (data, response) = try await session.data(for: request) } catch is CancellationError { throw CancellationError() } catch { return .unreachable }
        guard let http = response as? HTTPURLResponse else { return .unreachable }
        return Self.reply(status: http.statusCode, body: data)
    }

    static func path(_ e: Endpoint) -> String {
        switch e {
        case .keyCheck: "v1/key-check"
        case .register: "v1/devices"
        case .query: "v1/query"
        case .profile: "v1/profile"
        case .placeData: "v1/place-data"
        case .models: "v1/models"
        case .runReport: "v1/run-reports"
        case .deleteDevice: "v1/devices/me"
        }
    }

    struct Body: Decodable {
        var error: String?
        var servedAt: UInt64?
        var stoppedSince: UInt64?
        var deviceToken: String?
    }

    /// A verdict is a 200 or a 4xx that carries the server's time; anything else is no verdict
    /// (a captive portal's login page, a proxy's bare 403, a body cut short: P6).
    public static func reply(status: Int, body: Data) -> Reply {
        guard let b = try? JSONDecoder().decode(Body.self, from: body), let at = b.servedAt else { return .unreachable }
        if status == 200 { return .served(at: at, token: b.deviceToken.flatMap { UInt64($0, radix: 16) }.map(DeviceToken.init(raw:))) }
        let refusal: Refusal
        switch b.error {
        case "app_key_invalid": refusal = .keyInvalid
        case "app_disabled": refusal = .appDisabled
        case "app_pending": refusal = .appPending
        case "device_unknown": refusal = .deviceUnknown
        case "app_key_mismatch": refusal = .keyMismatch
        case "attestation_failed": refusal = .attestationFailed
        default: return .unreachable
        }
        return .refused(refusal, at: at, stoppedSince: b.stoppedSince)
    }
}

/// The phone's calendar clock: `Date()`.
public struct SystemWallClock: RollupWallClock {
    public init() {}
    public var nowMillis: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// The app's clock: `ContinuousClock` for sleeping, milliseconds since it started.
public struct SystemClock: RollupClock {
    let clock = ContinuousClock()
    let origin: ContinuousClock.Instant
    public init() { origin = clock.now }
    public var nowMillis: Millis {
        let d = origin.duration(to: clock.now).components
        return Millis(max(0, d.seconds)) * 1000 + Millis(d.attoseconds / 1_000_000_000_000_000)
    }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration, clock: clock) }
}
