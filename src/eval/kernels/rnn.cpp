// Kernels of the recurrent ops (src/ops/rnn.cpp): RNN, GRU and LSTM.
// GRU with linear_before_reset either way, LSTM with peepholes and input_forget; forward, reverse
// or bidirectional, with sequence_lens, clip, the activation lists and their alpha/beta, and both
// layouts (opset 14's layout = 1: batch first).
#include "../blas.h"
#include "../dnnl.h"
#include "../kernel_util.h"
#include "vec_math.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

namespace sf::eval::detail {
namespace {

/// One of the recurrent ops' activations, with its alpha and beta: on a double, or in place on
/// an array of floats (Sigmoid and Tanh there by the vectorised forms of vec_math.h).
struct Act {
  enum class Fn : uint8_t { Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu,
                            Softsign, Softplus } fn = Fn::Tanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (fn) {
    case Fn::Sigmoid: return 1 / (1 + std::exp(-x));
    case Fn::Tanh: return std::tanh(x);
    case Fn::Relu: return std::max(0.0, x);
    case Fn::Affine: return alpha * x + beta;
    case Fn::LeakyRelu: return x >= 0 ? x : alpha * x;
    case Fn::ThresholdedRelu: return x > alpha ? x : 0.0;
    case Fn::ScaledTanh: return alpha * std::tanh(beta * x);
    case Fn::HardSigmoid: return std::max(0.0, std::min(1.0, alpha * x + beta));
    case Fn::Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
    case Fn::Softsign: return x / (1 + std::abs(x));
    case Fn::Softplus: return std::log1p(std::exp(x));
    }
    return x;
  }
  void operator()(float *p, int64_t n) const {
    if (fn == Fn::Sigmoid) return sigmoidVec(p, n);
    if (fn == Fn::Tanh) return tanhVec(p, n);
    for (int64_t i = 0; i < n; ++i) p[i] = float((*this)(double(p[i])));
  }
};

Result<Act> activation(const std::string &name, double alpha, double beta) {
  std::string n = name;
  for (char &c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
  using F = Act::Fn;
  static const std::pair<const char *, F> names[] = {
      {"sigmoid", F::Sigmoid},         {"tanh", F::Tanh},       {"relu", F::Relu},
      {"affine", F::Affine},           {"leakyrelu", F::LeakyRelu}, {"thresholdedrelu", F::ThresholdedRelu},
      {"scaledtanh", F::ScaledTanh},   {"hardsigmoid", F::HardSigmoid}, {"elu", F::Elu},
      {"softsign", F::Softsign},       {"softplus", F::Softplus}};
  for (const auto &[text, fn] : names)
    if (n == text) return Act{fn, alpha, beta};
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

/// A recurrent node's attributes, sizes and inputs as doubles (the initial states laid out
/// [dirs, batch, hidden] whatever the layout; those the node does not have are zeros). X, W and R
/// are left empty where the recurrence runs in f32 (`f32`: it reads them as they are).
struct Recurrence {
  Kind kind = Kind::RNN;
  std::string direction;
  int64_t layout = 0, lbr = 0, inputForget = 0;
  std::optional<double> clip;
  int64_t gates = 1, dirs = 1, seq = 0, batch = 0, in = 0, hidden = 0;
  std::vector<double> x, w, rw, bias, h0, c0, peep;
  std::vector<int64_t> lens;
};

Result<Recurrence> recurrenceOf(EvalContext &ctx, Kind kind, bool f32) {
  const Tensor &xT = ctx.input(0), &wT = ctx.input(1), &rT = ctx.input(2);
  Recurrence rc;
  rc.kind = kind;
  SF_ASSIGN(rc.hidden, ctx.attrs().getInt("hidden_size"));
  SF_ASSIGN(rc.direction, ctx.attrs().getString("direction", "forward"));
  SF_ASSIGN(rc.layout, ctx.attrs().getInt("layout", 0));
  SF_ASSIGN(rc.lbr, ctx.attrs().getInt("linear_before_reset", 0));
  SF_ASSIGN(rc.inputForget, ctx.attrs().getInt("input_forget", 0));
  if (ctx.attrs().has("clip")) {
    SF_ASSIGN(double c, ctx.attrs().getFloat("clip"));
    rc.clip = c;
  }
  const int64_t hidden = rc.hidden, layout = rc.layout;
  int64_t gates = rc.gates = kind == Kind::RNN ? 1 : kind == Kind::GRU ? 3 : 4;
  int64_t dirs = rc.dirs = rc.direction == "bidirectional" ? 2 : 1;
  const Shape &xs = xT.shape();
  if (xs.size() != 3) return errorf("X must be 3-D");
  int64_t seq = rc.seq = layout ? xs[1] : xs[0], batch = rc.batch = layout ? xs[0] : xs[1], in = rc.in = xs[2];
  if (wT.shape() != Shape{dirs, gates * hidden, in} || rT.shape() != Shape{dirs, gates * hidden, hidden})
    return errorf("W is {} and R is {}; expected [{}, {}, {}] and [{}, {}, {}]", shapeText(wT.shape()),
                  shapeText(rT.shape()), dirs, gates * hidden, in, dirs, gates * hidden, hidden);
  if (!f32) {
    SF_ASSIGN(rc.x, doubles(xT));
    SF_ASSIGN(rc.w, doubles(wT));
    SF_ASSIGN(rc.rw, doubles(rT));
  }
  rc.bias.assign(size_t(dirs * 2 * gates * hidden), 0.0), rc.h0.assign(size_t(dirs * batch * hidden), 0.0);
  rc.c0 = rc.h0, rc.peep.assign(size_t(dirs * 3 * hidden), 0.0);
  rc.lens.assign(size_t(batch), seq);
  if (ctx.hasInput(3)) {
    SF_ASSIGN(rc.bias, doubles(ctx.input(3)));
  }
  if (ctx.hasInput(4)) {
    SF_ASSIGN(rc.lens, ints(ctx.input(4)));
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
  SF_TRY(readState(5, rc.h0));
  if (kind == Kind::LSTM) {
    SF_TRY(readState(6, rc.c0));
    if (ctx.hasInput(7)) {
      SF_ASSIGN(rc.peep, doubles(ctx.input(7)));
    }
  }
  if (rc.bias.size() != size_t(dirs * 2 * gates * hidden)) return errorf("B has {} elements", rc.bias.size());
  return rc;
}

/// Activations per direction: RNN 1, GRU 2, LSTM 3.
size_t activationsPerDirection(Kind kind) { return kind == Kind::RNN ? 1 : kind == Kind::GRU ? 2 : 3; }

/// The activations of every direction, from the activations list and its alphas and betas
/// (each taken in turn by the activations that use one), or ONNX's defaults.
Result<std::vector<Act>> activationsOf(EvalContext &ctx, Kind kind, int64_t dirs) {
  size_t perDir = activationsPerDirection(kind);
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
  return acts;
}

/// One step of one sequence: the new hidden state `h` (and LSTM's cell state `c`) from the gates'
/// input and recurrent parts `gx` and `gh`, with the direction's activations `f`, recurrent
/// weights `R`, their bias `Rb` and peepholes `P`.
void cellStep(const Recurrence &rc, const Act *f, const double *R, const double *Rb, const double *P,
              const std::vector<double> &gx, const std::vector<double> &gh, std::vector<double> &h,
              std::vector<double> &c) {
  const int64_t hidden = rc.hidden;
  const std::optional<double> &clip = rc.clip;
  auto clamp = [&](double v) { return clip ? std::clamp(v, -*clip, *clip) : v; };
  std::vector<double> hn(static_cast<size_t>(hidden));
  if (rc.kind == Kind::RNN) {
    for (int64_t k = 0; k < hidden; ++k) hn[size_t(k)] = f[0](clamp(gx[size_t(k)] + gh[size_t(k)]));
  } else if (rc.kind == Kind::GRU) {
    // Gates z, r, h. Without linear_before_reset the reset gate scales the hidden state
    // before R's h rows; with it, it scales their product.
    std::vector<double> z(static_cast<size_t>(hidden)), rg(static_cast<size_t>(hidden));
    for (int64_t k = 0; k < hidden; ++k) {
      z[size_t(k)] = f[0](clamp(gx[size_t(k)] + gh[size_t(k)]));
      rg[size_t(k)] = f[0](clamp(gx[size_t(hidden + k)] + gh[size_t(hidden + k)]));
    }
    for (int64_t k = 0; k < hidden; ++k) {
      double pre;
      if (rc.lbr) {
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
      if (rc.inputForget) fg = 1 - i;
      double g = f[1](clamp(gx[size_t(3 * hidden + k)] + gh[size_t(3 * hidden + k)]));
      cn[size_t(k)] = fg * c[size_t(k)] + i * g;
      double o = f[0](clamp(gx[size_t(hidden + k)] + gh[size_t(hidden + k)] + P[hidden + k] * cn[size_t(k)]));
      hn[size_t(k)] = o * f[2](cn[size_t(k)]);
    }
    c = cn;
  }
  h = hn;
}

/// The recurrence in f32, as onnxruntime computes it: the input parts of every step and sequence
/// in one product X W^T (rows as X stores them), the recurrent parts of a step for every sequence
/// in one product H R^T, the cell over each sequence's row in float, the activations over whole
/// rows (vec_math.h's Sigmoid and Tanh). GRU without linear_before_reset takes R's candidate rows
/// in a second product of a step, over the reset-scaled states.
Result<void> recurrentF32(EvalContext &ctx, const Recurrence &rc, const std::vector<Act> &acts) {
  const Kind kind = rc.kind;
  const int64_t dirs = rc.dirs, seq = rc.seq, batch = rc.batch, in = rc.in, hidden = rc.hidden, layout = rc.layout;
  const int64_t G = rc.gates * hidden, H = hidden;
  const size_t perDir = activationsPerDirection(kind);
  Elements<float> xs(ctx.input(0)), ws(ctx.input(1)), rs(ctx.input(2));
  const Shape yShape = layout ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  const Shape hShape = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  Output<float> yOut(ctx, ElementType::F32, yShape, 0), hOut(ctx, ElementType::F32, hShape, 1),
      cOut(ctx, ElementType::F32, hShape, 2);
  float *y = nullptr, *hLast = nullptr, *cLast = nullptr;
  if (ctx.numOutputs() > 0) {
    SF_ASSIGN(y, yOut.make()); // steps past a sequence's length stay 0
  }
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(hLast, hOut.makeForOverwrite());
  }
  if (kind == Kind::LSTM && ctx.numOutputs() > 2) {
    SF_ASSIGN(cLast, cOut.makeForOverwrite());
  }
  auto row = [&](int64_t t, int64_t b) { return layout ? b * seq + t : t * batch + b; }; // X's row of (t, b)
  auto yAt = [&](int64_t t, int64_t d, int64_t b) {
    return y + (layout ? ((b * seq + t) * dirs + d) * hidden : ((t * dirs + d) * batch + b) * hidden);
  };
  auto stateAt = [&](float *p, int64_t d, int64_t b) { return p + (layout ? (b * dirs + d) * hidden : (d * batch + b) * hidden); };
  const float clip = rc.clip ? float(*rc.clip) : 0.0f;
  auto clamp = [&](float *p, int64_t n) {
    if (rc.clip)
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] < -clip ? -clip : p[i] > clip ? clip : p[i];
  };
  // The recurrent product's rows: all of R's, except GRU's candidate rows without linear_before_reset.
  const int64_t Gh = kind == Kind::GRU && !rc.lbr ? 2 * H : G;
  // c[m, n] = a[m, k] * B^T, B [n, k] rows of W (input 1) or R (input 2). A constant W or R (a
  // model's weights) on oneDNN, packed once and kept between runs (`packed`, prepared once per
  // direction for the steps): sgemm packs B on every call, and a step's product has as few rows
  // as the batch (measured: 2x96 by 96x288 4.5 us by sgemm, 2.5 us packed).
  auto product = [&](int64_t m, int64_t n, int64_t k, const float *a, const DnnlProduct *packed, const float *b,
                     float *c) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) return void(std::fill(c, c + m * n, 0.0f));
    if (packed) return packed->run(a, c);
    sgemm(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
  };
  auto prepared = [&](DnnlProduct &p, int64_t m, int64_t n, int64_t k, size_t input, const float *b) {
    return m > 0 && n > 0 && k > 0 && ctx.inputIsConstant(input) && p.prepare(m, k, n, b, true, ctx.inputShared(input))
               ? &p
               : nullptr;
  };
  std::vector<float> gx, gh(size_t(batch * Gh)), h(size_t(batch * H)), c(size_t(batch * H)), gate(static_cast<size_t>(G)),
      rh(size_t(batch * H)), cand(size_t(batch * H));
  std::vector<int64_t> len(static_cast<size_t>(batch));
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = rc.direction == "reverse" || d == 1;
    const float *W = ws.data() + d * G * in, *R = rs.data() + d * G * hidden;
    const double *Wb = &rc.bias[size_t(d * 2 * G)], *Rb = Wb + G, *P = &rc.peep[size_t(d * 3 * H)];
    const Act *f = &acts[size_t(d) * perDir];
    // X W^T + Wb + Rb for every (step, sequence): the biases added once.
    gx.resize(size_t(seq * batch * G));
    DnnlProduct byW, byR, byRh; // R's candidate rows apart: GRU without linear_before_reset
    product(seq * batch, G, in, xs.data(), prepared(byW, seq * batch, G, in, 1, W), W, gx.data());
    const DnnlProduct *stepR = prepared(byR, batch, Gh, H, 2, R);
    const DnnlProduct *stepRh = Gh < G ? prepared(byRh, batch, H, H, 2, R + 2 * H * H) : nullptr;
    std::vector<float> bias(static_cast<size_t>(G)), rbH(static_cast<size_t>(H));
    for (int64_t g = 0; g < G; ++g) // GRU's candidate rows take R's bias apart (rbH)
      bias[size_t(g)] = float(Wb[g]) + (kind == Kind::GRU && g >= 2 * H ? 0.0f : float(Rb[g]));
    for (int64_t k = 0; k < H && kind == Kind::GRU; ++k) rbH[size_t(k)] = float(Rb[2 * H + k]);
    for (int64_t i = 0; i < seq * batch; ++i)
      for (int64_t g = 0; g < G; ++g) gx[size_t(i * G + g)] += bias[size_t(g)];
    std::vector<float> peep(size_t(3 * H));
    for (int64_t k = 0; k < 3 * H; ++k) peep[size_t(k)] = float(P[k]);
    int64_t longest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < H; ++k) {
        h[size_t(b * H + k)] = float(rc.h0[size_t((d * batch + b) * H + k)]);
        c[size_t(b * H + k)] = float(rc.c0[size_t((d * batch + b) * H + k)]);
      }
      len[size_t(b)] = std::clamp<int64_t>(rc.lens[size_t(b)], 0, seq);
      longest = std::max(longest, len[size_t(b)]);
    }
    for (int64_t s = 0; s < longest; ++s) {
      product(batch, Gh, H, h.data(), stepR, R, gh.data());
      if (kind == Kind::GRU && !rc.lbr) {
        // The reset gate of every running sequence first, then (r . h) R_h^T in one product.
        for (int64_t b = 0; b < batch; ++b) {
          if (s >= len[size_t(b)]) continue;
          const int64_t t = reverse ? len[size_t(b)] - 1 - s : s;
          const float *ax = &gx[size_t(row(t, b) * G)], *ah = &gh[size_t(b * Gh)];
          float *rg = &rh[size_t(b * H)];
          for (int64_t k = 0; k < H; ++k) rg[k] = ax[H + k] + ah[H + k];
          clamp(rg, H);
          f[0](rg, H);
          for (int64_t k = 0; k < H; ++k) rg[k] *= h[size_t(b * H + k)];
        }
        product(batch, H, H, rh.data(), stepRh, R + 2 * H * H, cand.data());
      }
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= len[size_t(b)]) continue; // this sequence has ended: its state stays
        const int64_t t = reverse ? len[size_t(b)] - 1 - s : s;
        const float *ax = &gx[size_t(row(t, b) * G)], *ah = &gh[size_t(b * Gh)];
        float *hb = &h[size_t(b * H)], *cb = &c[size_t(b * H)], *gt = gate.data();
        if (kind == Kind::RNN) {
          for (int64_t k = 0; k < H; ++k) gt[k] = ax[k] + ah[k];
          clamp(gt, H);
          f[0](gt, H);
          std::copy(gt, gt + H, hb);
        } else if (kind == Kind::GRU) {
          // Gates z, r, h. With linear_before_reset the reset gate scales R_h's product (and its
          // bias); without it, the product of the reset-scaled state made above.
          for (int64_t k = 0; k < (rc.lbr ? 2 * H : H); ++k) gt[k] = ax[k] + ah[k];
          clamp(gt, rc.lbr ? 2 * H : H);
          f[0](gt, rc.lbr ? 2 * H : H);
          float *z = gt, *hc = gt + 2 * H;
          if (rc.lbr) {
            const float *rg = gt + H;
            for (int64_t k = 0; k < H; ++k) hc[k] = ax[2 * H + k] + rg[k] * (ah[2 * H + k] + rbH[size_t(k)]);
          } else {
            const float *p = &cand[size_t(b * H)];
            for (int64_t k = 0; k < H; ++k) hc[k] = ax[2 * H + k] + p[k] + rbH[size_t(k)];
          }
          clamp(hc, H);
          f[1](hc, H);
          for (int64_t k = 0; k < H; ++k) hb[k] = (1.0f - z[k]) * hc[k] + z[k] * hb[k];
        } else {
          // Gates i, o, f, c (ONNX's order); the peepholes read the cell state before (i, f) and
          // after (o) the step.
          float *ig = gt, *og = gt + H, *fg = gt + 2 * H, *cg = gt + 3 * H;
          for (int64_t k = 0; k < H; ++k) {
            ig[k] = ax[k] + ah[k] + peep[size_t(k)] * cb[k];
            fg[k] = ax[2 * H + k] + ah[2 * H + k] + peep[size_t(2 * H + k)] * cb[k];
            cg[k] = ax[3 * H + k] + ah[3 * H + k];
          }
          clamp(ig, H), clamp(fg, H), clamp(cg, H);
          f[0](ig, H);
          f[0](fg, H);
          if (rc.inputForget)
            for (int64_t k = 0; k < H; ++k) fg[k] = 1.0f - ig[k];
          f[1](cg, H);
          for (int64_t k = 0; k < H; ++k) cb[k] = fg[k] * cb[k] + ig[k] * cg[k];
          for (int64_t k = 0; k < H; ++k) og[k] = ax[H + k] + ah[H + k] + peep[size_t(H + k)] * cb[k];
          clamp(og, H);
          f[0](og, H);
          std::copy(cb, cb + H, cand.data() + b * H); // the cell state through the third activation
          f[2](cand.data() + b * H, H);
          for (int64_t k = 0; k < H; ++k) hb[k] = og[k] * cand[size_t(b * H + k)];
        }
        if (y) std::copy(hb, hb + H, yAt(t, d, b));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (hLast) std::copy(&h[size_t(b * H)], &h[size_t(b * H)] + H, stateAt(hLast, d, b));
      if (cLast) std::copy(&c[size_t(b * H)], &c[size_t(b * H)] + H, stateAt(cLast, d, b));
    }
  }
  if (y) SF_TRY(yOut.finish(0));
  if (hLast) SF_TRY(hOut.finish(1));
  if (cLast) SF_TRY(cOut.finish(2));
  return success();
}

Result<void> recurrent(EvalContext &ctx, Kind kind) {
  const bool isF32 = ctx.input(0).type() == ElementType::F32 && ctx.input(1).type() == ElementType::F32 &&
                     ctx.input(2).type() == ElementType::F32;
  SF_ASSIGN(Recurrence rc, recurrenceOf(ctx, kind, isF32));
  SF_ASSIGN(std::vector<Act> acts, activationsOf(ctx, kind, rc.dirs));
  if (isF32) return recurrentF32(ctx, rc, acts);
  // The other types in double loops, sequence by sequence, in the order a reader can check.
  const int64_t gates = rc.gates, dirs = rc.dirs, seq = rc.seq, batch = rc.batch, in = rc.in, hidden = rc.hidden;
  const int64_t layout = rc.layout, G = gates * hidden;
  size_t perDir = activationsPerDirection(kind);
  std::vector<double> y(size_t(seq * dirs * batch * hidden), 0.0), hOut(static_cast<size_t>(dirs * batch * hidden)),
      cOut(hOut.size());
  auto row = [&](int64_t t, int64_t b) { return layout ? b * seq + t : t * batch + b; }; // X's row of (t, b)
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = rc.direction == "reverse" || d == 1;
    const double *W = &rc.w[size_t(d * G * in)], *R = &rc.rw[size_t(d * G * hidden)];
    const double *Wb = &rc.bias[size_t(d * 2 * G)], *Rb = Wb + G;
    const double *P = &rc.peep[size_t(d * 3 * hidden)];
    const Act *f = &acts[size_t(d) * perDir];
    std::vector<std::vector<double>> h(static_cast<size_t>(batch)), c(static_cast<size_t>(batch));
    std::vector<int64_t> len(static_cast<size_t>(batch));
    int64_t longest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      h[size_t(b)].assign(&rc.h0[size_t((d * batch + b) * hidden)], &rc.h0[size_t((d * batch + b) * hidden)] + hidden);
      c[size_t(b)].assign(&rc.c0[size_t((d * batch + b) * hidden)], &rc.c0[size_t((d * batch + b) * hidden)] + hidden);
      len[size_t(b)] = std::clamp<int64_t>(rc.lens[size_t(b)], 0, seq);
      longest = std::max(longest, len[size_t(b)]);
    }
    std::vector<double> gx(static_cast<size_t>(G)), gh(static_cast<size_t>(G));
    for (int64_t s = 0; s < longest; ++s) {
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= len[size_t(b)]) continue; // this sequence has ended: its state stays
        int64_t t = reverse ? len[size_t(b)] - 1 - s : s;
        const double *xt = &rc.x[size_t(row(t, b) * in)];
        const std::vector<double> &hb = h[size_t(b)];
        for (int64_t g = 0; g < G; ++g) {
          double a = Wb[g], r = Rb[g];
          for (int64_t k = 0; k < in; ++k) a += W[g * in + k] * xt[k];
          for (int64_t k = 0; k < hidden; ++k) r += R[g * hidden + k] * hb[size_t(k)];
          gx[size_t(g)] = a, gh[size_t(g)] = r;
        }
        cellStep(rc, f, R, Rb, P, gx, gh, h[size_t(b)], c[size_t(b)]);
        for (int64_t k = 0; k < hidden; ++k)
          y[size_t(layout ? ((b * seq + t) * dirs + d) * hidden + k : ((t * dirs + d) * batch + b) * hidden + k)] =
              h[size_t(b)][size_t(k)];
      }
    }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < hidden; ++k) {
        hOut[size_t(layout ? (b * dirs + d) * hidden + k : (d * batch + b) * hidden + k)] = h[size_t(b)][size_t(k)];
        cOut[size_t(layout ? (b * dirs + d) * hidden + k : (d * batch + b) * hidden + k)] = c[size_t(b)][size_t(k)];
      }
  }
  const ElementType type = ctx.input(0).type();
  Shape yShape = layout ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  Shape hShape = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  if (ctx.numOutputs() > 0) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(type, yShape, y));
    SF_TRY(ctx.setOutput(0, std::move(t)));
  }
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(type, hShape, hOut));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  if (kind == Kind::LSTM && ctx.numOutputs() > 2) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(type, hShape, cOut));
    SF_TRY(ctx.setOutput(2, std::move(t)));
  }
  return success();
}

} // namespace

Result<void> registerRnnKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "RNN", [](EvalContext &c) { return recurrent(c, Kind::RNN); }));
  SF_TRY(setKernel(r, "GRU", [](EvalContext &c) { return recurrent(c, Kind::GRU); }));
  SF_TRY(setKernel(r, "LSTM", [](EvalContext &c) { return recurrent(c, Kind::LSTM); }));
  return success();
}

} // namespace sf::eval::detail
