import Foundation
import SimKit

func parseDuration(_ s: String) -> UInt64? { DurationText.parse(s) }
func formatDuration(_ ms: UInt64) -> String { DurationText.format(ms) }

/// Seconds since an arbitrary point, for measuring the tool itself (never inside a simulation).
func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Writes to standard error.
func printError(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
