#include "gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "tessera/core/errors.hpp"

namespace tessera::kernels {
namespace {

// Tiles of the integer loop: a 64 x 256 tile of A and 256 x 256 of C's row stay in
// L2 (256 KiB at 8 bytes per element) while B's rows stream through.
constexpr Index kRowTile = 64;
constexpr Index kDepthTile = 256;
constexpr Index kColumnTile = 256;

void UseOneBlasThread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

blasint BlasIndex(Index value) {
  if (value > INT_MAX) {
    throw InvalidArgument("matmul: a block dimension of " + std::to_string(value) +
                          " elements exceeds what BLAS takes (2^31 - 1); use smaller chunks");
  }
  return static_cast<blasint>(value);
}

template <class T>
void FloatGemm(const GemmShape& s, const std::byte* a, const std::byte* b, std::byte* c) {
  if (s.m == 0 || s.n == 0 || s.k == 0) return;
  UseOneBlasThread();
  const blasint m = BlasIndex(s.m);
  const blasint n = BlasIndex(s.n);
  const blasint k = BlasIndex(s.k);
  const CBLAS_TRANSPOSE ta = s.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = s.trans_b ? CblasTrans : CblasNoTrans;
  const blasint lda = s.trans_a ? m : k;
  const blasint ldb = s.trans_b ? k : n;
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    const T one{1};  // alpha and beta: C += A B
    cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &one, c, n);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    const T one{1};
    cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &one, c, n);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, reinterpret_cast<const double*>(a), lda,
                reinterpret_cast<const double*>(b), ldb, 1.0, reinterpret_cast<double*>(c), n);
  } else {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, reinterpret_cast<const float*>(a), lda,
                reinterpret_cast<const float*>(b), ldb, 1.0f, reinterpret_cast<float*>(c), n);
  }
}

// Integer arithmetic modulo 2^bits: products and sums in an unsigned type at least as
// wide as int (narrower ones would promote to signed int and could overflow), cut back
// to T on the store (modular since C++20).
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T, bool kTransB>
void IntegerGemmTile(const GemmShape& s, const T* a, const T* b, T* c, Index i0, Index i1, Index p0,
                     Index p1, Index j0, Index j1) {
  for (Index i = i0; i < i1; ++i) {
    T* c_row = c + i * s.n;
    for (Index p = p0; p < p1; ++p) {
      const T a_ip = s.trans_a ? a[p * s.m + i] : a[i * s.k + p];
      if constexpr (std::is_same_v<T, bool>) {
        if (!a_ip) continue;
        for (Index j = j0; j < j1; ++j)
          c_row[j] = c_row[j] || (kTransB ? b[j * s.k + p] : b[p * s.n + j]);
      } else {
        const auto factor = static_cast<Wide<T>>(a_ip);
        for (Index j = j0; j < j1; ++j) {
          const auto b_pj = static_cast<Wide<T>>(kTransB ? b[j * s.k + p] : b[p * s.n + j]);
          c_row[j] = static_cast<T>(static_cast<Wide<T>>(c_row[j]) + factor * b_pj);
        }
      }
    }
  }
}

template <class T>
void IntegerGemm(const GemmShape& s, const std::byte* a_bytes, const std::byte* b_bytes,
                 std::byte* c_bytes) {
  const auto* a = reinterpret_cast<const T*>(a_bytes);
  const auto* b = reinterpret_cast<const T*>(b_bytes);
  auto* c = reinterpret_cast<T*>(c_bytes);
  for (Index i0 = 0; i0 < s.m; i0 += kRowTile) {
    const Index i1 = std::min(i0 + kRowTile, s.m);
    for (Index p0 = 0; p0 < s.k; p0 += kDepthTile) {
      const Index p1 = std::min(p0 + kDepthTile, s.k);
      for (Index j0 = 0; j0 < s.n; j0 += kColumnTile) {
        const Index j1 = std::min(j0 + kColumnTile, s.n);
        if (s.trans_b) {
          IntegerGemmTile<T, true>(s, a, b, c, i0, i1, p0, p1, j0, j1);
        } else {
          IntegerGemmTile<T, false>(s, a, b, c, i0, i1, p0, p1, j0, j1);
        }
      }
    }
  }
}

}  // namespace

GemmKernel GetGemmKernel(DType dtype) {
  return VisitDType(dtype, [](auto tag) -> GemmKernel {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || kIsComplex<T>) {
      return &FloatGemm<T>;
    } else {
      return &IntegerGemm<T>;
    }
  });
}

}  // namespace tessera::kernels
