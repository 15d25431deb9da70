import Testing
import SimKit
import Invariants

/// Small worlds, each built to exercise the bugs of a few mutants, and the proof that the
/// invariants catch every mutant of `Mutants.all` — and only with invariants that the
/// mutant's bug plausibly breaks — while the reference breaks none in the same world.
enum MutantWorlds {
    static let m = Ms.minute, h = Ms.hour, d = Ms.day

    static func person(_ at: SimTime, _ action: PersonAction, _ sel: DeviceSelection = .all, arg: UInt32 = 0) -> ScheduledAction {
        .at(at, .person(action, sel, arg: arg))
    }
    static func dash(_ at: SimTime, _ action: DashboardAction) -> ScheduledAction { .at(at, .dashboard(action)) }

    /// One approved app `photos` (key A; keys B and C free for rotations), `devices`
    /// genuine installs with small libraries so a run indexes in a few chunks.
    static func base(_ days: SimTime, devices: UInt32 = 3, pending: Bool = false, clones: UInt32 = 0,
                     _ schedule: [ScheduledAction]) -> WorldSetup {
        var groups = [GroupSpec(name: "photos", app: 0, count: devices, photosMin: 200, photosMax: 500)]
        if clones > 0 { groups.append(GroupSpec(name: "clones", app: 0, count: clones, clones: true, photosMin: 200, photosMax: 500)) }
        return WorldSetup(seed: 7, durationMs: days * d, keyNames: ["rk_live_A", "rk_live_B", "rk_live_C"],
                          accounts: [AccountSpec(name: "acme")],
                          apps: [AppSpec(name: "photos", account: 0, initialKey: 0, pending: pending)],
                          groups: groups, schedule: schedule)
    }

    /// 5xx, timeouts and offline windows, each with a launch and new photos inside it,
    /// so checks, downloads and report uploads all meet transient failures.
    static var transient: WorldSetup {
        base(5, devices: 4, [
            person(0, .launch),
            person(1 * d - m, .addPhotos, arg: 400),
            .at(1 * d, .serverErrors(rateBp: 10_000, status: 503, forMs: 30 * m)),
            person(1 * d + m, .launch),
            person(2 * d - m, .addPhotos, arg: 400),
            .at(2 * d, .timeouts(rateBp: 10_000, forMs: 30 * m)),
            person(2 * d + m, .launch), person(2 * d + 5 * m, .launch), person(2 * d + 10 * m, .launch),
            person(3 * d - m, .addPhotos, arg: 400),
            .at(3 * d, .offline(.all, forMs: 30 * m)),
            person(3 * d + m, .launch),
            person(4 * d, .launch),
        ])
    }

    /// An app waiting for Rollup's approval, launched before and after it.
    static var pending: WorldSetup {
        base(2, pending: true, [
            person(0, .launch),
            dash(1 * d, .rollupApp(.approve, app: 0)),
            person(1 * d + m, .launch),
        ])
    }

    /// The server forgets the devices; they must register again.
    static var forget: WorldSetup {
        base(2, [
            person(0, .launch),
            .at(1 * d, .forgetDevice(.all)),
            person(1 * d + m, .launch),
        ])
    }

    /// The server forgets the devices during their first run, before its report upload:
    /// the upload is answered `device_unknown`, which delivers nothing (D10).
    static var forgetBeforeUpload: WorldSetup {
        base(1, [
            person(0, .launch),
            .at(2 * Ms.second, .forgetDevice(.all)),
            .at(5 * Ms.second, .forgetDevice(.all)),
            .at(10 * Ms.second, .forgetDevice(.all)),
            .at(20 * Ms.second, .forgetDevice(.all)),
            .at(40 * Ms.second, .forgetDevice(.all)),
            person(1 * h, .open),
        ])
    }

    /// Registered installs updated to a build that ships a pending app's key (a wrong
    /// build): their queries are answered `app_pending`, which fails a call (D6).
    static var pendingQuery: WorldSetup {
        var setup = base(2, [
            person(0, .launch),
            person(h, .update, arg: 3),   // ships key 2, rk_live_C: the pending app's
            person(h + m, .launch),
            person(h + 2 * m, .query),
            person(h + 3 * m, .profile),
        ])
        setup.apps.append(AppSpec(name: "beta", account: 0, initialKey: 2, pending: true))
        return setup
    }

    /// A run offline queues its report; back online the devices are opened every 8 h with
    /// nothing to index: the report goes up at an activation (D10).
    static var reportsQueuedThenOpens: WorldSetup {
        base(3, [
            person(0, .launch),
            .at(1 * d, .offline(.all, forMs: 8 * h)),
            person(1 * d + h, .addPhotos, arg: 200),
            person(1 * d + h, .open),
            .init(firstAtMs: 1 * d + 9 * h, periodMs: 8 * h, action: .person(.open, .all, arg: 0)),
        ])
    }

    /// A reset made offline, the app left running: the record goes once online (D7).
    static var resetOffline: WorldSetup {
        base(1, [
            person(0, .launch),
            .at(1 * h, .offline(.all, forMs: 1 * h)),
            person(1 * h + m, .reset),
        ])
    }

    /// Reports queued while the server answers 5xx, then a reset: nothing it deleted may
    /// reach the server afterwards (D7).
    static var resetWithReportsQueued: WorldSetup {
        base(1, [
            person(0, .launch),
            .at(1 * h, .serverErrors(rateBp: 10_000, status: 503, forMs: 2 * h)),
            person(1 * h + m, .addPhotos, arg: 200),
            person(1 * h + m, .open),
            person(1 * h + 10 * m, .reset),
            person(4 * h, .open),
        ])
    }

    /// The server forgets the devices after their first run; two queries follow: the first
    /// is answered `device_unknown`, and by the second the SDK has registered again (D6).
    static var forgetThenQueries: WorldSetup {
        base(1, [
            person(0, .launch),
            .at(1 * h, .forgetDevice(.all)),
            person(1 * h + m, .query),
            person(1 * h + 2 * m, .query),
        ])
    }

    /// Disable/enable (a short lock and unlock), then a disable lasting past 30 days with
    /// checks before the deadline, after it while offline, and after it with a lock error;
    /// then an enable, after the purge.
    /// Installs updated to a rotated key and not opened again, then a disable, then a
    /// launch 32 days later: every key of the app has been refused since the disable (S2).
    static var unseenUpdateThenDisable: WorldSetup {
        base(36, [
            person(0, .launch),
            dash(1 * d, .rotate(app: 0, newKey: 1, graceMs: 30 * d)),
            person(2 * d, .update),
            dash(3 * d, .disable(app: 0)),
            person(35 * d, .launch),
        ])
    }

    static var longDisable: WorldSetup {
        base(35, [
            person(0, .launch),
            person(1 * d - m, .addPhotos, arg: 1_000),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + m, .launch),
            dash(2 * d, .enable(app: 0)),
            person(2 * d + m, .launch),
            person(2 * d + 30 * m, .close),
            dash(3 * d, .disable(app: 0)),
            person(3 * d + m, .launch),
            person(3 * d + 2 * m, .close),
            person(3 * d + 3 * m, .open),
            person(3 * d + 4 * m, .query),
            person(3 * d + 5 * m, .profile),
            person(3 * d + 6 * m, .search),
            person(4 * d, .background),
            person(32 * d + h, .launch),
            .at(33 * d + h, .offline(.all, forMs: h)),
            person(33 * d + h + m, .launch),
            person(33 * d + 3 * h, .launch),
            dash(34 * d, .enable(app: 0)),
            person(34 * d + m, .launch),
        ])
    }

    /// Background runs, in a running process and by an OS launch, and an activation a
    /// little more than a day after the last check.
    static var schedule: WorldSetup {
        base(4, [
            person(0, .launch),
            person(h, .close),
            person(1 * d, .background),
            person(1 * d + 2 * h, .open),
            person(1 * d + 3 * h, .close),
            person(2 * d, .update),
            person(2 * d + h, .background),
            person(3 * d + 2 * h, .open),
        ])
    }

    /// Every request of a few launches times out, and the answers come late.
    static var stale: WorldSetup {
        base(1, [
            .at(0, .timeouts(rateBp: 10_000, forMs: 2 * h)),
            person(0, .launch), person(20 * m, .open), person(21 * m, .query),
            person(40 * m, .launch), person(41 * m, .reset), person(42 * m, .query),
            person(3 * h, .launch),
        ])
    }

    /// reset(), then Photos revoked and the app run again, then granted back.
    static var resetAndPhotos: WorldSetup {
        base(1, [
            person(0, .launch),
            person(h, .reset),
            person(2 * h, .launch),
            person(3 * h, .revokePhotos),
            person(4 * h, .launch),
            person(5 * h, .grantPhotos),
            person(6 * h, .launch),
        ])
    }

    /// Genuine installs and clones sending the copied key.
    static var clones: WorldSetup {
        base(1, devices: 2, clones: 2, [person(0, .launch), person(h, .launch)])
    }

    /// A rotation keeping the old key one day; installs still send it right after.
    static var rotation: WorldSetup {
        base(3, [
            person(0, .launch),
            dash(1 * d, .rotate(app: 0, newKey: 1, graceMs: 1 * d)),
            person(2 * d - h, .launch),
            person(2 * d + h, .launch),
            person(2 * d + 2 * h, .update),
            person(2 * d + 3 * h, .launch),
        ])
    }

    /// Requests within 5 minutes of a disable, and within 5 minutes of an enable.
    static var keyCache: WorldSetup {
        base(2, [
            person(0, .launch),
            dash(m, .disable(app: 0)),
            person(2 * m, .launch),
            dash(1 * d, .enable(app: 0)),
            person(1 * d + m, .launch),
            dash(1 * d + h, .disable(app: 0)),
            person(1 * d + h + m, .launch),
            dash(1 * d + h + 2 * m, .enable(app: 0)),
            person(1 * d + h + 3 * m, .launch),
        ])
    }

    /// Rollup revokes the app; the developer disables and enables it.
    static var rollup: WorldSetup {
        base(3, [
            person(0, .launch),
            dash(1 * d, .rollupApp(.revoke, app: 0)),
            dash(1 * d + h, .disable(app: 0)),
            dash(1 * d + 2 * h, .enable(app: 0)),
            person(1 * d + 3 * h, .launch),
            dash(2 * d, .rollupApp(.restore, app: 0)),
            person(2 * d + h, .launch),
        ])
    }

    /// Two apps; an update ships the other app's valid key to installs of the first.
    static var otherAppsKey: WorldSetup {
        var s = base(2, [
            person(0, .launch),
            person(1 * d, .update, DeviceSelection(group: 0, mode: .every), arg: 2 + 1),
            person(1 * d + m, .launch),
        ])
        s.accounts.append(AccountSpec(name: "other"))
        s.apps.append(AppSpec(name: "other", account: 1, initialKey: 2))
        s.groups.append(GroupSpec(name: "other", app: 1, count: 1, photosMin: 200, photosMax: 500))
        return s
    }

    /// Verdicts on either side of a dashboard change, delivered out of order on a slow link:
    /// a check's 200 served before a disable arrives after a query's refusal, and a query's
    /// refusal served before an enable arrives after a check's 200 (D4, D9).
    static var verdictRaces: WorldSetup {
        var schedule = [
            person(0, .launch),
            person(h, .launch),
            dash(h + 1_000, .disable(app: 0)),
            person(h + 1_100, .query),
            dash(2 * h, .enable(app: 0)),
            person(2 * h + m, .open),
        ]
        // Three times, a day and an hour apart, so each activation's check is due (D1).
        for k: SimTime in 1...3 {
            let t = k * (d + h) + 2 * h
            schedule += [dash(t, .disable(app: 0)), person(t + 1, .query),
                         dash(t + 2_050, .enable(app: 0)), person(t + 2_060, .open)]
        }
        var s = base(4, devices: 150, schedule)
        s.network = NetworkSpec(latencyMinMs: 20, latencyMaxMs: 4_000)
        return s
    }

    /// Access stops, comes back while every device is offline (so none hears of it), and
    /// stops again: the 30 days count from the second stop (D5, S2).
    static var relock: WorldSetup {
        base(33, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + m, .launch),
            .at(2 * d, .offline(.all, forMs: 10 * d)),
            dash(10 * d, .enable(app: 0)),
            dash(12 * d, .disable(app: 0)),
            person(31 * d + 3 * h, .launch),
            person(32 * d + h, .launch),
        ])
    }

    /// A big library being indexed when access stops, and an unlock an hour later (D4).
    static var lockMidRun: WorldSetup {
        base(1, [
            person(0, .addPhotos, arg: 20_000),
            person(0, .launch),
            dash(5 * m, .disable(app: 0)),
            person(6 * m, .query),
            dash(h, .enable(app: 0)),
            person(2 * h, .launch),
        ])
    }

    /// A run cut short by a lock (its report queued), and 30 days later a lock error that
    /// purges: the report must stay (D5, D10).
    static var lockMidRunThenPurge: WorldSetup {
        base(32, [
            person(0, .addPhotos, arg: 20_000),
            person(0, .launch),
            dash(5 * m, .disable(app: 0)),
            person(6 * m, .query),
            person(31 * d, .launch),
        ])
    }

    /// reset() while the app is disabled (S8: the record goes all the same).
    static var resetWhileDisabled: WorldSetup {
        base(2, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + m, .launch),
            person(1 * d + h, .reset),
            dash(1 * d + 2 * h, .enable(app: 0)),
            person(1 * d + 3 * h, .launch),
        ])
    }

    /// Clones that copy the genuine devices' keys and credentials, then call the API (S6).
    static var copyingClones: WorldSetup {
        var s = base(1, devices: 2, clones: 2, [person(0, .launch, DeviceSelection(group: 0, mode: .every)),
                                                person(h, .launch, DeviceSelection(group: 1, mode: .every)),
                                                person(2 * h, .query, DeviceSelection(group: 1, mode: .every))])
        s.groups[1].copiesCredentialsOf = 0
        return s
    }

    // MARK: Deep mutants (issue 20): exact boundaries and rare situations.

    /// `setup` with every request's round trip pinned to `ms`: a request sent at t reaches
    /// the server at t + ms/2 exactly, so a boundary can be hit to the millisecond.
    static func pinned(_ ms: SimTime, _ setup: WorldSetup) -> WorldSetup {
        var s = setup
        s.network = NetworkSpec(latencyMinMs: ms, latencyMaxMs: ms)
        return s
    }

    /// A disable; launches judged at exactly 30 days after it, and 10 minutes later (D5).
    static var purgeEdge: WorldSetup {
        pinned(20, base(32, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + h, .launch),
            person(31 * d - 10, .launch),
            person(31 * d + 10 * m, .launch),
        ]))
    }

    /// A launch and a background run 30 s after its check was answered; an activation
    /// 24 h + 500 ms after the last answered check (D1).
    static var activationEdges: WorldSetup {
        pinned(20, base(2, [
            person(0, .launch),
            person(h, .close),
            person(2 * h, .launch),
            person(2 * h + 30_000, .background),
            person(3 * h, .close),
            person(d + 2 * h + 30_000 + 21 + 500, .open),
        ]))
    }

    /// A disable while the first run's model download is in flight (D2).
    static var stopDuringDownload: WorldSetup {
        pinned(20, base(1, [
            person(0, .launch),
            dash(25, .disable(app: 0)),
            dash(h, .enable(app: 0)),
            person(h + m, .launch),
        ]))
    }

    /// A lock error answered late (timeouts), a newer 200, then a request failing offline
    /// before the late lock error arrives (D4, D9).
    static var staleAfterPartition: WorldSetup {
        var s = pinned(20, base(1, devices: 20, [
            person(0, .launch),
            dash(h, .disable(app: 0)),
            .at(h, .slowResponses(.all, byMs: 3_000, forMs: 100)),   // answered at h + 3,020 ms, before its 5 s timeout
            person(h, .launch),
            dash(h + 1_000, .enable(app: 0)),
            person(h + 1_000, .query),
            .at(h + 2_000, .offline(.all, forMs: m)),
            person(h + 2_000, .query),
        ]))
        s.sdk.requestTimeoutMs = 5_000
        return s
    }

    /// The launch's register is sent at 0 ms, the app disabled at 9 ms, the register served
    /// app_disabled at 10 ms, the app closed at 11 ms, woken for a background task at 19 ms,
    /// the register's answer delivered at 20 ms (issue 22's ordering: check sent, close,
    /// background wake, answer).
    static var backgroundWakeDuringCheck: WorldSetup {
        pinned(20, base(1, devices: 5, [
            person(0, .launch),
            dash(9, .disable(app: 0)),
            person(11, .close),
            person(19, .background),
        ]))
    }

    /// A request judged at exactly an old key's grace deadline (S3).
    static var graceEdge: WorldSetup {
        pinned(20, base(3, [
            person(0, .launch),
            dash(1 * d, .rotate(app: 0, newKey: 1, graceMs: 1 * d)),
            person(2 * d - 10, .launch),
        ]))
    }

    /// A request judged in the very millisecond of a `stop-old now` rotation (S3).
    static var stopNowEdge: WorldSetup {
        pinned(1, base(2, [
            person(0, .launch),
            dash(1 * d, .rotate(app: 0, newKey: 1, graceMs: nil)),
            person(1 * d, .launch),
        ]))
    }

    /// Rollup restores an app the developer disabled; Rollup restores an account whose app
    /// it revoked too; a disable while an old key is in its grace (S4, S5).
    static var rollupAndDisable: WorldSetup {
        base(6, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            dash(1 * d + m, .rollupApp(.revoke, app: 0)),
            dash(1 * d + h, .rollupApp(.restore, app: 0)),
            person(1 * d + 2 * h, .launch),
            dash(2 * d, .enable(app: 0)),
            person(2 * d + h, .launch),
            dash(3 * d, .rollupApp(.revoke, app: 0)),
            dash(3 * d + m, .rollupAccount(.revoke, account: 0)),
            dash(3 * d + h, .rollupAccount(.restore, account: 0)),
            person(3 * d + 2 * h, .launch),
            dash(4 * d, .rollupApp(.restore, app: 0)),
            dash(4 * d + h, .rotate(app: 0, newKey: 1, graceMs: 7 * d)),
            dash(4 * d + 2 * h, .disable(app: 0)),
            person(4 * d + 3 * h, .launch),
            dash(5 * d, .enable(app: 0)),
            person(5 * d + h, .launch),
        ])
    }

    // MARK: Interleavings (issue 38): an action lands while a request is in flight.

    /// Locked by a disable; after the enable the app comes to the foreground, and goes to
    /// the background while the check that unlocks it is in flight (D4).
    static var backgroundDuringUnlockingCheck: WorldSetup {
        pinned(20, base(3, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + m, .launch),
            dash(2 * d, .enable(app: 0)),
            person(2 * d + h, .close),
            person(2 * d + h, .open),
            person(2 * d + h + 5, .close),
        ]))
    }

    /// A locked device checks twice on either side of an enable; the older, refused check
    /// is answered slowly and arrives after the newer 200 that unlocked it (D4, D9).
    static var lockedRaceAcrossEnable: WorldSetup {
        pinned(20, base(3, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + m, .launch),
            .at(2 * d, .slowResponses(.all, byMs: 3_000, forMs: 15)),
            person(2 * d, .close),
            person(2 * d, .open),        // check A: judged at +10 ms, refused, answered at +3,020 ms
            dash(2 * d + 12, .enable(app: 0)),
            person(2 * d + 14, .close),
            person(2 * d + 14, .open),   // check B: judged at +24 ms, 200, answered at +34 ms
        ]))
    }

    /// The same race in the other order (issue 46): check A, refused before the enable,
    /// arrives while check B, sent after it, is still out; B's 200 must unlock (D4).
    static var lockedChecksAnsweredInOrder: WorldSetup {
        pinned(20, base(3, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            person(1 * d + m, .launch),
            person(2 * d, .close),
            person(2 * d, .open),        // check A: judged at +10 ms, refused, answered at +20 ms
            dash(2 * d + 12, .enable(app: 0)),
            person(2 * d + 14, .close),
            person(2 * d + 14, .open),   // check B: judged at +24 ms, 200, answered at +34 ms
            person(2 * d + h, .query),
        ]))
    }

    /// Offline from before a disable until 31 days after it, so the devices hear of the
    /// stop only when it is 31 days old, and from a query, not a key check (D5).
    static var thirtyDayStopHeardByQuery: WorldSetup {
        pinned(20, base(33, [
            person(0, .launch),
            .at(1 * d - m, .offline(.all, forMs: 31 * d)),
            dash(1 * d, .disable(app: 0)),
            person(32 * d, .query),
            person(32 * d + h, .open),
        ]))
    }

    /// Clones copy the genuine devices' live credentials and reset with them (S6, S8);
    /// the genuine devices launch again afterwards.
    static var cloneResets: WorldSetup {
        var s = base(1, devices: 2, clones: 2, [person(0, .launch, DeviceSelection(group: 0, mode: .every)),
                                                person(h, .launch, DeviceSelection(group: 1, mode: .every)),
                                                person(2 * h, .reset, DeviceSelection(group: 1, mode: .every)),
                                                person(3 * h, .launch, DeviceSelection(group: 0, mode: .every))])
        s.groups[1].copiesCredentialsOf = 0
        return s
    }

    /// A reset's 200 is lost (every answer lost around its judging), the device registers
    /// again before the retry, and the retry names the deleted registration (S8).
    static var lateResetAfterRegistration: WorldSetup {
        pinned(20, base(2, devices: 1, [
            person(0, .launch),
            person(h, .reset),                            // judged at +10 ms
            .at(h + 9, .lostResponses(rateBp: 10_000, forMs: 2)),
            person(h + 10 * Ms.second, .open),            // registers again: generation 2
            person(d, .open),
        ]))
    }

    /// A reset whose delete the server answers 503 (it deleted nothing), then an open that
    /// registers the device again before the retry: the retry must name the registration
    /// the reset named, not the new one (D7, S8).
    static var resetFailsThenRegistration: WorldSetup { resetAcrossRegistration(twice: false) }

    /// The same, and reset() again once the new registration is answered, with the first
    /// delete still owed: both records must go (issue 46, part 4).
    static var resetTwiceAcrossRegistration: WorldSetup { resetAcrossRegistration(twice: true) }

    static func resetAcrossRegistration(twice: Bool) -> WorldSetup {
        pinned(20, base(2, devices: 1, [
            person(0, .launch),
            person(h, .reset),                            // judged at +10 ms
            .at(h + 9, .serverErrors(rateBp: 10_000, status: 503, forMs: 2)),
            person(h + 10 * Ms.second, .open),            // registers again: generation 2
        ] + (twice ? [person(h + 20 * Ms.second, .reset)] : []) + [   // owes generations 1 and 2
            person(d, .open),
        ]))
    }

    /// The app is disabled a day in, the server forgets the devices an hour later, and they
    /// launch 30 days into the stop: the disable refuses every key of the app, so S2 dates
    /// the stop from it whatever the server remembers of the devices (and D5 purges).
    static var forgetDuringDisable: WorldSetup {
        base(33, [
            person(0, .launch),
            dash(1 * d, .disable(app: 0)),
            .at(1 * d + h, .forgetDevice(.all)),
            person(31 * d + 2 * h, .launch),
        ])
    }

    /// A rotation that stops the old key, an update, a disable and a Rollup revocation, each
    /// acknowledged before a server restart, and launches after it (S10): a server that
    /// forgets them serves the app again.
    static var restartAfterActions: WorldSetup {
        base(3, [
            person(0, .launch),
            dash(h, .rotate(app: 0, newKey: 1, graceMs: nil)),
            person(2 * h, .update),
            person(3 * h, .launch),
            dash(1 * d, .disable(app: 0)),
            dash(1 * d + m, .rollupApp(.revoke, app: 0)),
            person(1 * d + h, .launch),
            .at(2 * d, .serverRestart()),
            person(2 * d + h, .launch),
        ])
    }

    /// Served devices behind a proxy that answers a bare 403, then locked devices behind a
    /// portal's login page (a 200), each with launches and a query inside the window (P6).
    static var portals: WorldSetup {
        base(2, [
            person(0, .launch),
            .at(h, .portal(.all, answers: .forbidden, forMs: h)),
            person(h + m, .launch), person(h + 2 * m, .query),
            dash(4 * h, .disable(app: 0)),
            person(4 * h + m, .launch),
            .at(5 * h, .portal(.all, answers: .loginPage, forMs: h)),
            person(5 * h + m, .launch), person(5 * h + 2 * m, .open),
            dash(8 * h, .enable(app: 0)),
            person(8 * h + m, .launch),
        ])
    }

    /// P2: the phones launch (a check), their clocks are set back 3 days an hour later, and
    /// they are closed and opened 25 hours after the check with nothing to index: D1 by the
    /// phone's clock owes a check (the clock reads earlier than when the last one came).
    static var clockSetBackPastCheck: WorldSetup {
        base(4, [
            person(0, .launch),
            .at(h, .phoneClock(.all, byS: -3 * 86_400)),
            person(2 * h, .close),
            person(d + h, .open),
            person(d + 2 * h, .close),
            person(2 * d, .open),
        ])
    }

    /// P2: the app is disabled, the phones hear of it, their clocks jump forward 31 days, and
    /// they talk to the server again: a lock error of a stop hours old, a month by the phone.
    static var clockForwardDuringStop: WorldSetup {
        base(3, [
            person(0, .launch),
            dash(h, .disable(app: 0)),
            person(2 * h, .close),
            person(2 * h + m, .open),
            .at(3 * h, .phoneClock(.all, byS: 31 * 86_400)),
            person(3 * h + m, .close),
            person(3 * h + 2 * m, .open),
        ])
    }

    /// P5: background runs of 30 s with 1,000 new photos: each is asked to stop mid-run,
    /// and the next resumes (a second background run, then an open).
    static var backgroundExpiry: WorldSetup {
        base(2, [
            person(0, .launch),
            person(h, .close),
            .at(2 * h, .backgroundLimit(.all, limitMs: 30_000)),
            person(2 * h + m, .addPhotos, arg: 1_000),
            person(2 * h + 2 * m, .background),
            person(6 * h, .background),
            person(d, .open),
        ])
    }

    /// P3: new photos, then the disks are full for a day while the app is opened and run in
    /// the background (index writes and run reports refused), then opened again in the
    /// same process once the disks have room, and run in the background.
    static var diskFullDuringRuns: WorldSetup {
        base(3, [
            person(0, .launch),
            person(2 * h, .addPhotos, arg: 300),
            .at(2 * h, .diskFull(.all, forMs: d)),
            person(3 * h, .open),
            person(3 * h + 10 * m, .close),
            person(6 * h, .background),
            person(d + 3 * h, .open),
            person(d + 4 * h, .close),
            person(2 * d, .background),
        ])
    }

    /// P4: the phones restart at 2 h, the OS runs the app in the background at 4 h, before
    /// the person unlocks them at 10 h; then the app is opened.
    static var rebootBeforeUnlock: WorldSetup {
        base(2, [
            person(0, .launch),
            .at(2 * h, .reboot(.all, unlockAfterMs: 8 * h)),
            person(4 * h, .background),
            person(10 * h + m, .open),
            person(d, .background),
        ])
    }

    /// P1: the phones launch and index; a kill is set for their second write, and the
    /// person resets: the kill lands between the reset's writes; the app is opened later.
    static var killDuringReset: WorldSetup {
        base(2, [
            person(0, .launch),
            .at(h, .kill(.all, atWrite: 2)),
            person(h + m, .reset),
            person(2 * h, .open),
        ])
    }

    /// P1: access is stopped; a kill is set for the phones' second write; a query meets the
    /// lock error, and the kill lands between the lock's writes; the app is launched later.
    static var killDuringLock: WorldSetup {
        base(2, [
            person(0, .launch),
            dash(2 * h, .disable(app: 0)),
            .at(2 * h + m, .kill(.all, atWrite: 2)),
            person(2 * h + 2 * m, .query),
            person(3 * h, .launch),
        ])
    }

    /// The world that exercises `name`'s bug.
    static func world(for name: String) -> WorldSetup {
        switch name {
        case "lock-on-5xx", "lock-on-timeout", "lock-on-offline", "drop-reports-on-failure": transient
        case "lock-on-pending": pending
        case "lock-on-device-unknown": forget
        case "locked-since-survives-unlock", "purge-at-29-days", "purge-on-offline-check", "never-purge",
             "redownload-models-on-unlock", "reindex-on-unlock", "no-check-when-locked",
             "query-while-locked", "index-while-locked": longDisable
        case "skip-background-check", "check-every-48h": schedule
        case "apply-stale-responses": stale
        case "reset-keeps-credential", "reset-keeps-record", "ignore-photos-revoked": resetAndPhotos
        case "skip-attestation": clones
        case "grace-one-day-late": rotation
        case "cache-key-checks": keyCache
        case "enable-lifts-rollup": rollup
        case "skip-device-app-check": otherAppsKey
        case "unlock-on-stale-ok", "lock-on-stale-refusal": verdictRaces
        case "purge-from-first-lock-seen", "stopped-since-from-first-stop": relock
        case "redownload-place-data-on-unlock", "no-background-after-unlock", "no-run-after-unlock": longDisable
        case "register-only-at-key-check": forgetThenQueries
        case "reports-dropped-on-purge": lockMidRunThenPurge
        case "no-resume-after-unlock": lockMidRun
        case "reset-refused-keeps-record": resetWhileDisabled
        case "clone-credential-accepted": copyingClones
        case "purge-strictly-after-30-days", "purge-30-minutes-late": purgeEdge
        case "check-age-in-whole-seconds", "skip-background-check-after-launch": activationEdges
        case "no-lock-on-download-refusal": stopDuringDownload
        case "stale-verdict-after-partition": staleAfterPartition
        case "grace-deadline-inclusive": graceEdge
        case "stop-now-one-ms-late": stopNowEdge
        case "restore-lifts-disable", "account-restore-lifts-app-revoke", "disable-spares-grace-keys": rollupAndDisable
        case "background-wake-drops-check": backgroundWakeDuringCheck
        case "restart-forgets": restartAfterActions
        case "date-update-from-first-request": unseenUpdateThenDisable
        case "reports-settled-by-device-unknown": forgetBeforeUpload
        case "unlock-only-in-foreground": backgroundDuringUnlockingCheck
        case "relock-by-older-check": lockedRaceAcrossEnable
        case "purge-only-on-check": thirtyDayStopHeardByQuery
        case "clone-reset-deletes-record": cloneResets
        case "throw-on-pending": pendingQuery
        case "upload-only-at-run-end": reportsQueuedThenOpens
        case "reset-not-retried": resetOffline
        case "upload-outlives-reset": resetWithReportsQueued
        case "reset-ignores-generation": lateResetAfterRegistration
        case "dates-forgotten-from-refusal": forgetDuringDisable
        case "lock-on-bare-403", "unlock-on-portal-200": portals
        case "check-interval-on-wall-clock": clockSetBackPastCheck
        case "days-on-wall-clock": clockForwardDuringStop
        case "rewind-chunk-on-expiry", "drop-task-on-expiry": backgroundExpiry
        case "timeout-race-takes-late-answer": stale
        case "check-reenters-on-activation": lockedChecksAnsweredInOrder
        case "reset-retry-current-credential": resetFailsThenRegistration
        case "second-reset-drops-owed-delete": resetTwiceAcrossRegistration
        case "drop-unwritten-report": diskFullDuringRuns
        case "unreadable-as-absent", "wipe-unreadable-index": rebootBeforeUnlock
        case "reset-marks-pending-last": killDuringReset
        case "lock-trusted-by-its-date": killDuringLock
        default: fatalError("no world for mutant \(name)")
        }
    }

    static func run(_ setup: WorldSetup, _ mutant: Mutant? = nil) -> InvariantChecker {
        var s = setup
        if let mutant { s.sdkFlaws = mutant.sdkFlaws; s.serverFlaws = mutant.serverFlaws }
        var world = World<ReferenceSDK, InvariantChecker>(setup: s, observer: InvariantChecker())
        world.run()
        return world.observer
    }
}

@Suite struct MutantTests {
    @Test("the catalogue names 77 distinct mutants for fuzzing and 1 ordering-only one") func catalogue() {
        #expect(Mutants.all.count == 77)
        #expect(Mutants.orderingOnly.count == 1)
        #expect(Set(Mutants.names).count == Mutants.all.count + Mutants.orderingOnly.count)
        for m in Mutants.all { #expect(!m.alsoPlausible.contains(m.expected), "\(m.name) lists its expected invariant as plausible") }
    }

    @Test("each mutant is caught by its expected invariant, and only plausible ones fire", arguments: Mutants.names)
    func caught(_ name: String) throws {
        let mutant = try #require(Mutants.named(name))
        let allowed = Set([mutant.expected] + mutant.alsoPlausible)
        // A few seeds: the world must expose the bug whatever the latencies drawn.
        for seed: UInt64 in [7, 8, 9] {
            var setup = MutantWorlds.world(for: name)
            setup.seed = seed
            let reference = MutantWorlds.run(setup)
            #expect(reference.broken.isEmpty, "seed \(seed): the reference breaks \(reference.broken.map(\.rawValue)) in the world of \(name): \(reference.violations.map(\.headline))")
            let checker = MutantWorlds.run(setup, mutant)
            #expect(checker.broken.contains(mutant.expected), "seed \(seed): \(name) was not caught by \(mutant.expected.rawValue); broken: \(checker.broken.map(\.rawValue))")
            let unexpected = checker.broken.filter { !allowed.contains($0) }
            #expect(unexpected.isEmpty, "seed \(seed): \(name) also broke \(unexpected.map(\.rawValue)): \(checker.violations.filter { unexpected.contains($0.invariant) }.map(\.headline))")
        }
    }
}
