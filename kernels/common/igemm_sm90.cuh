// Small device helpers for the Hopper (sm_90a) integer GEMM, on top of CUTLASS/CuTe's PTX
// wrappers (headers from the nvidia-cutlass wheel: cutlass_library/source/include).
// Everything here is header-only device code; the kernels that use it are in int_gemm.cu.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cstdint>
#include <utility>

#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm90_desc.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/arch/mma_sm90_desc.hpp>
#include <cute/arch/mma_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

namespace igemm {

using Barrier = cutlass::arch::ClusterBarrier;
using TxBarrier = cutlass::arch::ClusterTransactionBarrier;

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// wgmma shared-memory matrix descriptor of a K-major operand tile whose rows are 128 bytes
// (128 int8 of K), written by TMA with CU_TENSOR_MAP_SWIZZLE_128B: 8-row swizzle atoms of
// 1024 bytes (stride byte offset), leading byte offset unused for swizzled K-major layouts.
// Moving along K by 32 bytes (one k32 wgmma step) or to another 1024-aligned tile adds
// (bytes >> 4) to the low 14-bit start-address field, as CUTLASS's descriptor iterator does.
__device__ __forceinline__ uint64_t desc_kmajor_sw128(uint32_t smem_addr) {
    cute::GmmaDescriptor d;
    d.bitfield.start_address_ = static_cast<uint16_t>((smem_addr & 0x3FFFF) >> 4);
    d.bitfield.leading_byte_offset_ = 1;     // ignored for swizzled K-major
    d.bitfield.stride_byte_offset_ = 1024 >> 4;
    d.bitfield.base_offset_ = 0;
    d.bitfield.layout_type_ = 1;             // SWIZZLE_128B (sm90 encoding)
    return d.desc_;
}

// D[64x128] (s32, 64 registers a thread) = A[64x32] * B[128x32]^T (+ D if scale_d), both
// int8 K-major in shared memory.
template <int... I>
__device__ __forceinline__ void wgmma_m64n128k32_impl(uint64_t da, uint64_t db,
                                                      uint32_t (&d)[64], int scale_d,
                                                      std::integer_sequence<int, I...>) {
    cute::SM90::GMMA::MMA_64x128x32_S32S8S8_SS_TN::fma(
        da, db, d[I]..., static_cast<cute::SM90::GMMA::ScaleOut>(scale_d));
}
__device__ __forceinline__ void wgmma_m64n128k32(uint64_t da, uint64_t db, uint32_t (&d)[64],
                                                 int scale_d) {
    wgmma_m64n128k32_impl(da, db, d, scale_d, std::make_integer_sequence<int, 64>{});
}

// D[64x64] (s32) = A[64x32] * B[64x32]^T (+ D if scale_d) into registers OFF..OFF+31 of a
// 64 x 128 accumulator: with OFF 0 its columns 0-63, with OFF 32 its columns 64-127 (an
// m64n128 accumulator holds its 8-column blocks in order, four registers each), so two of
// these make one m64n128k32 as two independent accumulator chains.
template <int OFF, int... I>
__device__ __forceinline__ void wgmma_m64n64k32_impl(uint64_t da, uint64_t db,
                                                     uint32_t (&d)[64], int scale_d,
                                                     std::integer_sequence<int, I...>) {
    cute::SM90::GMMA::MMA_64x64x32_S32S8S8_SS_TN::fma(
        da, db, d[OFF + I]..., static_cast<cute::SM90::GMMA::ScaleOut>(scale_d));
}
template <int OFF>
__device__ __forceinline__ void wgmma_m64n64k32(uint64_t da, uint64_t db, uint32_t (&d)[64],
                                                int scale_d) {
    static_assert(OFF == 0 || OFF == 32, "an m64n64 half of an m64n128 accumulator");
    wgmma_m64n64k32_impl<OFF>(da, db, d, scale_d, std::make_integer_sequence<int, 32>{});
}

// The same wgmma, executed only where `pred` is non-zero (a warpgroup-uniform value): lets a
// software-pipelined loop issue from one place in every iteration (the register values then
// flow through one asm statement, so no phi copies of in-flight accumulators appear).
__device__ __forceinline__ void wgmma_m64n128k32_pred(uint64_t da, uint64_t db,
                                                      uint32_t (&d)[64], int scale_d,
                                                      int pred) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n"
        ".reg .pred p, q;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "setp.ne.b32 q, %67, 0;\n"
        "@q wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p;\n"
        "}\n"
        :
          "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
          "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
          "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
          "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
          "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
          "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
          "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
          "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
        : "l"(da), "l"(db), "r"(scale_d), "r"(pred));
#endif
}

template <int N>
__device__ __forceinline__ void fence_regs(uint32_t (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) cute::warpgroup_fence_operand(r[i]);
}
// Registers B..E-1 only: the rest may still be written by wgmmas in flight.
template <int B, int E, int N>
__device__ __forceinline__ void fence_regs(uint32_t (&r)[N]) {
#pragma unroll
    for (int i = B; i < E; ++i) cute::warpgroup_fence_operand(r[i]);
}
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) cute::warpgroup_fence_operand(r[i]);
}

// Exact int32 -> float for |x| < 2^22 without the quarter-rate I2F: x + 0x4B400000 read as a
// float is 1.5 * 2^23 + x exactly (the same binade for every such x), and subtracting
// 1.5 * 2^23 is exact. One integer add and one float add, both full-rate pipes.
// An int8 x int8 sum over a 128-group is at most 128 * 2^14 = 2^21 in magnitude.
__device__ __forceinline__ float small_int_to_float(uint32_t x) {
    return __int_as_float(static_cast<int>(x + 0x4B400000u)) - 12582912.0f;
}

// 4-byte global -> shared copy through cp.async (L1-cached), completing on an mbarrier.
__device__ __forceinline__ void cp_async_4(uint32_t smem_dst, const void* gmem_src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_dst), "l"(gmem_src)
                 : "memory");
}
// Arrive on the mbarrier once this thread's earlier cp.asyncs have landed; counts as one of
// the barrier's expected arrivals (.noinc).
__device__ __forceinline__ void cp_async_arrive_noinc(uint64_t* bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar))
                 : "memory");
}

// Barrier and shared-memory operations by a 32-bit shared address the caller computed once,
// outside its loop (CUTLASS's ClusterBarrier takes a pointer and converts it at every call,
// which a K loop then repeats a stage at a time). The same PTX as CUTLASS's.
__device__ __forceinline__ void mbar_wait(uint32_t addr, uint32_t phase) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, %2;\n"
        "@p bra DONE;\n"
        "bra WAIT;\n"
        "DONE:\n"
        "}\n" ::"r"(addr), "r"(phase), "r"(0x989680)
        : "memory");
}
// One arrival on this CTA's barrier at addr.
__device__ __forceinline__ void mbar_arrive(uint32_t addr) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(addr) : "memory");
}
// One arrival on a barrier of another CTA of the cluster, by its shared::cluster address
// (from cluster_addr). Without a .release.cluster qualifier, as CUTLASS writes it: ptxas
// turns that one into a MEMBAR before the arrive.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t cluster_addr) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr)
                 : "memory");
}
// The shared::cluster address of the word at this CTA's shared address addr in CTA `rank`
// of the cluster. A CTA's window is contiguous, so offsets added afterwards stay in it.
__device__ __forceinline__ uint32_t cluster_addr(uint32_t addr, uint32_t rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
// 16 bytes of shared memory at addr (volatile, so the compiler keeps it after the barrier
// wait that makes the data valid; ptxas folds a constant added to addr into the load).
__device__ __forceinline__ float4 ld_shared_f4(uint32_t addr) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr));
    return v;
}
// 8 bytes (two floats) into shared memory at addr.
__device__ __forceinline__ void st_shared_f2(uint32_t addr, float x, float y) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
// Wait until this thread's bulk (TMA) stores have completed, their writes done, not only
// their shared-memory reads (cute::tma_store_wait waits for those).
__device__ __forceinline__ void bulk_wait_all() {
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// Hides x's value from the compiler, so that it keeps x in a register rather than
// recomputing it from its parts inside a loop.
__device__ __forceinline__ void opaque(uint32_t& x) { asm volatile("" : "+r"(x)); }

// Stops the kernel if the dynamic shared buffer `smem` is not 1024-aligned, which the TMA's
// 128-byte swizzle needs. A kernel whose only shared variable is `extern __shared__
// __align__(1024)` needs no slack to align it by hand, but the front end would take the
// declared alignment as given and drop the test, so the address is hidden from it; the
// test costs a few uniform instructions at kernel start.
__device__ __forceinline__ void trap_unless_1024_aligned(const void* smem) {
    uint32_t placed = smem_u32(smem);
    opaque(placed);
    if (placed & 1023) asm volatile("trap;");
}

}  // namespace igemm
