// Kernels of the sampling-grid ops (rules in src/ops/resize.cpp): GridSample over images
// (opset 16: bilinear, nearest, bicubic) and volumes (opset 22), with zeros, border or reflection
// padding and align_corners; AffineGrid, the grid an affine transform makes.
#include "../kernel_util.h"
#include "grid_sample.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

namespace sf::eval::detail {
namespace {

/// x reflected into [lo, hi] (GridSample's reflection padding).
double reflect(double x, double lo, double hi) {
  double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = int64_t(dx / rng);
    double r = dx - double(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = int64_t(dx / rng);
    double r = dx - double(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

/// GridSample over volumes (opset 22: X [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] of (x, y, z);
/// linear (trilinear) or nearest; zeros, border or reflection padding).
Result<void> gridSample3d(EvalContext &ctx, const std::string &mode, const std::string &padding, bool alignCorners) {
  const Tensor &x = ctx.input(0), &grid = ctx.input(1);
  const Shape &xs = x.shape(), &gsh = grid.shape();
  if (gsh.size() != 5 || gsh[4] != 3 || gsh[0] != xs[0])
    return errorf("X {} needs a grid [{}, Do, Ho, Wo, 3], not {}", shapeText(xs), xs[0], shapeText(gsh));
  if (mode != "bilinear" && mode != "nearest") return errorf("mode '{}' samples 2-D images only", mode);
  const int64_t n = xs[0], c = xs[1], len[3] = {xs[4], xs[3], xs[2]}; // x, y, z lengths
  const int64_t pts = gsh[1] * gsh[2] * gsh[3];
  Shape out{n, c, gsh[1], gsh[2], gsh[3]};
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto gv, doubles(grid));
  std::vector<double> y(static_cast<size_t>(countOf(out)));
  const double lo = alignCorners ? 0.0 : -0.5;
  auto hi = [&](int a) { return alignCorners ? double(len[a] - 1) : double(len[a]) - 0.5; };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < pts; ++p) {
      double at[3];
      for (int a = 0; a < 3; ++a) {
        const double g = gv[size_t((b * pts + p) * 3 + a)];
        double v = alignCorners ? (g + 1) / 2 * double(len[a] - 1) : ((g + 1) * double(len[a]) - 1) / 2;
        if (padding == "border") v = std::clamp(v, 0.0, double(len[a] - 1));
        else if (padding == "reflection") v = reflect(v, lo, hi(a));
        at[a] = v;
      }
      for (int64_t ch = 0; ch < c; ++ch) {
        const double *vol = &xv[size_t((b * c + ch) * len[0] * len[1] * len[2])];
        auto voxel = [&](int64_t i[3]) -> double {
          for (int a = 0; a < 3; ++a) {
            if (padding == "zeros") {
              if (i[a] < 0 || i[a] >= len[a]) return 0.0;
            } else {
              if (padding == "reflection") i[a] = int64_t(reflect(double(i[a]), lo, hi(a)));
              i[a] = std::clamp<int64_t>(i[a], 0, len[a] - 1);
            }
          }
          return vol[(i[2] * len[1] + i[1]) * len[0] + i[0]];
        };
        double v = 0;
        if (mode == "nearest") {
          int64_t i[3] = {int64_t(std::nearbyint(at[0])), int64_t(std::nearbyint(at[1])), int64_t(std::nearbyint(at[2]))};
          v = voxel(i);
        } else {
          const double f[3] = {std::floor(at[0]), std::floor(at[1]), std::floor(at[2])};
          for (int corner = 0; corner < 8; ++corner) {
            double weight = 1;
            int64_t i[3];
            for (int a = 0; a < 3; ++a) {
              const bool up = (corner >> a) & 1;
              i[a] = int64_t(f[a]) + up;
              weight *= up ? at[a] - f[a] : f[a] + 1 - at[a];
            }
            if (weight != 0) v += weight * voxel(i);
          }
        }
        y[size_t((b * c + ch) * pts + p)] = v;
      }
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// Bicubic weights of the four taps around a point at fraction t past the second one.
std::array<double, 4> cubicCoeffs(double t) {
  const double A = -0.75;
  double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  return std::array<double, 4>{((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A,
                               ((A + 2) * t - (A + 3)) * t * t + 1,
                               ((A + 2) * t2 - (A + 3)) * t2 * t2 + 1,
                               ((A * t3 - 5 * A) * t3 + 8 * A) * t3 - 4 * A};
}

/// One channel of one image, read with GridSample's padding (zeros, border, reflection within
/// [bx0, bx1] x [by0, by1]).
struct PaddedImage {
  const double *img;
  int64_t h, w;
  const std::string &padding;
  double bx0, bx1, by0, by1;

  double pixel(int64_t r, int64_t col) const {
    if (padding == "zeros") return r < 0 || r >= h || col < 0 || col >= w ? 0.0 : img[r * w + col];
    if (padding == "border") {
      r = std::clamp<int64_t>(r, 0, h - 1), col = std::clamp<int64_t>(col, 0, w - 1);
      return img[r * w + col];
    }
    col = int64_t(reflect(double(col), bx0, bx1)), r = int64_t(reflect(double(r), by0, by1));
    r = std::clamp<int64_t>(r, 0, h - 1), col = std::clamp<int64_t>(col, 0, w - 1);
    return img[r * w + col];
  }
};

/// The image sampled at (px, py) in pixels by `mode`; nullopt for a mode it does not know.
std::optional<double> samplePixel(const PaddedImage &im, const std::string &mode, double px, double py) {
  if (mode == "nearest") return im.pixel(int64_t(std::nearbyint(py)), int64_t(std::nearbyint(px)));
  if (mode == "bilinear") {
    double x1 = std::floor(px), y1 = std::floor(py);
    double dx1 = px - x1, dx2 = x1 + 1 - px, dy1 = py - y1, dy2 = y1 + 1 - py;
    int64_t c1 = int64_t(x1), r1 = int64_t(y1);
    return dy2 * (dx2 * im.pixel(r1, c1) + dx1 * im.pixel(r1, c1 + 1)) +
           dy1 * (dx2 * im.pixel(r1 + 1, c1) + dx1 * im.pixel(r1 + 1, c1 + 1));
  }
  if (mode == "bicubic") {
    double x0 = std::floor(px) - 1, y0 = std::floor(py) - 1;
    auto cx = cubicCoeffs(px - x0 - 1), cy = cubicCoeffs(py - y0 - 1);
    double v = 0;
    for (int a = 0; a < 4; ++a) {
      double row = 0;
      for (int bb = 0; bb < 4; ++bb) row += cx[size_t(bb)] * im.pixel(int64_t(y0) + a, int64_t(x0) + bb);
      v += cy[size_t(a)] * row;
    }
    return v;
  }
  return std::nullopt;
}

/// GridSample over 2-D images (opset 16: bilinear, nearest, bicubic; zeros, border, reflection
/// padding; align_corners), sampling X at the grid's normalised coordinates; volumes above.
Result<void> gridSample(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &grid = ctx.input(1);
  if (x.shape().size() == 5) {
    SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "bilinear"));
    SF_ASSIGN(std::string padding, ctx.attrs().getString("padding_mode", "zeros"));
    SF_ASSIGN(int64_t alignCorners, ctx.attrs().getInt("align_corners", 0));
    return gridSample3d(ctx, mode == "linear" ? "bilinear" : mode, padding, alignCorners != 0);
  }
  if (x.shape().size() != 4 || grid.shape().size() != 4 || grid.shape()[3] != 2)
    return errorf("X {} and grid {}: [N,C,H,W] and [N,Ho,Wo,2], or [N,C,D,H,W] and [N,Do,Ho,Wo,3]", shapeText(x.shape()),
                  shapeText(grid.shape()));
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "bilinear"));
  SF_ASSIGN(std::string padding, ctx.attrs().getString("padding_mode", "zeros"));
  SF_ASSIGN(int64_t alignCorners, ctx.attrs().getInt("align_corners", 0));
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  int64_t ho = grid.shape()[1], wo = grid.shape()[2];
  if (grid.shape()[0] != n) return errorf("grid batch {} for X batch {}", grid.shape()[0], n);
  Shape out{n, c, ho, wo};
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto xs, doubles(x));
  SF_ASSIGN(auto gs, doubles(grid));
  // An empty X (an image side of 0) has no pixel: zeros padding reads 0 everywhere, the other
  // paddings have no border to read (fuzz_eval found the read of a first pixel that is not there).
  if (xs.empty()) {
    if (padding != "zeros") return errorf("X {} is empty: padding '{}' has no pixel to read", shapeText(x.shape()), padding);
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, std::vector<double>(static_cast<size_t>(countOf(out)), 0.0)));
    return ctx.setOutput(0, std::move(t));
  }
  double bx0 = alignCorners ? 0 : -0.5, by0 = bx0;
  double bx1 = alignCorners ? double(w - 1) : double(w) - 0.5, by1 = alignCorners ? double(h - 1) : double(h) - 0.5;
  auto denorm = [&](double v, int64_t len) {
    return alignCorners ? (v + 1) / 2 * double(len - 1) : ((v + 1) * double(len) - 1) / 2;
  };
  std::vector<double> y(static_cast<size_t>(countOf(out)));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const PaddedImage im{&xs[size_t((b * c + ch) * h * w)], h, w, padding, bx0, bx1, by0, by1};
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double gx = gs[size_t(((b * ho + i) * wo + j) * 2)], gy = gs[size_t(((b * ho + i) * wo + j) * 2 + 1)];
          double px = denorm(gx, w), py = denorm(gy, h);
          if (padding == "border") px = std::clamp(px, 0.0, double(w - 1)), py = std::clamp(py, 0.0, double(h - 1));
          else if (padding == "reflection") px = reflect(px, bx0, bx1), py = reflect(py, by0, by1);
          auto v = samplePixel(im, mode, px, py);
          if (!v) return errorf("mode '{}'", mode);
          y[size_t(((b * c + ch) * ho + i) * wo + j)] = *v;
        }
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// AffineGrid: for theta (N, 2, 3) and size (N, C, H, W), or (N, 3, 4) and (N, C, D, H, W), the
/// sampling grid (N, H, W, 2) or (N, D, H, W, 3): theta times each output position's normalised
/// coordinates (x first), in [-1, 1] at the corners' centres (align_corners) or the corners.
Result<void> affineGrid(EvalContext &ctx) {
  const Tensor &theta = ctx.input(0);
  SF_ASSIGN(auto size, ints(ctx.input(1)));
  SF_ASSIGN(int64_t align, ctx.attrs().getInt("align_corners", 0));
  const int64_t dims = int64_t(size.size()) - 2; // 2 or 3 spatial axes
  if ((dims != 2 && dims != 3) || theta.shape() != Shape{size[0], dims, dims + 1})
    return errorf("theta {} for size [{}]", shapeText(theta.shape()), fmt::join(size, ","));
  for (int64_t s : size)
    if (s < 0) return errorf("size [{}] has a negative length", fmt::join(size, ","));
  const int64_t N = size[0];
  std::vector<int64_t> lengths(size.begin() + 2, size.end()); // (D,) H, W
  Shape out{N};
  out.insert(out.end(), lengths.begin(), lengths.end());
  out.push_back(dims);
  SF_TRY(ctx.admit(theta.type(), out));
  SF_ASSIGN(auto tv, doubles(theta));
  auto coord = [&](int64_t i, int64_t len) {
    if (len <= 1) return 0.0;
    return align ? -1.0 + 2.0 * double(i) / double(len - 1) : (2.0 * double(i) + 1.0) / double(len) - 1.0;
  };
  int64_t points = 1;
  for (int64_t l : lengths) points *= l;
  std::vector<double> y(size_t(N * points * dims));
  std::vector<int64_t> idx(size_t(dims), 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < points; ++p) {
      for (int64_t r = p, d = dims - 1; d >= 0; --d) idx[size_t(d)] = r % lengths[size_t(d)], r /= lengths[size_t(d)];
      // (x, y[, z]): x along the last axis.
      std::vector<double> base;
      for (int64_t d = dims - 1; d >= 0; --d) base.push_back(coord(idx[size_t(d)], lengths[size_t(d)]));
      base.push_back(1.0);
      for (int64_t row = 0; row < dims; ++row) {
        double s = 0;
        for (int64_t c = 0; c <= dims; ++c) s += tv[size_t((n * dims + row) * (dims + 1) + c)] * base[size_t(c)];
        y[size_t((n * points + p) * dims + row)] = s;
      }
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(theta.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerGridSampleKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "AffineGrid", affineGrid));
  SF_TRY(setKernel(r, "GridSample", gridSample));
  return success();
}

} // namespace sf::eval::detail
