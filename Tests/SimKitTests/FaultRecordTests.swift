import Testing
@testable import SimKit

/// A fault kind's trace records (issue 47): the words each kind writes are the trace format
/// (the fingerprint folds them in), so they are pinned here as they were before the kinds
/// got their own files; their text is what a written trace shows.
@Suite struct FaultRecordTests {
    /// Every record of the six network faults, with its fingerprint words and its text.
    static let records: [(FaultRecord, a: UInt64, b: UInt64, text: String)] = [
        (.offline(until: 7_200_000), 1, 7_200_000, "offline(until: 7200000)"),
        (.offlineEnded, 2, 0, "offlineEnded"),
        (.serverErrors(rateBp: 5_000, status: 503, until: 9), 3 | 5_000 << 8 | 503 << 24, 9,
         "serverErrors(rateBp: 5000, status: 503, until: 9)"),
        (.serverDown(until: 11), 4, 11, "serverDown(until: 11)"),
        (.timeouts(rateBp: 10_000, until: 12), 5 | 10_000 << 8, 12, "timeouts(rateBp: 10000, until: 12)"),
        (.lostResponses(rateBp: 1, until: 13), 6 | 1 << 8, 13, "lostResponses(rateBp: 1, until: 13)"),
        (.serverFaultEnded, 7, 0, "serverFaultEnded"),
        (.slowResponses(byMs: 40_000, until: 14), 8 | 40_000 << 8, 14, "slowResponses(byMs: 40000, until: 14)"),
        (.slowResponsesEnded, 9, 0, "slowResponsesEnded"),
    ]

    @Test("each record keeps the words and the text it had before the kinds had files of their own")
    func wordsAndText() {
        for (record, a, b, text) in Self.records {
            let words = TraceEncoding.words(.fault(record))
            #expect(words == (15, a, b), "\(text)")
            #expect(record.description == text)
        }
    }

    @Test("each kind reads its own records back, typed, and no other kind's")
    func typedRecords() {
        for (record, _, _, text) in Self.records {
            let read: [String?] = [
                Offline.Record(record).map { "\($0)" }, ServerErrors.Record(record).map { "\($0)" },
                ServerDown.Record(record).map { "\($0)" }, Timeouts.Record(record).map { "\($0)" },
                LostResponses.Record(record).map { "\($0)" }, SlowResponses.Record(record).map { "\($0)" },
            ]
            let mine = read.compactMap { $0 }
            #expect(mine == (record == .serverFaultEnded ? [] : [text]), "\(text)")
        }
        #expect(Offline.Record(.offline(until: 3))?.fault == .offline(until: 3))
        #expect(ServerErrors.Record(.serverErrors(rateBp: 7, status: 599, until: 3)) == .serverErrors(rateBp: 7, status: 599, until: 3))
        #expect(SlowResponses.Record(.slowResponses(byMs: 1 << 31, until: 3)) == .slowResponses(byMs: 1 << 31, until: 3))
    }

    @Test("no two kinds own a tag, and every record has its owner")
    func tagsHaveOneOwner() {
        var seen: [UInt8] = []
        for owner in Faults.recordOwners {
            for tag in owner.recordTags {
                #expect(!seen.contains(tag), "tag \(tag) is owned twice")
                seen.append(tag)
            }
        }
        for (record, _, _, _) in Self.records { #expect(Faults.owner(of: record) != nil, "\(record)") }
        #expect(Faults.owner(of: FaultRecord(a: 200, b: 0)) == nil)
    }

    @Test("the windows' records tell the guided fuzzer their ends and the timeline its marks")
    func windowMeanings() {
        #expect(Faults.window(of: .offline(until: 5)) == FaultWindowRecord(until: 5, mark: .deviceBandOpens))
        #expect(Faults.window(of: .offlineEnded) == FaultWindowRecord(until: nil, mark: .deviceBandCloses))
        #expect(Faults.window(of: .serverErrors(rateBp: 1_250, status: 502, until: 6))?.mark
                == .serverWindow(label: "server errors 12.50% status 502", until: 6))
        #expect(Faults.window(of: .serverDown(until: 7))?.mark == .serverWindow(label: "server down", until: 7))
        #expect(Faults.window(of: .timeouts(rateBp: 5_000, until: 8))?.mark == .serverWindow(label: "timeouts 50%", until: 8))
        #expect(Faults.window(of: .lostResponses(rateBp: 5, until: 9))?.mark == .serverWindow(label: "lost responses 0.05%", until: 9))
        #expect(Faults.window(of: .slowResponses(byMs: 3, until: 10)) == FaultWindowRecord(until: 10, mark: nil))
        #expect(Faults.window(of: .serverFaultEnded)?.until == nil)
    }
}
