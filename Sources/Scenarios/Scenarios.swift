/// The scenario runner and what a run produces: the compiler and runner, the core
/// registries, failure stories, the HTML timeline and the determinism guard. The language
/// is `ScenarioLanguage`, the search tools `ScenarioSearch`, the test API `SimKitTesting`.
package enum ScenariosModule {}
