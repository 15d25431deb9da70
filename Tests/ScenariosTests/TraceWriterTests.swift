import Testing
import SimKit
@testable import Scenarios
@testable import ScenarioSearch

/// Collects the chunks a `TraceWriter` flushes (a class so the sink closure can append).
private final class Chunks { var all: [String] = [] }

@Suite("Trace writer")
struct TraceWriterTests {
    @Test("streams every record in bounded chunks, in order, with the same text as the records")
    func streamsEveryRecord() throws {
        let compiled = try ScenarioCompiler.compile(ScenarioGenerator.generate(seed: 11))
        let chunks = Chunks()
        var world = World<ReferenceSDK, ObserverPair<TraceRecorder, TraceWriter>>(
            setup: compiled.setup,
            observer: ObserverPair(TraceRecorder(), TraceWriter(chunkBytes: 512) { chunks.all.append($0) }))
        world.run()
        let records = world.observer.first.records
        #expect(records.count > 100)
        #expect(chunks.all.count > 2, "expected several chunks, got \(chunks.all.count)")
        for chunk in chunks.all.dropLast() { #expect(chunk.utf8.count < 512 + 200) }
        let lines = chunks.all.joined().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.first?.hasPrefix("# simkit trace: seed 11") == true)
        #expect(lines.last?.hasPrefix("# end at") == true)
        let body = Array(lines.dropFirst().dropLast())
        #expect(body.count == records.count)
        let facts = WorldFacts(setup: compiled.setup)
        for (line, record) in zip(body, records) { #expect(String(line) == TraceText.line(record, facts: facts)) }
    }
}
