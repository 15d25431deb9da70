// A hint to the CPU to start loading a cache line that will be needed soon.
//
// Swift has no prefetch intrinsic; the engine calls this for the next event's device
// while it handles the current one, so that at a million devices the device's state is
// in cache when its event runs (see World.run). A hint only: it never changes results.
#ifndef SIMKIT_PREFETCH_H
#define SIMKIT_PREFETCH_H

static inline __attribute__((always_inline)) void simkit_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
