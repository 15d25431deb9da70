/// Makes a large guided corpus small and ordered (`simkit corpus distill`): greedy set cover
/// over the features each script reaches (`GuidanceObserver`'s, with the "sometimes"
/// situations): first the script reaching the most features, then each time the one adding
/// the most features not yet covered, until no script adds one or `limit` are chosen.
///
/// The order matters because a starting corpus is replayed first (`GuidedFuzz.Lane`): the
/// scripts that reach the most of what the corpus reached run in the first seeds. Like
/// libFuzzer's `-merge=1`, which keeps the inputs that add coverage, biggest first.
@usableFromInline package enum CorpusDistiller {
    /// The most scripts a distilled corpus keeps by default.
    @usableFromInline package static let defaultLimit = 256

    /// One script to choose from: the features it reaches, and a key that breaks ties
    /// between scripts adding as many features (the smaller key first), so the choice never
    /// depends on the order the scripts were read in.
    @usableFromInline package struct Candidate: Sendable {
        @usableFromInline package var features: FeatureMap
        @usableFromInline package var key: String
        @usableFromInline package init(features: FeatureMap, key: String) { self.features = features; self.key = key }
    }

    /// The greedy cover: indices into `candidates`, in the order chosen, and how many
    /// features each one added.
    ///
    /// Lazy greedy: a script's gain only shrinks as the cover grows, so the best stale
    /// gain is recomputed until it is still the best when fresh; the result is the same as
    /// recomputing every gain each round.
    /// - Complexity: O(limit · n) gain look-ups in the worst case, usually far fewer.
    /// `start`: features already covered (by scripts placed before the cover's).
    @usableFromInline package static func cover(_ candidates: [Candidate], limit: Int = defaultLimit, start: FeatureMap = FeatureMap()) -> [(index: Int, added: Int)] {
        precondition(limit >= 0, "limit \(limit) is negative")
        var gain = candidates.map { start.newFeatures(in: $0.features) }   // an upper bound on each script's gain
        var open = Array(repeating: true, count: candidates.count)
        var covered = start
        var chosen: [(index: Int, added: Int)] = []
        // Each pass of the loop either picks a script or lowers a stale gain, a bounded number of times.
        var steps = 0
        let stepLimit = (limit + 1) * (candidates.count + 1) + candidates.count
        while chosen.count < limit {
            steps += 1
            precondition(steps <= stepLimit, "greedy cover did not converge in \(stepLimit) steps")
            var best: Int?
            for i in candidates.indices where open[i] {
                guard let b = best else { best = i; continue }
                if gain[i] > gain[b] || (gain[i] == gain[b] && candidates[i].key < candidates[b].key) { best = i }
            }
            guard let b = best, gain[b] > 0 else { break }
            let fresh = covered.newFeatures(in: candidates[b].features)
            if fresh < gain[b] { gain[b] = fresh; continue }
            // `fresh` equals the best upper bound: no other script can add more, and any
            // other adding as many has a larger key (or a bound that ranked it after b).
            chosen.append((b, fresh))
            covered.formUnion(candidates[b].features)
            open[b] = false
        }
        return chosen
    }
}
