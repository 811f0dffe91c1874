// Host check of kernels/common/igemm_walk.cuh (compiled as it is, __device__ and
// __forceinline__ defined away): for each line "tiles clusters k_tiles sk" on stdin, every
// cluster's stream-K walk (and a copy of it, as the producer and the consumers each walk
// their own) must give units that cover each (tile, K tile) once; a tile is whole (cut 0,
// j 0, all its K tiles) or cut once, its two pieces from neighbouring clusters with j 0
// (from K tile 0) and 1 (to the last) meeting in one slot in [1, clusters), no slot shared;
// a cluster's pieces come before its whole tiles, tiles increasing. Prints one line a
// failure (at most 20) and then "checked N cut M".
#include <algorithm>
#include <cstdio>
#include <vector>
using std::min;
#include "igemm_walk.cuh"

static long fails = 0;
#define FAIL(...)                                                                      \
    do {                                                                               \
        if (fails++ < 20) {                                                            \
            std::printf(__VA_ARGS__);                                                  \
            std::printf(" (tiles %d clusters %d k_tiles %d sk %d)\n", T, P, nk, sk);     \
        }                                                                              \
    } while (0)

struct Piece {
    int cluster, j, cut, kb, ke;
};

static long check(int T, int P, int nk, int sk) {
    std::vector<int> cover(static_cast<size_t>(T) * nk, 0);
    std::vector<std::vector<Piece>> pieces(T);
    for (int c = 0; c < P; ++c) {
        Walk<WALK_STREAM> walk(nk, T, P, c, 1, sk), copy = walk;
        Unit w, x;
        int last_t = -1, steps = 0;
        bool whole_seen = false;
        for (;;) {
            const bool more = walk.next(w), more2 = copy.next(x);
            if (more != more2 || (more && (w.t != x.t || w.kb != x.kb || w.ke != x.ke ||
                                           w.j != x.j || w.cut != x.cut)))
                FAIL("cluster %d: a copy of the walk walks differently", c);
            if (!more) break;
            if (++steps > 2 * T + 4) {
                FAIL("cluster %d: the walk does not end", c);
                break;
            }
            if (w.t < 0 || w.t >= T || w.kb < 0 || w.ke > nk || w.kb >= w.ke) {
                FAIL("cluster %d: unit t %d [%d, %d) out of range", c, w.t, w.kb, w.ke);
                continue;
            }
            if (w.t <= last_t) FAIL("cluster %d: tile %d after %d", c, w.t, last_t);
            last_t = w.t;
            const bool whole = w.kb == 0 && w.ke == nk;
            if (w.cut == 0) {
                if (!whole || w.j != 0) FAIL("cluster %d: tile %d partial without a cut", c, w.t);
                whole_seen = whole_seen || w.t >= sk;
            } else {
                if (whole_seen) FAIL("cluster %d: a piece after a whole tile", c);
                if (w.cut < 1 || w.cut >= P) FAIL("cluster %d: slot %d", c, w.cut);
                pieces[w.t].push_back({c, w.j, w.cut, w.kb, w.ke});
            }
            for (int k = w.kb; k < w.ke; ++k) ++cover[static_cast<size_t>(w.t) * nk + k];
        }
    }
    for (size_t i = 0; i < cover.size(); ++i)
        if (cover[i] != 1) {
            FAIL("tile %d K tile %d taken %d times", static_cast<int>(i / nk),
                 static_cast<int>(i % nk), cover[i]);
            break;
        }
    long cut = 0;
    std::vector<int> slot_of(P + 1, -1);
    for (int t = 0; t < T; ++t) {
        const auto& p = pieces[t];
        if (p.empty()) continue;
        ++cut;
        if (p.size() != 2) {
            FAIL("tile %d in %d pieces", t, static_cast<int>(p.size()));
            continue;
        }
        const Piece& a = p[0].j == 0 ? p[0] : p[1];
        const Piece& b = p[0].j == 0 ? p[1] : p[0];
        if (a.j != 0 || b.j != 1 || a.kb != 0 || b.ke != nk || a.ke != b.kb)
            FAIL("tile %d: pieces [%d, %d) j %d and [%d, %d) j %d", t, a.kb, a.ke, a.j, b.kb,
                 b.ke, b.j);
        if (b.cluster != a.cluster + 1 || a.cut != b.cut || a.cut != b.cluster)
            FAIL("tile %d: clusters %d, %d, slots %d, %d", t, a.cluster, b.cluster, a.cut, b.cut);
        if (a.cut >= 1 && a.cut <= P) {
            if (slot_of[a.cut] >= 0) FAIL("slot %d for tiles %d and %d", a.cut, slot_of[a.cut], t);
            slot_of[a.cut] = t;
        }
    }
    return cut;
}

int main() {
    int T, P, nk, sk;
    long n = 0, cut = 0;
    while (std::scanf("%d %d %d %d", &T, &P, &nk, &sk) == 4) {
        cut += check(T, P, nk, sk);
        ++n;
    }
    std::printf("checked %ld cut %ld\n", n, cut);
    return fails ? 1 : 0;
}
