import SimKit

/// When the key must be checked (D1), and answers that must change nothing (D9).
extension InvariantChecker {
    /// Whether the step can break a rule of `checkSchedule` at all: every rule there needs
    /// a launch, an activation or a run started, and no check sent or in flight (`checked`),
    /// so most steps, even most activations, skip the call (debug builds prove a skipped
    /// step clean, `endStep`).
    @inline(__always)
    var mayBreakSchedule: Bool {
        step.hasAny(StepTruth.isActivationBit | StepTruth.runStartedBit)
            && !step.hasAny(StepTruth.sentCheckBit | StepTruth.checkInFlightBeforeBit)
    }

    /// D1, judged at the end of a step that may break it (`mayBreakSchedule`).
    @inline(never) mutating func checkSchedule(_ d: DeviceIndex) {
        let checked = step.sentCheck || step.checkInFlightBefore
        // A launch or activation, decided when the step began. (A background task that fires while a run is going starts no run, so it needs no
        // check of its own; every run that starts is judged below, D1.)
        if step.isLaunch, !checked {
            violate(.keyCheckSchedule, d, "launched and called configure without checking its key")
        } else if step.isBecameActive, !wallOffsetMs.isEmpty, let owed = wallClockOwes(d) {
            // P2: the phone's clock moved since the last answered check: D1 by the phone's
            // clock (clock-changes-nothing) judges this activation, not the true age. (The
            // empty test first: in a world where no clock moved, no call at all.)
            if !step.lockedBefore, owed, !checked {
                violate(.clockChangesNothing, d, "became active \(wallClockAgeText(d)) and did not check its key (D1 by the phone's clock)")
            }
        } else if step.isBecameActive {
            let last = step.lastAnsweredBefore
            let due = last == LocalData.never || now - last > InvariantChecker.checkIntervalMs
            if !step.lockedBefore, due, !checked {
                let since = last == LocalData.never ? "no answered check ever" : "the last answered check \(DurationText.format(now - last)) ago"
                // P6: an answer that was not Rollup's to a check since then is no answered check.
                if !notRollupCheckAt.isEmpty, let at = notRollupCheckAt[d], last == LocalData.never || at > last,
                   now - at <= InvariantChecker.checkIntervalMs {
                    violate(.notRollupIsNoVerdict, d, "became active with \(since) and did not check its key: an answer that was not Rollup's came to its check \(DurationText.format(now - at)) ago, but it is no verdict (P6), so it does not count as D1's answered check")
                } else {
                    violate(.keyCheckSchedule, d, "became active with \(since) and did not check its key")
                }
            }
        }
        // D1: a run starts after a key check sent since the launch, activation or background
        // run that started it (the check may be answered, or have failed, first), or with one
        // in flight, or in the step of a fresh 200 to a check. A run seen only by its state
        // names no trigger: any since the last run ended may have started it.
        let dev = devices[Int(d)]
        if step.runStarted, !checked, !dev.checkedSinceTrigger, !(dev.runInferred && dev.checkedSinceRun) {
            var resumedByCheck = false
            if case .response(let kind, .ok, true) = step.input, kind == .check || kind == .register { resumedByCheck = true }
            if !resumedByCheck {
                violate(.keyCheckSchedule, d, "started \(step.runStartedInBackground ? "a background run" : "an indexing run") without checking its key")
            }
        }
    }

    /// P2: at an activation of device `d` whose phone's clock moved since its last answered
    /// check, whether D1 owes a check by the phone's clock: that check is more than 24 h old
    /// on the wall clock, or the wall clock reads earlier than when it was answered (set
    /// back past it). nil when the clock did not move since (the true age rules,
    /// `key-check-schedule`) or there was no answered check.
    @inline(never) func wallClockOwes(_ d: DeviceIndex) -> Bool? {
        guard let age = wallClockAgeMs(d) else { return nil }
        return age < 0 || age > Int64(InvariantChecker.checkIntervalMs)
    }

    /// The last answered check's age by device `d`'s phone's clock, in ms (negative when
    /// the clock was set back past it); nil as for `wallClockOwes`.
    func wallClockAgeMs(_ d: DeviceIndex) -> Int64? {
        let i = Int(d)
        let last = step.lastAnsweredBefore
        guard i < wallOffsetMs.count, last != LocalData.never, wallOffsetMs[i] != wallOffsetAtCheckMs[i] else { return nil }
        return (Int64(now) + wallOffsetMs[i]) - (Int64(last) + wallOffsetAtCheckMs[i])
    }

    /// The words for `wallClockAgeMs`, built only for a violation's message.
    func wallClockAgeText(_ d: DeviceIndex) -> String {
        guard let age = wallClockAgeMs(d) else { return "" }
        let last = step.lastAnsweredBefore
        return age < 0
            ? "with its phone's clock set back \(DurationText.format(SimTime(-age))) before its last answered check (\(DurationText.format(now - last)) ago in truth)"
            : "with its last answered check \(DurationText.format(SimTime(age))) old by its phone's clock (\(DurationText.format(now - last)) in truth)"
    }

    /// P2: a phone's wall clock is set (`clock` fault): its new offset from the true time.
    mutating func wallClockSet(_ d: DeviceIndex, offsetMs: Int64) {
        if wallOffsetMs.isEmpty {
            wallOffsetMs = Array(repeating: 0, count: devices.count)
            wallOffsetAtCheckMs = Array(repeating: 0, count: devices.count)
        }
        guard Int(d) < wallOffsetMs.count else { return }
        wallOffsetMs[Int(d)] = offsetMs
    }

    /// P2, at every activation once a clock has moved: the situation where the fault bites
    /// D1, an unlocked device whose phone's clock reads earlier than when its last check was
    /// answered (a check is owed by the phone's clock, whatever the true age says).
    mutating func wallClockActivation(_ d: DeviceIndex) {
        guard !step.lockedBefore, wallClockOwes(d) == true,
              Int64(now) + wallOffsetMs[Int(d)] < Int64(step.lastAnsweredBefore) + wallOffsetAtCheckMs[Int(d)] else { return }
        hit(.clockSetBackPastCheck)
    }

    /// D9: a stale answer must change nothing. Judged at the end of a stale step that
    /// acted; one that did not is only counted, by `endStep`.
    @inline(never) mutating func checkStale(_ d: DeviceIndex) {
        guard step.isStale, step.acted, case .response(let kind, let answer, _) = step.input else { return }
        violate(.staleResponsesIgnored, d, "acted on a stale \(answer) answer to its \(kind) request (after its timeout, a reset or a purge): it \(step.firstStaleEffect.map(StepTruth.describe) ?? "changed something")")
    }
}
