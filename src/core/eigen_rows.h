// Row-major Eigen views of attnlab's "rows x columns" double arrays (numpy order).
//
// RowMatrix owns an (r x c) row-major matrix; RowMap / ConstRowMap view a caller's
// contiguous row-major buffer of r*c doubles without copying. This header pulls in Eigen:
// include it only from .cpp files that already use Eigen, never from a widely included
// header.
#pragma once

#include <Eigen/Dense>

namespace attn {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMap = Eigen::Map<RowMatrix>;
using ConstRowMap = Eigen::Map<const RowMatrix>;

}  // namespace attn
