// The widest vector instructions this CPU and its OS run, for choosing kernels: attnlab's own
// ISA copies (ops/isa.h) and OpenBLAS's kernel family (core/blas_core.h).
#pragma once

namespace attn {

// AVX-512 F, BW, DQ and VL: what the AVX-512 copies are compiled for (ATTN_TARGET_AVX512) and
// more than OpenBLAS's SkylakeX kernels need. false off x86-64.
bool cpu_has_avx512();

// The widest of: AVX-512 (cpu_has_avx512), AVX2 with FMA (OpenBLAS's Haswell kernels), AVX.
enum class CpuVectors { none, avx, avx2, avx512 };
CpuVectors cpu_vectors();

}  // namespace attn
