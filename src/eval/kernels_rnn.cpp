// The recurrent ops: RNN, GRU (linear_before_reset either way) and LSTM (peepholes,
// input_forget), forward, reverse or bidirectional, with sequence_lens, clip, the activation
// lists and their alpha/beta, and both layouts (opset 14's layout = 1: batch first).
#include "kernel_util.h"

#include <cctype>
#include <cmath>

namespace sf::eval::detail {
namespace {

using Act = std::function<double(double)>;

Result<Act> activation(const std::string &name, double alpha, double beta) {
  std::string n = name;
  for (char &c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (n == "sigmoid") return Act([](double x) { return 1 / (1 + std::exp(-x)); });
  if (n == "tanh") return Act([](double x) { return std::tanh(x); });
  if (n == "relu") return Act([](double x) { return std::max(0.0, x); });
  if (n == "affine") return Act([=](double x) { return alpha * x + beta; });
  if (n == "leakyrelu") return Act([=](double x) { return x >= 0 ? x : alpha * x; });
  if (n == "thresholdedrelu") return Act([=](double x) { return x > alpha ? x : 0.0; });
  if (n == "scaledtanh") return Act([=](double x) { return alpha * std::tanh(beta * x); });
  if (n == "hardsigmoid") return Act([=](double x) { return std::max(0.0, std::min(1.0, alpha * x + beta)); });
  if (n == "elu") return Act([=](double x) { return x >= 0 ? x : alpha * (std::exp(x) - 1); });
  if (n == "softsign") return Act([](double x) { return x / (1 + std::abs(x)); });
  if (n == "softplus") return Act([](double x) { return std::log1p(std::exp(x)); });
  return errorf("activation '{}' is not supported", name);
}

/// Default alpha of the activations that take one when the list gives none.
double defaultAlpha(const std::string &n) {
  if (n == "LeakyRelu") return 0.01;
  if (n == "ThresholdedRelu" || n == "Elu" || n == "ScaledTanh") return 1.0;
  if (n == "HardSigmoid") return 0.2;
  return 1.0;
}
double defaultBeta(const std::string &n) { return n == "HardSigmoid" ? 0.5 : n == "ScaledTanh" ? 1.0 : 0.0; }

enum class Kind { RNN, GRU, LSTM };

Result<void> recurrent(EvalContext &ctx, Kind kind) {
  const Tensor &xT = ctx.input(0), &wT = ctx.input(1), &rT = ctx.input(2);
  SF_ASSIGN(int64_t hidden, ctx.attrs().getInt("hidden_size"));
  SF_ASSIGN(std::string direction, ctx.attrs().getString("direction", "forward"));
  SF_ASSIGN(int64_t layout, ctx.attrs().getInt("layout", 0));
  SF_ASSIGN(int64_t lbr, ctx.attrs().getInt("linear_before_reset", 0));
  SF_ASSIGN(int64_t inputForget, ctx.attrs().getInt("input_forget", 0));
  std::optional<double> clip;
  if (ctx.attrs().has("clip")) {
    SF_ASSIGN(double c, ctx.attrs().getFloat("clip"));
    clip = c;
  }
  int64_t gates = kind == Kind::RNN ? 1 : kind == Kind::GRU ? 3 : 4;
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const Shape &xs = xT.shape();
  if (xs.size() != 3) return errorf("X must be 3-D");
  int64_t seq = layout ? xs[1] : xs[0], batch = layout ? xs[0] : xs[1], in = xs[2];
  if (wT.shape() != Shape{dirs, gates * hidden, in} || rT.shape() != Shape{dirs, gates * hidden, hidden})
    return errorf("W is {} and R is {}; expected [{}, {}, {}] and [{}, {}, {}]", shapeText(wT.shape()),
                  shapeText(rT.shape()), dirs, gates * hidden, in, dirs, gates * hidden, hidden);
  SF_ASSIGN(auto x, doubles(xT));
  SF_ASSIGN(auto w, doubles(wT));
  SF_ASSIGN(auto rw, doubles(rT));
  std::vector<double> bias(size_t(dirs * 2 * gates * hidden), 0.0), h0(size_t(dirs * batch * hidden), 0.0),
      c0 = h0, peep(size_t(dirs * 3 * hidden), 0.0);
  std::vector<int64_t> lens(size_t(batch), seq);
  if (ctx.hasInput(3)) {
    SF_ASSIGN(bias, doubles(ctx.input(3)));
  }
  if (ctx.hasInput(4)) {
    SF_ASSIGN(lens, ints(ctx.input(4)));
  }
  // initial_h, initial_c: [dirs, batch, hidden], or [batch, dirs, hidden] with layout 1.
  auto readState = [&](size_t i, std::vector<double> &dst) -> Result<void> {
    if (!ctx.hasInput(i)) return success();
    SF_ASSIGN(auto v, doubles(ctx.input(i)));
    if (v.size() != dst.size()) return errorf("input {} has {} elements, expected {}", i, v.size(), dst.size());
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t k = 0; k < hidden; ++k)
          dst[size_t((d * batch + b) * hidden + k)] = v[size_t(layout ? (b * dirs + d) * hidden + k : (d * batch + b) * hidden + k)];
    return success();
  };
  SF_TRY(readState(5, h0));
  if (kind == Kind::LSTM) {
    SF_TRY(readState(6, c0));
    if (ctx.hasInput(7)) {
      SF_ASSIGN(peep, doubles(ctx.input(7)));
    }
  }
  if (bias.size() != size_t(dirs * 2 * gates * hidden)) return errorf("B has {} elements", bias.size());
  // Activations per direction: RNN 1, GRU 2, LSTM 3.
  size_t perDir = kind == Kind::RNN ? 1 : kind == Kind::GRU ? 2 : 3;
  std::vector<std::string> names;
  if (ctx.attrs().has("activations")) {
    SF_ASSIGN(names, ctx.attrs().getStrings("activations"));
  }
  std::vector<double> alphas, betas;
  if (ctx.attrs().has("activation_alpha")) {
    SF_ASSIGN(alphas, ctx.attrs().getFloats("activation_alpha"));
  }
  if (ctx.attrs().has("activation_beta")) {
    SF_ASSIGN(betas, ctx.attrs().getFloats("activation_beta"));
  }
  if (names.empty()) {
    for (int64_t d = 0; d < dirs; ++d) {
      if (kind == Kind::RNN) names.push_back("Tanh");
      else if (kind == Kind::GRU) names.insert(names.end(), {"Sigmoid", "Tanh"});
      else names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
    }
  }
  if (names.size() == perDir && dirs == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != perDir * size_t(dirs)) return errorf("{} activations for {} directions", names.size(), dirs);
  std::vector<Act> acts;
  size_t ai = 0, bi = 0;
  for (const std::string &n : names) {
    bool usesAlpha = n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" ||
                     n == "HardSigmoid" || n == "Elu";
    bool usesBeta = n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid";
    double a = usesAlpha ? (ai < alphas.size() ? alphas[ai++] : defaultAlpha(n)) : 0;
    double b = usesBeta ? (bi < betas.size() ? betas[bi++] : defaultBeta(n)) : 0;
    SF_ASSIGN(Act f, activation(n, a, b));
    acts.push_back(f);
  }
  auto clamp = [&](double v) { return clip ? std::clamp(v, -*clip, *clip) : v; };
  std::vector<double> y(size_t(seq * dirs * batch * hidden), 0.0), hOut(static_cast<size_t>(dirs * batch * hidden)),
      cOut(hOut.size());
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    const double *W = &w[size_t(d * gates * hidden * in)], *R = &rw[size_t(d * gates * hidden * hidden)];
    const double *Wb = &bias[size_t(d * 2 * gates * hidden)], *Rb = Wb + gates * hidden;
    const double *P = &peep[size_t(d * 3 * hidden)];
    const Act *f = &acts[size_t(d) * perDir];
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(&h0[size_t((d * batch + b) * hidden)], &h0[size_t((d * batch + b) * hidden)] + hidden);
      std::vector<double> c(&c0[size_t((d * batch + b) * hidden)], &c0[size_t((d * batch + b) * hidden)] + hidden);
      int64_t len = std::clamp<int64_t>(lens[size_t(b)], 0, seq);
      std::vector<double> gx(static_cast<size_t>(gates * hidden)), gh(static_cast<size_t>(gates * hidden));
      for (int64_t s = 0; s < len; ++s) {
        int64_t t = reverse ? len - 1 - s : s;
        const double *xt = &x[size_t(layout ? (b * seq + t) * in : (t * batch + b) * in)];
        for (int64_t g = 0; g < gates * hidden; ++g) {
          double a = Wb[g], r = Rb[g];
          for (int64_t k = 0; k < in; ++k) a += W[g * in + k] * xt[k];
          for (int64_t k = 0; k < hidden; ++k) r += R[g * hidden + k] * h[size_t(k)];
          gx[size_t(g)] = a, gh[size_t(g)] = r;
        }
        std::vector<double> hn(static_cast<size_t>(hidden));
        if (kind == Kind::RNN) {
          for (int64_t k = 0; k < hidden; ++k) hn[size_t(k)] = f[0](clamp(gx[size_t(k)] + gh[size_t(k)]));
        } else if (kind == Kind::GRU) {
          // Gates z, r, h. Without linear_before_reset the reset gate scales the hidden state
          // before R's h rows; with it, it scales their product.
          std::vector<double> z(static_cast<size_t>(hidden)), rg(static_cast<size_t>(hidden));
          for (int64_t k = 0; k < hidden; ++k) {
            z[size_t(k)] = f[0](clamp(gx[size_t(k)] + gh[size_t(k)]));
            rg[size_t(k)] = f[0](clamp(gx[size_t(hidden + k)] + gh[size_t(hidden + k)]));
          }
          for (int64_t k = 0; k < hidden; ++k) {
            double pre;
            if (lbr) {
              pre = gx[size_t(2 * hidden + k)] + rg[size_t(k)] * gh[size_t(2 * hidden + k)];
            } else {
              double acc = Rb[2 * hidden + k];
              for (int64_t j = 0; j < hidden; ++j)
                acc += R[(2 * hidden + k) * hidden + j] * rg[size_t(j)] * h[size_t(j)];
              pre = gx[size_t(2 * hidden + k)] + acc;
            }
            double cand = f[1](clamp(pre));
            hn[size_t(k)] = (1 - z[size_t(k)]) * cand + z[size_t(k)] * h[size_t(k)];
          }
        } else {
          std::vector<double> cn(static_cast<size_t>(hidden));
          for (int64_t k = 0; k < hidden; ++k) {
            double i = f[0](clamp(gx[size_t(k)] + gh[size_t(k)] + P[k] * c[size_t(k)]));
            double fg = f[0](clamp(gx[size_t(2 * hidden + k)] + gh[size_t(2 * hidden + k)] + P[2 * hidden + k] * c[size_t(k)]));
            if (inputForget) fg = 1 - i;
            double g = f[1](clamp(gx[size_t(3 * hidden + k)] + gh[size_t(3 * hidden + k)]));
            cn[size_t(k)] = fg * c[size_t(k)] + i * g;
            double o = f[0](clamp(gx[size_t(hidden + k)] + gh[size_t(hidden + k)] + P[hidden + k] * cn[size_t(k)]));
            hn[size_t(k)] = o * f[2](cn[size_t(k)]);
          }
          c = cn;
        }
        h = hn;
        for (int64_t k = 0; k < hidden; ++k)
          y[size_t(layout ? ((b * seq + t) * dirs + d) * hidden + k : ((t * dirs + d) * batch + b) * hidden + k)] = h[size_t(k)];
      }
      for (int64_t k = 0; k < hidden; ++k) {
        hOut[size_t(layout ? (b * dirs + d) * hidden + k : (d * batch + b) * hidden + k)] = h[size_t(k)];
        cOut[size_t(layout ? (b * dirs + d) * hidden + k : (d * batch + b) * hidden + k)] = c[size_t(k)];
      }
    }
  }
  Shape yShape = layout ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  Shape hShape = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  if (ctx.numOutputs() > 0) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(xT.type(), yShape, y));
    SF_TRY(ctx.setOutput(0, std::move(t)));
  }
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(xT.type(), hShape, hOut));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  if (kind == Kind::LSTM && ctx.numOutputs() > 2) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(xT.type(), hShape, cOut));
    SF_TRY(ctx.setOutput(2, std::move(t)));
  }
  return success();
}

} // namespace

Result<void> registerRecurrent(OpRegistry &r) {
  SF_TRY(setKernel(r, "RNN", [](EvalContext &c) { return recurrent(c, Kind::RNN); }));
  SF_TRY(setKernel(r, "GRU", [](EvalContext &c) { return recurrent(c, Kind::GRU); }));
  SF_TRY(setKernel(r, "LSTM", [](EvalContext &c) { return recurrent(c, Kind::LSTM); }));
  return success();
}

} // namespace sf::eval::detail
