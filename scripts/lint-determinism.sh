#!/usr/bin/env bash
# lint-determinism.sh [package-root]
#
# Fails (exit 1) when Sources/SimKit uses anything that can make a simulation depend on
# more than its seed (SPEC §1, STYLE.md): the wall clock, system randomness, threads and
# Swift concurrency, the environment or the file system, per-process hash values, or
# Set/Dictionary (Swift seeds hashing per process, so their iteration order changes from
# run to run). Prints one `file:line: what: code` per offending line.
#
# Rules of the check:
# - Comment-only lines (starting with //, /* or *) are ignored, and so is the text after
#   `//` on a code line (a `//` inside a string literal also ends the checked text).
# - A use that is deterministic anyway is allowed by a justification on the same line,
#   or on a comment-only line directly above it:  // determinism: <why it is safe>
#   e.g. a Set used only for membership tests whose result is then sorted.
# - Set/Dictionary are flagged at any type use or literal, not only when iterated:
#   grep cannot tell whether a value is iterated later, so each use is justified instead.
#
# Tests/SimKitTests/SourceLintTests.swift reads the pattern table below and runs the
# same check in Swift, so `swift test` fails too. Keep the table in the format
# `description%%extended-regex`, using only regex syntax that both GNU grep -E and Swift
# Regex read the same way (no \b, no back-references, no ] inside brackets).
set -euo pipefail

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
src="$root/Sources/SimKit"
[ -d "$src" ] || { echo "lint-determinism: no directory $src" >&2; exit 2; }

patterns=$(cat <<'PATTERNS'
# BEGIN PATTERNS
wall clock%%(^|[^A-Za-z0-9_])Date(\(|\.now|\.init)
wall clock%%ContinuousClock|SuspendingClock|DispatchTime|DispatchWallTime|clock_gettime|gettimeofday|CFAbsoluteTimeGetCurrent|mach_absolute_time
system randomness%%SystemRandomNumberGenerator|\.random\(|arc4random|drand48|getrandom|/dev/u?random
system randomness%%(^|[^A-Za-z0-9_.])(random|rand|srand)\(
threads%%(^|[^A-Za-z0-9_])(Thread|NSThread|pthread_[a-z_]*|NSLock|NSRecursiveLock|os_unfair_lock|OperationQueue)([^A-Za-z0-9_]|$)
threads%%Dispatch(Queue|Group|Semaphore|Source)
concurrency%%(^|[^A-Za-z0-9_])Task *(\{|\.)
concurrency%%(^|[^A-Za-z0-9_])(async|await)([^A-Za-z0-9_]|$)
concurrency%%(^|[^A-Za-z0-9_])actor |@MainActor|@globalActor
unchecked concurrency%%@unchecked Sendable|nonisolated\(unsafe\)
environment%%ProcessInfo|getenv|environ\[|CommandLine\.
file system%%FileManager|FileHandle|(^|[^A-Za-z0-9_])fopen\(|(String|Data)\(contentsOf
per-process hash%%(^|[^A-Za-z0-9_])hashValue([^A-Za-z0-9_]|$)|Hasher\(\)
unordered collection%%(^|[^A-Za-z0-9_])(Set|Dictionary)(<|\(|\.)
unordered collection%%: *(Set|Dictionary)([^A-Za-z0-9_]|$)
unordered collection%%\[:\]
unordered collection%%\[ *[A-Z][A-Za-z0-9_.]*(<[^>]*>)?\?? *: *[A-Za-z_(\[]
unordered collection%%\[ *("[^"]*"|\.[a-z][A-Za-z0-9_]*|[0-9]+) *:
# END PATTERNS
PATTERNS
)

# Each Swift file as `path:line:code`, without comments and justified lines.
checked=$(cd "$root" && find Sources/SimKit -name '*.swift' | LC_ALL=C sort | while IFS= read -r f; do
    awk -v file="$f" '
        /^[ \t]*(\/\/|\/\*|\*)/ { justified = index($0, "// determinism:") > 0; next }
        {
            if (justified || index($0, "// determinism:") > 0) { justified = 0; next }
            justified = 0
            code = $0
            cut = index(code, "//")
            if (cut > 0) code = substr(code, 1, cut - 1)
            print file ":" FNR ":" code
        }' "$f"
done)

report=""
while IFS= read -r entry; do
    case "$entry" in ''|'#'*) continue ;; esac
    what="${entry%%\%\%*}"
    regex="${entry#*%%}"
    while IFS= read -r hit; do
        [ -n "$hit" ] || continue
        code="${hit#*:*:}"                      # the code after `path:line:`
        printf '%s\n' "$code" | grep -qE "$regex" || continue
        report+="${hit%%:"$code"}: $what: $(printf '%s' "$code" | sed -E 's/^[[:space:]]+//')"$'\n'
    done < <(printf '%s\n' "$checked" | grep -E "$regex" || true)
done <<< "$patterns"

if [ -n "$report" ]; then
    printf '%s' "$report" | LC_ALL=C sort -t: -k1,1 -k2,2n
    echo "lint-determinism: nondeterministic APIs in Sources/SimKit (justify a safe use with '// determinism: why')" >&2
    exit 1
fi
echo "lint-determinism: ok"
