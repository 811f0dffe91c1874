// Rounding of a float to an integer value, as SPEC.md fixes it.
// Default: half to even (rintf, cvt.rni), as torch.round and np.rint.
// -DROUNDING_AWAY: half away from zero (roundf), the `away` variant.
#pragma once

__device__ __forceinline__ float spec_round(float v) {
#ifdef ROUNDING_AWAY
    return roundf(v);
#else
    return rintf(v);
#endif
}
