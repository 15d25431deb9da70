// Everything is in the header (static inline); SwiftPM needs one source file per C target.
#include "SimKitPrefetch.h"
