/// One virtual phone: its disk, its photo library and permission, the installed app
/// version, the app process and the network link. 88 bytes; the SDK's process
/// state sits beside it in `World.sdks`.
@usableFromInline package struct DeviceState: Sendable {
    // Widest fields first, so the struct packs into 88 bytes.
    /// What the SDK keeps on disk.
    @usableFromInline package var disk = LocalData()
    /// The device has no network before this time.
    @usableFromInline package var offlineUntil: SimTime = 0
    /// Photos in the library; ids `0..<photoCount`, only growing.
    @usableFromInline package var photoCount: UInt32 = 0
    /// Draws made from this device's random stream (counter-based, see `World.draw`).
    @usableFromInline package var draws: UInt32 = 0
    /// The key built into the installed app version.
    @usableFromInline package var key: KeyID = 0
    /// The app this is an install of (a clone claims it but fails App Attest).
    @usableFromInline package var app: AppID = 0
    /// Counts app processes, so answers and timers of a dead process are recognised.
    @usableFromInline package var processEpoch: UInt16 = 0
    /// The installed app build: 0 at the start, one more at each update (saturating); a
    /// clone's build also moves when it copies another key. Requests carry it (S2).
    @usableFromInline package var build: UInt16 = 0
    /// Generations of the cancellable timers (`indexChunk`, `resetRetry`, `reportRetry`).
    @usableFromInline package var timerGeneration: (UInt16, UInt16, UInt16) = (0, 0, 0)
    /// The state the SDK last reported.
    @usableFromInline package var reportedState: SDKState = .unconfigured
    @usableFromInline package var genuine = true
    @usableFromInline package var photosAllowed = true
    /// Whether the app process is running, and whether it is in the foreground.
    @usableFromInline package var hasProcess = false
    @usableFromInline package var foreground = false

    @usableFromInline package init() {}
}
