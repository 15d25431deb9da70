/// The invariant checkers: online observers of a simulation's trace that judge the SDK
/// and the server against SPEC §3 from their own ground truth.
public enum InvariantsModule {}
