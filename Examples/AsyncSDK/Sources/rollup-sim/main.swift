// Every simkit command for the async SDK, on SimKit's executors: this must be the first
// statement of the program (no async code may run before it).
import SimKitAsync
import RollupSimKit

SimKitAsyncHost.main(sdks: RollupCores.all)   // --sdk custom:rollup, `sdk custom rollup`
