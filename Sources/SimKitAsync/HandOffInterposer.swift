#if canImport(Glibc)
import Glibc
import Synchronization

/// Work handed to another thread, interposed: the host executable defines `dispatch_async`,
/// `dispatch_async_f`, `dispatch_after`, `dispatch_after_f`, `dispatch_group_async`,
/// `dispatch_group_async_f`, `dispatch_barrier_async`, `dispatch_barrier_async_f`,
/// `dispatch_source_set_event_handler` and `pthread_create` (linked with `-Xlinker
/// --export-dynamic`, they take precedence over libdispatch's and libc's for every library
/// in the process: `DispatchQueue.async`, `OperationQueue`, URLSession, `Thread`), and
/// passes every call through to the real one. Two things are added:
///
/// - **The escape, at the step that makes it.** A hand-off made by the SDK during a step
///   (on the simulation thread, while a step drains the loop) is the escape
///   `escape-foreign-thread`, recorded at once: the step that caused it is the one named,
///   the same in every process, whenever the work comes back (or never does).
/// - **Its work, followed.** Work handed off while the loop runs (a step, or a process's
///   end) is wrapped: while it runs, its thread is marked with the world it came from
///   (`epoch`), so the hand-offs it makes in turn are followed too, and the world counts
///   what is still out (`outstanding`). A world's end waits, within a bound, for that count
///   to reach zero; a job such work enqueues on the loop is known to be that world's, and
///   one that arrives in a later world is dropped, never blamed on it.
///
/// Outside the loop's work (SimKit's own threads, the test runner, a child process) every
/// call passes straight through.
package enum HandOff {
    // Blocks are raw pointers here, copied and called through the Blocks runtime's ABI:
    // the Swift runtime cannot build the metadata of a block type on Linux (a lazy global of
    // one crashes), and these functions run in every thread of the process.
    typealias Function = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias ThreadStart = @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    typealias Queue = OpaquePointer?
    typealias BlockPointer = UnsafeMutableRawPointer?

    /// The definition after this executable's (RTLD_NEXT): libdispatch's or libc's.
    static func next(_ name: String) -> UnsafeMutableRawPointer? { dlsym(UnsafeMutableRawPointer(bitPattern: -1), name) }

    nonisolated(unsafe) static let realAsync = next("dispatch_async")
    nonisolated(unsafe) static let realAsyncF = next("dispatch_async_f")
    nonisolated(unsafe) static let realAfter = next("dispatch_after")
    nonisolated(unsafe) static let realAfterF = next("dispatch_after_f")
    nonisolated(unsafe) static let realGroupAsync = next("dispatch_group_async")
    nonisolated(unsafe) static let realGroupAsyncF = next("dispatch_group_async_f")
    nonisolated(unsafe) static let realBarrierAsync = next("dispatch_barrier_async")
    nonisolated(unsafe) static let realBarrierAsyncF = next("dispatch_barrier_async_f")
    nonisolated(unsafe) static let realSourceHandler = next("dispatch_source_set_event_handler")
    nonisolated(unsafe) static let realPthreadCreate = next("pthread_create")
    nonisolated(unsafe) static let queueLabel = next("dispatch_queue_get_label")
    nonisolated(unsafe) static let blockCopy = dlsym(nil, "_Block_copy")
    nonisolated(unsafe) static let blockRelease = dlsym(nil, "_Block_release")

    // The real functions, by their C types.
    typealias QueueBlock = @convention(c) (Queue, BlockPointer) -> Void
    typealias QueueFunction = @convention(c) (Queue, UnsafeMutableRawPointer?, Function?) -> Void
    typealias TimeQueueBlock = @convention(c) (UInt64, Queue, BlockPointer) -> Void
    typealias TimeQueueFunction = @convention(c) (UInt64, Queue, UnsafeMutableRawPointer?, Function?) -> Void
    typealias GroupQueueBlock = @convention(c) (OpaquePointer?, Queue, BlockPointer) -> Void
    typealias GroupQueueFunction = @convention(c) (OpaquePointer?, Queue, UnsafeMutableRawPointer?, Function?) -> Void
    typealias PthreadCreate = @convention(c) (UnsafeMutablePointer<pthread_t>?, UnsafePointer<pthread_attr_t>?, ThreadStart?, UnsafeMutableRawPointer?) -> Int32
    typealias Label = @convention(c) (Queue) -> UnsafePointer<CChar>?
    typealias BlockCall = @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?

    /// A heap copy of `block` (`_Block_copy`), kept until `release`.
    static func copy(_ block: BlockPointer) -> BlockPointer {
        guard let block, let blockCopy else { return block }
        return unsafeBitCast(blockCopy, to: BlockCall.self)(block)
    }
    static func release(_ block: BlockPointer) {
        guard let block, let blockRelease else { return }
        _ = unsafeBitCast(blockRelease, to: BlockCall.self)(block)
    }
    /// Calls `block`: its function is the fourth field of its layout (isa, flags, reserved, invoke).
    static func call(_ block: BlockPointer) {
        guard let block else { return }
        let invoke = block.load(fromByteOffset: 16, as: Function?.self)
        invoke?(block)
    }

    /// Whether hand-offs are followed at all: the host turns it on when this executable's
    /// definitions are the process's (`isInterposed`).
    package nonisolated(unsafe) static var following = false

    /// The thread's mark: the epoch of the world whose work it runs now (0: none).
    static let markKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    /// Set while a thread is inside a real hand-off function: what libdispatch does there
    /// (starting a worker thread) is its own, never followed.
    static let insideKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The world running now (`SimLoop.worldBegins` moves it on); starts at 1.
    static let epoch = Atomic<UInt64>(1)
    /// The world's hand-offs not yet finished: (the epoch they count for, how many).
    static let outstanding = Mutex<(epoch: UInt64, count: Int)>((1, 0))

    /// The epoch of the work the calling thread runs, 0 when none.
    static var mark: UInt64 { UInt64(UInt(bitPattern: pthread_getspecific(markKey))) }

    /// Hand-offs made by the SDK during steps and not yet reported, in order (simulation thread only).
    nonisolated(unsafe) static var escapes: [String] = []

    /// Moves to a new world: work of earlier ones no longer counts.
    static func newEpoch() -> UInt64 {
        let e = epoch.add(1, ordering: .relaxed).newValue
        outstanding.withLock { $0 = (e, 0) }
        return e
    }

    /// Hand-offs of this world still out.
    static var pending: Int {
        let e = epoch.load(ordering: .relaxed)
        return outstanding.withLock { $0.epoch == e ? $0.count : 0 }
    }

    /// What the calling thread's hand-off is: nil when it is not followed; else the epoch
    /// it belongs to, and whether it is an escape (made by the SDK during a step).
    static func classify(_ what: @autoclosure () -> String) -> UInt64? {
        guard following, pthread_getspecific(insideKey) == nil else { return nil }
        let m = mark
        if m != 0 { return m }
        let loop = SimLoop.shared
        guard loop.isDrainingOnThisThread else { return nil }
        if loop.inStep {
            if escapes.count < 4 { escapes.append(what()) }
            loop.escapeSeen = true
        }
        return epoch.load(ordering: .relaxed)
    }

    /// One followed piece of work: what it runs, and the world it counts for.
    final class Work {
        let epoch: UInt64
        /// A block (copied, released after it ran), or a function and its context, or a thread's start.
        let block: BlockPointer
        let function: Function?
        let context: UnsafeMutableRawPointer?
        let start: ThreadStart?
        init(epoch: UInt64, block: BlockPointer = nil, function: Function? = nil, context: UnsafeMutableRawPointer? = nil, start: ThreadStart? = nil) {
            self.epoch = epoch; self.block = HandOff.copy(block); self.function = function; self.context = context; self.start = start
            outstanding.withLock { if $0.epoch == epoch { $0.count += 1 } }
        }
        /// Runs it with its thread marked, then counts it done.
        func run() -> UnsafeMutableRawPointer? {
            let previous = pthread_getspecific(markKey)
            pthread_setspecific(markKey, UnsafeRawPointer(bitPattern: UInt(epoch)))
            defer {
                pthread_setspecific(markKey, previous)
                outstanding.withLock { if $0.epoch == epoch { $0.count -= 1 } }
            }
            if block != nil { HandOff.call(block); HandOff.release(block); return nil }
            if let start { return start(context) }
            function?(context)
            return nil
        }
        /// Never run (the real call failed): no longer counted.
        func dropped() {
            HandOff.release(block)
            outstanding.withLock { if $0.epoch == epoch { $0.count -= 1 } }
        }
        /// A +1 reference for the real call; the trampoline takes it back.
        var opaque: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
        static let trampoline: Function = { _ = Unmanaged<Work>.fromOpaque($0!).takeRetainedValue().run() }
        static let threadTrampoline: ThreadStart = { Unmanaged<Work>.fromOpaque($0!).takeRetainedValue().run() }
    }

    /// Runs `body` (a call of the real function) with the thread marked as inside one.
    @inline(__always) static func inside<R>(_ body: () -> R) -> R {
        let previous = pthread_getspecific(insideKey)
        pthread_setspecific(insideKey, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(insideKey, previous) }
        return body()
    }

    /// Whether this process's `dispatch_async` is this one (the host exported it).
    package static var isInterposed: Bool {
        guard let found = dlsym(nil, "dispatch_async") else { return false }
        let mine = unsafeBitCast(simkitInterposedDispatchAsync as @convention(c) (Queue, BlockPointer) -> Void,
                                 to: UnsafeMutableRawPointer.self)
        return found == mine
    }

    static func label(_ queue: Queue) -> String {
        guard let queue, let queueLabel, let p = unsafeBitCast(queueLabel, to: Label.self)(queue) else { return "a Dispatch queue" }
        let text = String(cString: p)
        if text.isEmpty { return "a Dispatch queue" }
        // Numbers in a label (`URLSession<3>`) count sessions of the whole process: left out,
        // so the verdict reads the same in every process and on a rerun.
        var out = "", inDigits = false
        for c in text.unicodeScalars {
            if c.properties.numericType != nil { if !inDigits { out += "#" }; inDigits = true } else { out.unicodeScalars.append(c); inDigits = false }
        }
        return "the Dispatch queue '\(out)'"
    }
}

@_cdecl("dispatch_async")
public func simkitInterposedDispatchAsync(_ queue: OpaquePointer?, _ block: UnsafeMutableRawPointer?) {
    guard let epoch = HandOff.classify("dispatch_async to \(HandOff.label(queue))") else {
        return unsafeBitCast(HandOff.realAsync!, to: HandOff.QueueBlock.self)(queue, block)
    }
    let work = HandOff.Work(epoch: epoch, block: block)
    HandOff.inside { unsafeBitCast(HandOff.realAsyncF!, to: HandOff.QueueFunction.self)(queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_async_f")
public func simkitInterposedDispatchAsyncF(_ queue: OpaquePointer?, _ context: UnsafeMutableRawPointer?,
                                           _ function: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) {
    let real = unsafeBitCast(HandOff.realAsyncF!, to: HandOff.QueueFunction.self)
    guard let epoch = HandOff.classify("dispatch_async_f to \(HandOff.label(queue))") else { return real(queue, context, function) }
    let work = HandOff.Work(epoch: epoch, function: function, context: context)
    HandOff.inside { real(queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_after")
public func simkitInterposedDispatchAfter(_ when: UInt64, _ queue: OpaquePointer?, _ block: UnsafeMutableRawPointer?) {
    guard let epoch = HandOff.classify("dispatch_after on \(HandOff.label(queue))") else {
        return unsafeBitCast(HandOff.realAfter!, to: HandOff.TimeQueueBlock.self)(when, queue, block)
    }
    let work = HandOff.Work(epoch: epoch, block: block)
    HandOff.inside { unsafeBitCast(HandOff.realAfterF!, to: HandOff.TimeQueueFunction.self)(when, queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_after_f")
public func simkitInterposedDispatchAfterF(_ when: UInt64, _ queue: OpaquePointer?, _ context: UnsafeMutableRawPointer?,
                                           _ function: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) {
    let real = unsafeBitCast(HandOff.realAfterF!, to: HandOff.TimeQueueFunction.self)
    guard let epoch = HandOff.classify("dispatch_after_f on \(HandOff.label(queue))") else { return real(when, queue, context, function) }
    let work = HandOff.Work(epoch: epoch, function: function, context: context)
    HandOff.inside { real(when, queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_group_async")
public func simkitInterposedDispatchGroupAsync(_ group: OpaquePointer?, _ queue: OpaquePointer?, _ block: UnsafeMutableRawPointer?) {
    guard let epoch = HandOff.classify("dispatch_group_async to \(HandOff.label(queue))") else {
        return unsafeBitCast(HandOff.realGroupAsync!, to: HandOff.GroupQueueBlock.self)(group, queue, block)
    }
    let work = HandOff.Work(epoch: epoch, block: block)
    HandOff.inside { unsafeBitCast(HandOff.realGroupAsyncF!, to: HandOff.GroupQueueFunction.self)(group, queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_group_async_f")
public func simkitInterposedDispatchGroupAsyncF(_ group: OpaquePointer?, _ queue: OpaquePointer?, _ context: UnsafeMutableRawPointer?,
                                                _ function: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) {
    let real = unsafeBitCast(HandOff.realGroupAsyncF!, to: HandOff.GroupQueueFunction.self)
    guard let epoch = HandOff.classify("dispatch_group_async_f to \(HandOff.label(queue))") else { return real(group, queue, context, function) }
    let work = HandOff.Work(epoch: epoch, function: function, context: context)
    HandOff.inside { real(group, queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_barrier_async")
public func simkitInterposedDispatchBarrierAsync(_ queue: OpaquePointer?, _ block: UnsafeMutableRawPointer?) {
    guard let epoch = HandOff.classify("dispatch_barrier_async to \(HandOff.label(queue))") else {
        return unsafeBitCast(HandOff.realBarrierAsync!, to: HandOff.QueueBlock.self)(queue, block)
    }
    let work = HandOff.Work(epoch: epoch, block: block)
    HandOff.inside { unsafeBitCast(HandOff.realBarrierAsyncF!, to: HandOff.QueueFunction.self)(queue, work.opaque, HandOff.Work.trampoline) }
}

@_cdecl("dispatch_barrier_async_f")
public func simkitInterposedDispatchBarrierAsyncF(_ queue: OpaquePointer?, _ context: UnsafeMutableRawPointer?,
                                                  _ function: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) {
    let real = unsafeBitCast(HandOff.realBarrierAsyncF!, to: HandOff.QueueFunction.self)
    guard let epoch = HandOff.classify("dispatch_barrier_async_f to \(HandOff.label(queue))") else { return real(queue, context, function) }
    let work = HandOff.Work(epoch: epoch, function: function, context: context)
    HandOff.inside { real(queue, work.opaque, HandOff.Work.trampoline) }
}

/// A Dispatch source's handler set by the SDK during a step is an escape (a timer or a
/// socket's events will run it on another thread); it is not followed further.
@_cdecl("dispatch_source_set_event_handler")
public func simkitInterposedDispatchSourceSetEventHandler(_ source: OpaquePointer?, _ handler: UnsafeMutableRawPointer?) {
    let real = unsafeBitCast(HandOff.realSourceHandler!, to: HandOff.QueueBlock.self)
    if HandOff.classify("a Dispatch source's event handler (DispatchSource: a timer, a socket)") == nil { return real(source, handler) }
    HandOff.inside { real(source, handler) }
}

@_cdecl("pthread_create")
public func simkitInterposedPthreadCreate(_ thread: UnsafeMutablePointer<pthread_t>?, _ attributes: UnsafePointer<pthread_attr_t>?,
                                          _ start: (@convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?)?,
                                          _ argument: UnsafeMutableRawPointer?) -> Int32 {
    let real = unsafeBitCast(HandOff.realPthreadCreate!, to: HandOff.PthreadCreate.self)
    guard let epoch = HandOff.classify("a thread started (pthread_create: Thread, a C library's worker)") else {
        return real(thread, attributes, start, argument)
    }
    let work = HandOff.Work(epoch: epoch, context: argument, start: start)
    let context = work.opaque
    let status = HandOff.inside { real(thread, attributes, HandOff.Work.threadTrampoline, context) }
    if status != 0 { Unmanaged<HandOff.Work>.fromOpaque(context).release(); work.dropped() }
    return status
}
#endif
