// Type promotion: the dtype two operands are brought to before an elementwise op.
//
//   ResultType(int8, uint8)     == int16      // numpy's rules for arrays
//   ResultType(int64, uint64)   == float64
//   ResultType(int32, float32)  == float64
//   ResultTypeWithScalar(float32, ScalarKind::kFloat) == float32   // weak scalars
//   ResultTypeWithScalar(int16, ScalarKind::kFloat)   == float64
//   ResultType(complex64, float64) == complex128  // complex of the wider precision
//   ResultTypeWithScalar(float32, ScalarKind::kComplex) == complex64
//
// Array with array follows numpy's np.result_type (a superset of the array API
// standard's table, which leaves mixed kinds undefined). A C++ scalar combined with an
// array is "weak" as in the array API and NEP 50: it takes the array's dtype when its
// kind (bool < integer < float < complex) is not higher. Otherwise it takes the default
// dtype of its own kind (int64, float64, complex128), except that a complex scalar with
// a float array takes the complex dtype of the array's precision (float32 ->
// complex64), as the standard says.
#pragma once

#include "tessera/core/dtype.hpp"

namespace tessera {

enum class ScalarKind { kBool, kInt, kFloat, kComplex };

DType ResultType(DType a, DType b);
DType ResultTypeWithScalar(DType array, ScalarKind scalar);

// The smallest floating dtype able to hold every value of `dtype` as numpy's
// transcendental functions choose it, except that numpy's float16 is float32 here:
// bool/int8/uint8/int16/uint16 -> float32, other integers -> float64, floats and
// complex dtypes unchanged.
DType FloatingResultType(DType dtype);

}  // namespace tessera
