// GridSample and AffineGrid's kernels (grid_sample.cpp), registered with the resampling ops'.
#pragma once

#include "../kernel_util.h"

namespace sf::eval::detail {

Result<void> registerGridSampleKernels(OpRegistry &r);

} // namespace sf::eval::detail
