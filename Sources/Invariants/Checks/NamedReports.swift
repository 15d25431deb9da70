import SimKit

/// Run reports an SDK names (`StoreOp.reportQueued/reportLeft`, `Effect.carries`), judged
/// one by one (D7, D10): a report leaves the queue only once a fresh 200 came back to an
/// upload that carried it, or by `reset()`; and no report a reset deleted is carried by an
/// upload afterwards. An SDK that names none is judged by counts (`Storage.swift`).
struct ReportLedger {
    /// Reports queued now, by the SDK's ids.
    var queued: [UInt64] = []
    /// Reports a fresh 200 confirmed (the server has them), and reports `reset()` deleted;
    /// each keeps its newest `limit` ids.
    var received: [UInt64] = []
    var deleted: [UInt64] = []
    /// The upload being traced (its request id), and what each awaited upload carries.
    var lastUpload: UInt32 = 0
    var carried: [(upload: UInt32, report: UInt64)] = []

    /// Ids kept per list: beyond it the oldest are forgotten (a bound on memory; a report
    /// that old is judged by counts, as an unnamed one).
    static let limit = 4096

    static func remember(_ id: UInt64, in list: inout [UInt64]) {
        if list.count >= limit { list.removeFirst(list.count - limit + 1) }
        list.append(id)
    }
}

extension InvariantChecker {
    /// A named report joined the queue.
    mutating func namedReportQueued(_ d: DeviceIndex, _ id: UInt64) {
        ReportLedger.remember(id, in: &ledgers[d, default: ReportLedger()].queued)
    }

    /// A named report left the queue (`store` judged it by counts already only if unnamed).
    mutating func namedReportLeft(_ d: DeviceIndex, _ id: UInt64) {
        var ledger = ledgers[d, default: ReportLedger()]
        if let k = ledger.queued.firstIndex(of: id) { ledger.queued.remove(at: k) }
        if step.isReset {
            ReportLedger.remember(id, in: &ledger.deleted)   // D7: reset() deletes it
        } else if !ledger.received.contains(id) {
            violate(ruleOfNoVerdict(.reportsNotLost), d, "run report \(id) left the queue though no 200 came back to an upload that carried it (D10: a report leaves the queue only by receipt or reset)" + noVerdictNote)
        }
        ledgers[d] = ledger
    }

    /// The upload just sent carries named report `id`.
    @usableFromInline @inline(never) mutating func carries(_ d: DeviceIndex, _ id: UInt64) {
        var ledger = ledgers[d, default: ReportLedger()]
        if ledger.carried.count >= ReportLedger.limit { ledger.carried.removeFirst() }
        ledger.carried.append((ledger.lastUpload, id))
        if ledger.deleted.contains(id) {
            violate(.resetDeletesEverything, d, "an upload carries run report \(id), which reset() deleted; nothing reset() deleted may reach the server afterwards (D7)")
        }
        ledgers[d] = ledger
    }

    /// An upload of device `d` was sent (the reports it carries follow as `carries`).
    mutating func namedUploadSent(_ d: DeviceIndex, _ upload: UInt32) {
        guard !ledgers.isEmpty, ledgers[d] != nil else { return }
        ledgers[d]!.lastUpload = upload
    }

    /// A fresh answer to upload `upload` came: a 200 confirms what it carried (D10).
    mutating func namedUploadAnswered(_ d: DeviceIndex, _ upload: UInt32, ok: Bool) {
        guard !ledgers.isEmpty, var ledger = ledgers[d] else { return }
        for entry in ledger.carried where entry.upload == upload && ok { ReportLedger.remember(entry.report, in: &ledger.received) }
        ledger.carried.removeAll { $0.upload == upload }
        ledgers[d] = ledger
    }

    /// `reset()`: every named report queued is deleted, whether or not the SDK says so yet.
    mutating func namedReportsReset(_ d: DeviceIndex) {
        guard !ledgers.isEmpty, var ledger = ledgers[d] else { return }
        for id in ledger.queued { ReportLedger.remember(id, in: &ledger.deleted) }
        ledgers[d] = ledger
    }
}
