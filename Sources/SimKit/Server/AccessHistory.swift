/// The server's memory of when access stopped, so a lock error can say since when this
/// device's requests have been refused without a break (S2 `stoppedSince`): when each key
/// was issued and stopped, and the intervals in which each app was refused `app_disabled`
/// (S2.2: disabled by its developer, rejected or revoked, or its account not approved).
///
/// Each app keeps at most `intervalsMax` closed intervals; dropping the oldest can only
/// make a `stoppedSince` later, never earlier, so it stays sound (S2).
public struct AccessHistory: Sendable {
    /// A closed interval `[from, to)` in which an app was refused.
    @usableFromInline struct Interval: Sendable { var from: SimTime; var to: SimTime }

    /// Per key: when it was issued (`never` while unissued), and when it was stopped.
    @usableFromInline var keyIssuedAt: [SimTime]
    @usableFromInline var keyStoppedAt: [SimTime]
    /// Per app: since when it has been refused without a break, or `never`.
    @usableFromInline var appRefusedSince: [SimTime]
    /// Per app: earlier refusals, oldest first.
    @usableFromInline var appRefusals: [[Interval]]
    /// Per app: whether it is answered `app_pending` now (S2.3), and when it last stopped
    /// being (0: never was). A pending answer is no lock error, so it breaks a stop.
    @usableFromInline var appPending: [Bool]
    @usableFromInline var appPendingEndedAt: [SimTime]

    /// No such time.
    public static let never: SimTime = .max
    /// The most closed refusal intervals kept per app.
    public static let intervalsMax = 64
    /// The most steps `stopStart` walks back (each to an earlier interval's start).
    static let walkMax = 2 * intervalsMax + 8

    init(keyCount: Int, appCount: Int) {
        keyIssuedAt = Array(repeating: Self.never, count: keyCount)
        keyStoppedAt = Array(repeating: Self.never, count: keyCount)
        appRefusedSince = Array(repeating: Self.never, count: appCount)
        appRefusals = Array(repeating: [], count: appCount)
        appPending = Array(repeating: false, count: appCount)
        appPendingEndedAt = Array(repeating: 0, count: appCount)
    }

    /// Records whether app `a` is answered `app_pending` from `now` on.
    mutating func noteAppPending(_ a: Int, pending: Bool, now: SimTime) {
        if appPending[a], !pending { appPendingEndedAt[a] = now }
        appPending[a] = pending
    }

    /// Records whether app `a` is refused from `now` on (a no-op when nothing changed).
    ///
    /// Access that comes back and stops again in the same millisecond is a break all the
    /// same (a request can be served between the two changes): the closed refusal then
    /// ends a millisecond early, so walking back from the new stop does not join the two
    /// (the checkers count the new stop from that millisecond too).
    mutating func noteApp(_ a: Int, refused: Bool, now: SimTime) {
        let since = appRefusedSince[a]
        if refused, since == Self.never {
            endRefusalBeforeNow(a, now: now)
            appRefusedSince[a] = now
        } else if !refused, since != Self.never {
            if since < now {
                if appRefusals[a].count == Self.intervalsMax { appRefusals[a].removeFirst() }
                appRefusals[a].append(Interval(from: since, to: now))
            }
            appRefusedSince[a] = Self.never
        }
    }

    /// Records that key `k` of app `a`, valid until now, stops now (S3). When the app's
    /// refusal ended earlier in this very millisecond (an enable, then the stop), access
    /// came back in between: as in `noteApp`, the closed refusal then ends a millisecond
    /// early, so walking back from the key's stop does not join the two. (A stop before
    /// the enable, in the same millisecond, leaves no break: the refusal is still open.)
    mutating func noteKeyStopped(_ k: Int, app a: Int, now: SimTime) {
        keyStoppedAt[k] = min(now, keyStoppedAt[k])
        if appRefusedSince[a] == Self.never { endRefusalBeforeNow(a, now: now) }
    }

    /// When app `a`'s last closed refusal ended at `now`, makes it end a millisecond early
    /// (or drops it when it lasted no longer), so that a stop beginning `now` is not joined
    /// to it: access came back in between (the break of `noteApp` and `noteKeyStopped`).
    mutating func endRefusalBeforeNow(_ a: Int, now: SimTime) {
        guard let last = appRefusals[a].last, last.to == now else { return }
        if last.from < now - 1 { appRefusals[a][appRefusals[a].count - 1].to = now - 1 } else { appRefusals[a].removeLast() }
    }

    /// The start of the refusal of app `a` that covers moment `x`, or nil.
    func appRefusal(_ a: Int, covering x: SimTime) -> SimTime? {
        if appRefusedSince[a] <= x { return appRefusedSince[a] }
        for i in appRefusals[a].indices.reversed() {
            let r = appRefusals[a][i]
            if r.from <= x, x < r.to { return r.from }
            if r.to <= x { break }   // intervals are in time order: none older covers x
        }
        return nil
    }

    /// The start of the invalidity of key `k` (S2.1) that covers moment `x`, or nil:
    /// before it was issued, or from its stop or the end of its grace.
    func keyInvalidity(_ k: Int, _ state: KeyState, covering x: SimTime) -> SimTime? {
        if x < keyIssuedAt[k] { return 0 }
        var from = keyStoppedAt[k]
        if case .previous(_, let deadline) = state { from = min(from, deadline) }
        return from <= x ? from : nil
    }

    /// S2 `stoppedSince`: the start of the unbroken run of lock errors, up to `now`, that a
    /// request with key `k` (of `app`) gets, and never before `notBefore` (what the server
    /// knows of the install). A mismatch covers everything since `notBefore` but the time
    /// the key's app was answered `app_pending` while the key was valid (S2.3 comes before
    /// S2.5: those requests got no lock error).
    func stopStart(key k: Int, keyState: KeyState, app: Int?, mismatch: Bool, notBefore: SimTime,
                   now: SimTime) -> SimTime {
        if mismatch {
            guard let a = app, appPendingEndedAt[a] > keyIssuedAt[k] else { return notBefore }
            return max(notBefore, min(appPendingEndedAt[a], now))
        }
        var t = now
        for _ in 0..<Self.walkMax {
            guard t > notBefore else { break }
            let x = t - 1   // the moment just before the run found so far
            var start = t
            if let s = keyInvalidity(k, keyState, covering: x) { start = min(start, s) }
            if let a = app, let s = appRefusal(a, covering: x) { start = min(start, s) }
            guard start < t else { break }
            t = start
        }
        return max(t, notBefore)
    }

    /// The `stoppedSinceFromFirstStop` flaw: the earliest stop ever of the key or its app,
    /// breaks or no breaks.
    func earliestStop(key k: Int, app: Int?, now: SimTime) -> SimTime {
        var t = min(now, keyStoppedAt[k])
        if let a = app {
            t = min(t, appRefusedSince[a])
            if let first = appRefusals[a].first { t = min(t, first.from) }
        }
        return t
    }
}
