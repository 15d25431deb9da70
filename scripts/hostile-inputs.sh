#!/usr/bin/env bash
# hostile-inputs.sh [FILES] [CHUNK]
#
# Issue 19: no input reaches a trap. Checks FILES (default 100000) generated hostile
# scenario files (every statement form, each numeric field at 0, 1, its bound - 1, its
# bound, its bound + 1 or UInt64.max; see Sources/Scenarios/Fuzz/HostileInputs.swift)
# with the hidden `simkit hostile-inputs`: each file must give a located error or a run
# that ends under an event budget. Files run in-process, CHUNK (default 5000) at a time;
# a chunk whose process dies (a trap) or runs past its time limit is run again one file
# at a time, so each crash and each hang is counted and named.
#
# Prints the totals; exit 0 when there are no crashes, hangs or unlocated errors. A file
# that takes more than 10 s (`--slow`) counts as a hang and is named, with everything
# else simkit says about single files, in hostile-inputs.log (or $HOSTILE_LOG).
# Uses $SIMKIT, else .build/release/simkit, else .build/debug/simkit (build it first).
set -u -o pipefail
files=${1:-100000}
chunk=${2:-5000}
root=$(cd "$(dirname "$0")/.." && pwd)
simkit=${SIMKIT:-}
if [ -z "$simkit" ]; then
  if [ -x "$root/.build/release/simkit" ]; then simkit="$root/.build/release/simkit"; else simkit="$root/.build/debug/simkit"; fi
fi
[ -x "$simkit" ] || { echo "hostile-inputs.sh: no simkit at $simkit; run 'swift build' first" >&2; exit 2; }

declare -A total=()
keys="error passed failed incomplete tooLargeToRun unlocatedError hang"
for k in $keys; do total[$k]=0; done
crashes=0
limit_chunk=1800   # seconds for a chunk; a file alone gets 60
start=$(date +%s)
log=${HOSTILE_LOG:-hostile-inputs.log}
: > "$log"

slowest=0.00
add_line() {   # adds the counts of a 'hostile-inputs: files=… k=v …' line; keeps the slowest file's time
  for pair in $1; do
    k=${pair%%=*}; v=${pair#*=}
    case " $keys " in *" $k "*) total[$k]=$(( ${total[$k]} + v ));; esac
    if [ "$k" = slowest ]; then slowest=$(printf '%s\n%s\n' "$slowest" "${v%s}" | sort -g | tail -1); fi
  done
}

from=0
while [ "$from" -lt "$files" ]; do
  n=$(( files - from < chunk ? files - from : chunk ))
  out=$(timeout "$limit_chunk" "$simkit" hostile-inputs --from "$from" --count "$n" 2>>"$log" | tail -1)
  rc=$?
  if [ "$rc" -le 1 ] && [[ "$out" == hostile-inputs:* ]]; then
    add_line "$out"
  else
    echo "hostile-inputs.sh: chunk $from..$((from + n - 1)) ended with status $rc; checking it file by file" >&2
    for ((i = from; i < from + n; i++)); do
      out=$(timeout 60 "$simkit" hostile-inputs --from "$i" --count 1 2>>"$log" | tail -1)
      rc=$?
      if [ "$rc" -eq 124 ]; then
        total[hang]=$(( ${total[hang]} + 1 )); echo "  file $i: hang (over 60 s)" >&2
      elif [ "$rc" -gt 1 ] || [[ "$out" != hostile-inputs:* ]]; then
        crashes=$(( crashes + 1 )); echo "  file $i: crash (status $rc); see: $simkit hostile-inputs --from $i --count 1 --print" >&2
      else
        add_line "$out"
      fi
    done
  fi
  from=$(( from + n ))
done

echo "files: $files  crashes: $crashes  hangs: ${total[hang]}  unlocated errors: ${total[unlocatedError]}"
echo "  located errors: ${total[error]}  runs passed: ${total[passed]}  failed: ${total[failed]}  incomplete: ${total[incomplete]}  valid but too large to run here: ${total[tooLargeToRun]}"
echo "  slowest file: ${slowest} s; $(( $(date +%s) - start )) s in all with $simkit; details in $log"
[ "$crashes" -eq 0 ] && [ "${total[hang]}" -eq 0 ] && [ "${total[unlocatedError]}" -eq 0 ]
