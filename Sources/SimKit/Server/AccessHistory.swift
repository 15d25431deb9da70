/// The server's memory of when access stopped, so a lock error can say since when this
/// device's requests have been refused without a break (S2 `stoppedSince`): when each key
/// was issued and stopped, and the intervals in which each app was refused `app_disabled`
/// (S2.2: disabled by its developer, rejected or revoked, or its account not approved).
///
/// Each app keeps at most `intervalsMax` closed intervals; dropping the oldest can only
/// make a `stoppedSince` later, never earlier, so it stays sound (S2).
@usableFromInline package struct AccessHistory: Sendable {
    /// A closed interval `[from, to)` in which an app was refused.
    @usableFromInline struct Interval: Sendable { var from: SimTime; var to: SimTime }

    /// Per key: when it was issued (`never` while unissued), and when it was stopped.
    @usableFromInline var keyIssuedAt: [SimTime]
    @usableFromInline var keyStoppedAt: [SimTime]
    /// Per app: since when it has been refused without a break, or `never`.
    @usableFromInline var appRefusedSince: [SimTime]
    /// Per app: earlier refusals, oldest first.
    @usableFromInline var appRefusals: [[Interval]]
    /// Per app: since when it has been answered `app_pending` (S2.3), or `never`, and its
    /// earlier pending runs, oldest first. A pending answer is no lock error, so it breaks
    /// a stop, also of a key of another app (S2.3 comes before S2.5).
    @usableFromInline var appPendingSince: [SimTime]
    @usableFromInline var appPendings: [[Interval]]
    /// Per app: the end of the newest pending run dropped from `appPendings` (0: none), so
    /// that walking back past the kept ones never joins what a dropped run broke.
    @usableFromInline var appPendingDroppedEnd: [SimTime]

    /// No such time.
    @usableFromInline package static let never: SimTime = .max
    /// The most closed refusal intervals kept per app.
    @usableFromInline package static let intervalsMax = 64
    /// The most steps `latestUnrefused` walks back (each to an earlier interval's start).
    static let walkMax = 2 * intervalsMax + 8

    init(keyCount: Int, appCount: Int) {
        keyIssuedAt = Array(repeating: Self.never, count: keyCount)
        keyStoppedAt = Array(repeating: Self.never, count: keyCount)
        appRefusedSince = Array(repeating: Self.never, count: appCount)
        appRefusals = Array(repeating: [], count: appCount)
        appPendingSince = Array(repeating: Self.never, count: appCount)
        appPendings = Array(repeating: [], count: appCount)
        appPendingDroppedEnd = Array(repeating: 0, count: appCount)
    }

    /// Records whether app `a` is answered `app_pending` from `now` on.
    mutating func noteAppPending(_ a: Int, pending: Bool, now: SimTime) {
        let since = appPendingSince[a]
        if pending, since == Self.never {
            appPendingSince[a] = now
        } else if !pending, since != Self.never {
            if since < now {
                if appPendings[a].count == Self.intervalsMax { appPendingDroppedEnd[a] = appPendings[a].removeFirst().to }
                appPendings[a].append(Interval(from: since, to: now))
            }
            appPendingSince[a] = Self.never
        }
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

    /// S2.5 for a key of app `a` sent by an install whose live record belongs to another
    /// app: when moment `x` is refused as a mismatch, the start of that refusal (the end of
    /// the pending run before it, or 0), or nil when `a` was answered `app_pending` at `x`.
    func mismatchRefusal(_ a: Int, covering x: SimTime) -> SimTime? {
        if appPendingSince[a] <= x { return nil }
        for i in appPendings[a].indices.reversed() {
            let r = appPendings[a][i]
            if r.from <= x, x < r.to { return nil }
            if r.to <= x { return r.to }
        }
        return appPendingDroppedEnd[a]
    }

    /// The latest moment in `[from, now)` at which a request with key `k` (of `app`) would
    /// not have been refused with a lock error, or nil when every moment of it was. With
    /// `mismatch`, the sender's live record belongs to another app than `app` (S2.5).
    /// A walk cut short by its bound answers the moment it reached: a later moment than
    /// the truth can only make `stoppedSince` later, so it stays sound.
    func latestUnrefused(key k: Int, keyState: KeyState, app: Int?, mismatch: Bool,
                         from: SimTime, now: SimTime) -> SimTime? {
        var t = now
        for _ in 0..<Self.walkMax {
            guard t > from else { return nil }
            let x = t - 1   // the moment just before the refused run found so far
            var start = t
            if let s = keyInvalidity(k, keyState, covering: x) { start = min(start, s) }
            if let a = app, let s = appRefusal(a, covering: x) { start = min(start, s) }
            if mismatch, let a = app, let s = mismatchRefusal(a, covering: x) { start = min(start, s) }
            guard start < t else { return x }
            t = start
        }
        return t > from ? t - 1 : nil
    }

    /// The latest moment in `[from, now)` at which app `a` was not refused (S2.2), so that
    /// its current key then would have been served, or nil.
    func latestUnrefused(app a: Int, from: SimTime, now: SimTime) -> SimTime? {
        var t = now
        for _ in 0..<Self.walkMax {
            guard t > from else { return nil }
            guard let s = appRefusal(a, covering: t - 1), s < t else { return t - 1 }
            t = s
        }
        return t > from ? t - 1 : nil
    }

    /// The latest moment in `[from, now)` at which app `a` was answered `app_pending`, or nil.
    func latestPending(app a: Int, from: SimTime, now: SimTime) -> SimTime? {
        var latest: SimTime?
        if appPendingSince[a] < now { latest = now - 1 }
        else if let r = appPendings[a].last(where: { $0.from < now }) { latest = min(r.to, now) - 1 }
        guard let t = latest, t >= from else { return nil }
        return t
    }
}
