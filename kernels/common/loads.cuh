// Global loads of data a kernel reads once, with the cache hint chosen at compile time:
// -DEVICT_FIRST=1 uses the streaming hint (ld.global.cs: evict first, so the lines being
// written keep the L2), the default the read-only path (ld.global.nc). The tuning runs of
// activation_fused and weight_quant_fused (statistics/h200/tuning/) found no gain.
#pragma once

#ifndef EVICT_FIRST
#define EVICT_FIRST 0
#endif

template <class T>
__device__ __forceinline__ T load_once(const T* p) {
#if EVICT_FIRST
    return __ldcs(p);
#else
    return __ldg(p);
#endif
}
