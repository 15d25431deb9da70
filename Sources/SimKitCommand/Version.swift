/// The tool's version, in one place: `simkit --version`, `simkit version`, and the
/// `simkit` field of fuzz JSON and JUnit files. Raise it when output formats or results change.
enum SimKitVersion {
    static let number = "0.2.0"
    static let text = "SimKit \(number)"
}
