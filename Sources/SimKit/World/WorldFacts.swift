/// The fixed facts of a world that observers may know before the first event: who is
/// who, which key belonged to which app at the start, the settings. Checkers derive
/// everything else from the trace, never from the models they judge.
public struct WorldFacts: Sendable {
    public var seed: UInt64
    public var durationMs: SimTime
    public var setup: WorldSetup
    /// Per device: the app it is an install of, and whether it is a genuine install.
    public var deviceApp: [AppID]
    public var deviceGenuine: [Bool]
    /// Per device: its group.
    public var deviceGroup: [UInt16]
    /// Per device: the photos in its library when the world starts (drawn from the seed; a
    /// checker follows `add-photos` from the trace). Empty until the world is built.
    public var devicePhotos: [UInt32] = []
    /// What the world's SDK core states within SPEC's limits (its back-offs, D7, D10).
    public var sdkStatement: SDKStatement = .specLimits

    public init(setup: WorldSetup) {
        self.seed = setup.seed
        self.durationMs = setup.durationMs
        self.setup = setup
        var app: [AppID] = [], genuine: [Bool] = [], group: [UInt16] = []
        let n = setup.deviceCount
        app.reserveCapacity(n); genuine.reserveCapacity(n); group.reserveCapacity(n)
        for (g, spec) in setup.groups.enumerated() {
            app.append(contentsOf: repeatElement(spec.app, count: Int(spec.count)))
            genuine.append(contentsOf: repeatElement(!spec.clones, count: Int(spec.count)))
            group.append(contentsOf: repeatElement(UInt16(g), count: Int(spec.count)))
        }
        deviceApp = app; deviceGenuine = genuine; deviceGroup = group
    }

    public var deviceCount: Int { deviceApp.count }

    /// `photos#17`: the device's group name and 1-based index within the group.
    public func deviceName(_ d: DeviceIndex) -> String {
        guard Int(d) < deviceGroup.count else { return d == Event.world ? "world" : "device \(d)" }
        let g = Int(deviceGroup[Int(d)])
        return "\(setup.groups[g].name)#\(Int(d) - setup.range(ofGroup: g).lowerBound + 1)"
    }
}
