import SimKit
import SimKitAsync
import Rollup

/// The SDK under SimKit: one `Rollup` actor per app process, over a simulated device's
/// services, and each world input as a call of its async API. Nothing of the SDK is
/// ported: its tasks, sleeps and races run on SimKit's loop.
///
/// `Bugs` chooses the planted bugs, so each variant is a core of its own type.
public final class RollupHarness<Bugs: BugChoice>: AsyncSDKHarness {
    let device: SimDevice
    let sdk: Rollup

    public convenience init(device: SimDevice) { self.init(device: device, transport: Bugs.transport(device)) }

    /// The harness over `transport` instead of the choice's (a harness that owns the transport).
    init(device: SimDevice, transport: any RollupTransport) {
        self.device = device
        var settings = RollupSettings()
        // The world's settings that are the product's (D1, D5, D9); the rest are the SDK's own.
        settings.requestTimeout = device.config.requestTimeoutMs
        settings.checkInterval = device.config.checkIntervalMs
        settings.purgeAfter = device.config.purgeAfterMs
        settings.bugs = Bugs.bugs
        sdk = Rollup(settings: settings, transport: transport, store: SimStore(device: device),
                     clock: Bugs.clock(device), scheduler: SimScheduler(tasks: device.backgroundTasks),
                     photos: SimPhotos(device: device), observer: SimObserver(device: device),
                     wallClock: SimRollupWallClock(wall: device.wallClock))
    }

    /// Rollup writes each change on its own (`SimStore.write`, one durable write each), so
    /// a kill may land between any two of them, inside one step too (P1).
    public static var storeOpsAreWrites: Bool { true }

    public func handle(_ event: DeviceEvent) async {
        switch event {
        case .launch(let inBackground): await sdk.configure(inBackground: inBackground)
        case .becameActive: await sdk.applicationDidBecomeActive()
        case .wentToBackground: await sdk.applicationDidEnterBackground()
        case .backgroundRun: _ = await device.backgroundTasks.fire()
        case .reset: await sdk.reset()
        case .call(let call):
            do {
                switch call {
                case .search: _ = try await sdk.search()
                case .query: try await sdk.query()
                case .profile: try await sdk.profile()
                }
                device.finished(call, .returned)
            } catch RollupError.accessRevoked {
                device.finished(call, .threwAccessRevoked)
            } catch {
                device.finished(call, .failed)
            }
        }
    }
}

/// Which planted bugs (and, for the leak tests, which leaky services) a core carries.
public protocol BugChoice: Sendable {
    static var bugs: PlantedBugs { get }
    static func transport(_ device: SimDevice) -> any RollupTransport
    static func clock(_ device: SimDevice) -> any RollupClock
}
extension BugChoice {
    public static var bugs: PlantedBugs { [] }
    public static func transport(_ device: SimDevice) -> any RollupTransport { SimTransport(device: device) }
    public static func clock(_ device: SimDevice) -> any RollupClock { SimRollupClock(clock: device.clock) }
}

public enum NoBugs: BugChoice {}
public enum IndexesAfterCancel: BugChoice { public static var bugs: PlantedBugs { .indexesAfterCancel } }
public enum VerdictReadBeforeAwait: BugChoice { public static var bugs: PlantedBugs { .verdictReadBeforeAwait } }
public enum AnswerAfterReset: BugChoice { public static var bugs: PlantedBugs { .answerAfterReset } }
public enum RetryOutlivesLock: BugChoice { public static var bugs: PlantedBugs { .retryOutlivesLock } }
public enum LateAnswerWins: BugChoice { public static var bugs: PlantedBugs { .lateAnswerWins } }
public enum CheckReenters: BugChoice { public static var bugs: PlantedBugs { .checkReenters } }
public enum UploaderOutlivesReset: BugChoice { public static var bugs: PlantedBugs { .uploaderOutlivesReset } }
public enum ResetRetryReadsCurrentToken: BugChoice { public static var bugs: PlantedBugs { .resetRetryReadsCurrentToken } }
public enum StopsAfterTheLockIsWritten: BugChoice { public static var bugs: PlantedBugs { .stopsAfterTheLockIsWritten } }

/// The cores this package registers, by the names scenarios and `--sdk custom:NAME` use.
public enum RollupCores {
    public static let all: [String: any SDKCore.Type] = [
        "rollup": AsyncCore<RollupHarness<NoBugs>>.self,
        "rollup-index-after-cancel": AsyncCore<RollupHarness<IndexesAfterCancel>>.self,
        "rollup-verdict-before-await": AsyncCore<RollupHarness<VerdictReadBeforeAwait>>.self,
        "rollup-answer-after-reset": AsyncCore<RollupHarness<AnswerAfterReset>>.self,
        "rollup-retry-outlives-lock": AsyncCore<RollupHarness<RetryOutlivesLock>>.self,
        "rollup-late-answer-wins": AsyncCore<RollupHarness<LateAnswerWins>>.self,
        "rollup-check-reenters": AsyncCore<RollupHarness<CheckReenters>>.self,
        "rollup-uploader-outlives-reset": AsyncCore<RollupHarness<UploaderOutlivesReset>>.self,
        "rollup-reset-retry-current-token": AsyncCore<RollupHarness<ResetRetryReadsCurrentToken>>.self,
        "rollup-stops-after-lock-written": AsyncCore<RollupHarness<StopsAfterTheLockIsWritten>>.self,
        "leak-dispatch": AsyncCore<RollupHarness<LeakDispatch>>.self,
        "leak-date": AsyncCore<RollupHarness<LeakDate>>.self,
        "leak-spin": AsyncCore<RollupHarness<LeakSpin>>.self,
        "leak-hang": AsyncCore<RollupHarness<LeakHang>>.self,
        "leak-set": AsyncCore<RollupHarness<LeakSet>>.self,
        "leak-urlsession": AsyncCore<PipelineHarness<URLSessionEscape>>.self,
        "leak-continuous-sleep": AsyncCore<RollupHarness<LeakContinuousClock>>.self,
        "leak-debounce": AsyncCore<PipelineHarness<DebounceOnContinuousClock>>.self,
        "leak-timer": AsyncCore<PipelineHarness<TimerOnContinuousClock>>.self,
        "leak-pipeline": AsyncCore<PipelineHarness<PipelineLeftWaiting>>.self,
        "rollup-pipeline": AsyncCore<PipelineHarness<PipelineEnded>>.self,
        "rollup-retry-loop": AsyncCore<RetryLoopHarness>.self,
    ]
}
