// The persistent walk of the Hopper integer GEMM (igemm_wgmma.cuh): which work units each
// cluster of a persistent grid takes, in order. Plain integer code with no CUDA type, so that
// a host test compiles it as it is (tests/spikes/test_wgmma.py, with __device__ and
// __forceinline__ defined away) and checks it against the launch's rule. Header-only, in each
// including module's own anonymous namespace.
#pragma once

namespace {

// How a persistent grid's clusters walk the work (wgmma_tiles' WALK). TILES: each cluster
// tile whole, strided over the clusters. SPLIT: K split `sp` ways into whole K tiles, a unit
// one tile's one range (a tile's units consecutive), strided. STREAM: the first `sk` tiles'
// K tiles laid end to end and cut into one range a cluster (stream-K; a range is at least
// a tile long, so a tile is cut at most once), walked first; then the other tiles whole,
// strided (sk = 0: TILES).
constexpr int WALK_TILES = 0, WALK_SPLIT = 1, WALK_STREAM = 2;

// A work unit: tile t, its K tiles [kb, ke), and j, its range (SPLIT: of `sp`; STREAM: of a
// cut tile, 0 the piece holding K tile 0 and 1 the other). cut (STREAM): 0 for a whole tile,
// else the cut's slot (the cluster whose range holds the tile's last K tile, >= 1).
struct Unit {
    int t, kb, ke, j, cut;
};

// One cluster's walk: next(w) gives its units in order, false past the last. A SPLIT unit of
// no K tiles (more ways than K tiles, which the launch never asks for) is still given: its
// consumers take their tickets. STREAM: cluster c's range is K tiles [c S / P, (c + 1) S / P)
// of the S = sk nk laid end to end (P clusters; the launch takes this walk only where S P <
// 2^31 and sk >= P, so that a range is at least a tile long): a piece that starts inside a
// tile is that tile's second (the cut's slot is this cluster), one that ends inside a tile
// its first (the slot is the next cluster's). The range's divisions are done once, in the
// constructor; next() steps through it by additions.
template <int WALK>
struct Walk {
    int nk, ntiles, ncl, cid, sp;
    int u;             // the next unit (SPLIT), or the next whole tile
    int t, kb, rest;   // STREAM: the range's next tile, its first K tile there, K tiles left

    __device__ __forceinline__ Walk(int nk_, int ntiles_, int ncl_, int cid_, int sp_, int sk)
        : nk(nk_), ntiles(ntiles_), ncl(ncl_), cid(cid_), sp(sp_),
          u(WALK == WALK_STREAM && sk >= ncl_ && sk <= ntiles_ ? sk + cid_ : cid_), t(0), kb(0),
          rest(0) {
        if constexpr (WALK == WALK_STREAM) {
            // Past what the launch guarantees (at least a tile a range, no more tiles than
            // there are), no stream-K: a tile cut more than once would be summed wrong.
            if (sk >= ncl && sk <= ntiles) {
                const int first = cid * sk * nk / ncl, end = (cid + 1) * sk * nk / ncl;
                t = first / nk;
                kb = first - t * nk;
                rest = end - first;
            }
        }
    }
    __device__ __forceinline__ bool next(Unit& w) {
        if constexpr (WALK == WALK_STREAM) {
            // Selects, not branches: a branch here leaves the K loop's values off the uniform
            // datapath (kernels/NOTES.md).
            const bool piece = rest > 0;
            const int ke = min(nk, kb + rest);
            const bool more = piece || u < ntiles;
            w.t = piece ? t : u;
            w.kb = piece ? kb : 0;
            w.ke = piece ? ke : nk;
            w.j = piece && kb > 0 ? 1 : 0;
            w.cut = !piece ? 0 : kb > 0 ? cid : ke < nk ? cid + 1 : 0;
            rest = piece ? rest - (ke - kb) : 0;
            t = piece ? t + 1 : t;
            kb = 0;
            u = piece ? u : u + ncl;
            return more;
        } else {
            if constexpr (WALK == WALK_SPLIT) {
                if (u >= ntiles * sp) return false;
                const int tu = u / sp, j = u % sp;
                w = {tu, j * nk / sp, (j + 1) * nk / sp, j, 0};
            } else {
                if (u >= ntiles) return false;
                w = {u, 0, nk, 0, 0};
            }
            u += ncl;
            return true;
        }
    }
};

}  // namespace
