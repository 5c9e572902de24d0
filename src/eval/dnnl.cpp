// Convolution, pooling, products with constant weights and eltwise activations on oneDNN
// (eval/dnnl.h).
//
// The executor hands tensors between kernels in the plain layout (NCHW); oneDNN's fast kernels
// want blocked layouts (nChw16c). Each convolution or pool reorders the activation into the
// layout its primitive works in and the result back: two memory-bound passes, cheap beside the
// kernel, and far faster than running the kernels on plain layouts. Weights are reordered once
// and kept.
#include "dnnl.h"

#ifdef SF_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#endif

namespace sf::eval::detail {

void relayout(const float *from, float *to, int64_t n, int64_t c, int64_t hw, Layout layout, bool toLayout) {
  if (layout == Layout::Plain) {
    std::copy(from, from + n * c * hw, to);
    return;
  }
  if (layout == Layout::ChannelsLast) {
    for (int64_t b = 0; b < n; ++b) {
      const float *f = from + b * c * hw;
      float *t = to + b * c * hw;
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < hw; ++i) {
          if (toLayout) t[i * c + ch] = f[ch * hw + i];
          else t[ch * hw + i] = f[i * c + ch];
        }
    }
    return;
  }
  const bool toBlocked = toLayout;
  const int64_t blk = channelBlock(layout);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t cb = 0; cb < c / blk; ++cb) {
      const int64_t base = (b * c + cb * blk) * hw; // the block's channels start here in both
      for (int64_t i = 0; i < hw; ++i)
        for (int64_t j = 0; j < blk; ++j) {
          if (toBlocked) to[base + i * blk + j] = from[base + j * hw + i];
          else to[base + j * hw + i] = from[base + i * blk + j];
        }
    }
}

#ifdef SF_HAVE_DNNL
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct Env {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Env &env() {
  thread_local Env e;
  return e;
}

constexpr size_t kMaxEntries = 4096;

Tag plainTag(size_t spatial) {
  return spatial == 1 ? Tag::ncw : spatial == 2 ? Tag::nchw : Tag::ncdhw;
}

/// The tag of a 2-D activation kept in `layout` (plainTag for the plain one, any rank).
Tag tagOf(Layout layout, size_t spatial) {
  switch (layout) {
  case Layout::Blocked16: return Tag::nChw16c;
  case Layout::Blocked8: return Tag::nChw8c;
  case Layout::ChannelsLast: return Tag::nhwc;
  case Layout::Plain: break;
  }
  return plainTag(spatial);
}

/// The channel block a window primitive runs in where it may choose: the one its output or
/// input is kept in, else the machine's.
int64_t blockFor(const WindowGeometry &g) {
  if (channelBlock(g.dst)) return channelBlock(g.dst);
  if (channelBlock(g.src)) return channelBlock(g.src);
  return dnnlChannelBlock();
}

/// Whether a geometry's layouts are ones its tensors can be in: channel layouts only with 2
/// spatial dims, channel blocks only for whole blocks (`c` in, `m` out).
bool layoutsFit(const WindowGeometry &g, int64_t c, int64_t m) {
  const size_t k = g.in.size();
  auto fits = [&](Layout l, int64_t ch) {
    return l == Layout::Plain || (k == 2 && (l == Layout::ChannelsLast || ch % channelBlock(l) == 0));
  };
  return fits(g.src, c) && fits(g.dst, m);
}

Tag weightsTag(size_t spatial, bool grouped) {
  if (grouped) return spatial == 1 ? Tag::goiw : spatial == 2 ? Tag::goihw : Tag::goidhw;
  return spatial == 1 ? Tag::oiw : spatial == 2 ? Tag::oihw : Tag::oidhw;
}

memory::dims activationDims(int64_t n, int64_t c, const std::vector<int64_t> &spatial) {
  memory::dims d{n, c};
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

/// oneDNN takes the case: 1-3 spatial dims, nothing empty.
bool supported(const WindowGeometry &g) {
  size_t k = g.in.size();
  if (k < 1 || k > 3 || g.kernel.size() != k || g.out.size() != k) return false;
  if (g.n <= 0 || g.c <= 0 || g.m <= 0 || g.group <= 0) return false;
  for (size_t i = 0; i < k; ++i)
    if (g.in[i] <= 0 || g.out[i] <= 0 || g.kernel[i] <= 0) return false;
  return true;
}

/// oneDNN fixes a primitive's threads when it is made: the count is part of every key.
int64_t threads() { return omp_get_max_threads(); }

/// Drops the entries whose weights died (their tensors are gone; the address may be reused).
template <class Cache> void evictDead(Cache &cache) {
  std::erase_if(cache, [](const auto &e) { return e.second.from.expired(); });
  if (cache.size() >= kMaxEntries) cache.clear();
}

std::vector<int64_t> keyOf(const WindowGeometry &g, int64_t extra) {
  std::vector<int64_t> key{g.n, g.c, g.m, g.group, int64_t(g.in.size()), extra, threads()};
  for (const auto *v : {&g.in, &g.kernel, &g.stride, &g.dilation, &g.padBegin, &g.padEnd, &g.out})
    key.insert(key.end(), v->begin(), v->end());
  return key;
}

/// The buffers the layouts are reordered into, one pair per thread shared by every primitive and
/// grown to the largest asked for (one per primitive would hold a network's activations twice).
struct Scratch {
  std::unique_ptr<std::byte[], void (*)(void *)> src{nullptr, std::free}, dst{nullptr, std::free};
  size_t srcBytes = 0, dstBytes = 0;
  static std::byte *room(std::unique_ptr<std::byte[], void (*)(void *)> &buf, size_t &have, size_t need) {
    if (need > have) {
      size_t rounded = (need + 63) / 64 * 64;
      buf.reset(static_cast<std::byte *>(std::aligned_alloc(64, rounded)));
      if (!buf) throw std::bad_alloc();
      have = rounded;
    }
    return buf.get();
  }
};

Scratch &scratch() {
  thread_local Scratch s;
  return s;
}

/// Runs `prim` with `args`, reordering the plain `x` into `srcDesc` and the result from
/// `dstDesc` into the plain `y` where the layouts differ.
void execute(const dnnl::primitive &prim, std::unordered_map<int, memory> args,
             const memory::desc &srcDesc, const memory::desc &dstDesc, const memory::desc &xDesc,
             const memory::desc &yDesc, const float *x, float *y) {
  Env &e = env();
  Scratch &sc = scratch();
  memory xm(xDesc, e.engine, const_cast<float *>(x));
  memory ym(yDesc, e.engine, y);
  memory src = xm, dst = ym;
  if (srcDesc != xDesc) {
    src = memory(srcDesc, e.engine, Scratch::room(sc.src, sc.srcBytes, srcDesc.get_size()));
    dnnl::reorder(xm, src).execute(e.stream, xm, src);
  }
  if (dstDesc != yDesc) dst = memory(dstDesc, e.engine, Scratch::room(sc.dst, sc.dstBytes, dstDesc.get_size()));
  args[DNNL_ARG_SRC] = src;
  args[DNNL_ARG_DST] = dst;
  prim.execute(e.stream, args);
  if (dst != ym) dnnl::reorder(dst, ym).execute(e.stream, dst, ym);
  e.stream.wait();
}

/// A primitive with the descriptor it was made from.
template <class P> struct Primitive {
  typename P::primitive_desc pd;
  P prim;
  explicit Primitive(typename P::primitive_desc d) : pd(std::move(d)), prim(pd) {}
};

/// A primitive whose weights were reordered from a tensor of the graph into its own layout.
template <class P> struct WithWeights : Primitive<P> {
  using Primitive<P>::Primitive;
  std::weak_ptr<const Tensor> from; // the weights tensor `weights` was reordered from
  memory weights;
};

/// Per thread; the entries with weights are keyed by geometry and the weights tensor's address
/// (its identity while it lives: `from` tells when it died and the address may name another).
thread_local std::map<std::vector<int64_t>, WithWeights<dnnl::convolution_forward>> convCache;
thread_local std::map<std::vector<int64_t>, WithWeights<dnnl::deconvolution_forward>> deconvCache;
thread_local std::map<std::vector<int64_t>, WithWeights<dnnl::matmul>> matmulCache;
thread_local std::map<std::vector<int64_t>, Primitive<dnnl::pooling_forward>> poolCache;
thread_local std::map<std::vector<int64_t>, Primitive<dnnl::eltwise_forward>> eltCache;

/// The entry of `key`, made by `make()` on a miss (the cache emptied first when full).
template <class Cache, class Make> auto &findOrMake(Cache &cache, const std::vector<int64_t> &key, Make make) {
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= kMaxEntries) cache.clear();
    it = cache.emplace(key, make()).first;
  }
  return it->second;
}

/// `entry` with the weights `w` (laid out as `user`) reordered into its primitive's layout: always
/// a copy of oneDNN's own, since `w` may be a temporary aligned copy of the tensor's bytes.
template <class P>
void packWeights(WithWeights<P> &entry, const std::shared_ptr<const Tensor> &weights,
                 const memory::desc &user, const float *w) {
  Env &e = env();
  entry.from = weights;
  memory wm(user, e.engine, const_cast<float *>(w));
  entry.weights = memory(entry.pd.weights_desc(), e.engine);
  dnnl::reorder(wm, entry.weights).execute(e.stream, wm, entry.weights);
  e.stream.wait();
}

/// The weights' dims as oneDNN takes them: [m, c, kernel...], grouped [g, m/g, c/g, kernel...].
memory::dims weightDims(const WindowGeometry &g) {
  memory::dims d = g.group > 1 ? memory::dims{g.group, g.m / g.group, g.c / g.group} : memory::dims{g.m, g.c};
  d.insert(d.end(), g.kernel.begin(), g.kernel.end());
  return d;
}

/// A window's strides, dilations (oneDNN counts the gaps) and pads as oneDNN takes them.
struct WindowArgs {
  memory::dims strides, dilates, padL, padR;
};

WindowArgs windowArgs(const WindowGeometry &g) {
  WindowArgs a{memory::dims(g.stride.begin(), g.stride.end()), {}, memory::dims(g.padBegin.begin(), g.padBegin.end()),
               memory::dims(g.padEnd.begin(), g.padEnd.end())};
  for (int64_t d : g.dilation) a.dilates.push_back(d - 1);
  return a;
}

/// The entry of a primitive with weights: the kept one of `key` (`keep`: the weights are a
/// constant) while its weights tensor lives, else one made by `makePd()` with `w` (laid out as
/// `wUser`) packed into its layout, kept under `key`, or put in `once` for this call only.
template <class P, class MakePd>
const WithWeights<P> &weightedEntry(std::map<std::vector<int64_t>, WithWeights<P>> &cache, const std::vector<int64_t> &key,
                                    bool keep, std::optional<WithWeights<P>> &once,
                                    const std::shared_ptr<const Tensor> &weights, const memory::desc &wUser,
                                    const float *w, MakePd makePd) {
  auto it = keep ? cache.find(key) : cache.end();
  if (it != cache.end() && !it->second.from.expired()) return it->second;
  if (keep) evictDead(cache);
  WithWeights<P> entry(makePd());
  packWeights(entry, weights, wUser, w);
  if (!keep) return once.emplace(std::move(entry)); // computed in this run (not a constant): not kept
  return cache.insert_or_assign(key, std::move(entry)).first->second;
}

/// Runs a windowed primitive with weights on x into y, with the bias `b` (m values) if given and
/// the tensor `z` (laid out as y) its first post-op adds, if given.
template <class P>
void runWeighted(const WithWeights<P> &c, const memory::desc &bDesc, const float *b, const memory::desc &xDesc,
                 const memory::desc &yDesc, const float *x, float *y, const float *z = nullptr) {
  std::unordered_map<int, memory> args{{DNNL_ARG_WEIGHTS, c.weights}};
  if (b) args[DNNL_ARG_BIAS] = memory(bDesc, env().engine, const_cast<float *>(b));
  if (z) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = memory(yDesc, env().engine, const_cast<float *>(z));
  execute(c.prim, std::move(args), c.pd.src_desc(), c.pd.dst_desc(), xDesc, yDesc, x, y);
}

} // namespace

bool dnnlConv(const WindowGeometry &g, const float *x, const float *w,
              const std::shared_ptr<const Tensor> &weights, bool keep, const float *b, float *y, PostOp post,
              const float *z) {
  if (!supported(g) || !weights || g.c % g.group != 0 || g.m % g.group != 0) return false;
  // A sum into a plain y: oneDNN's kernels for plain tensors with it are slower than the
  // convolution in blocks and the sum after it (the caller's).
  if (z && g.dst == Layout::Plain) return false;
  try {
    Env &e = env();
    const size_t k = g.in.size();
    const memory::dims wDims = weightDims(g);
    if (!layoutsFit(g, g.c, g.m)) return false;
    memory::desc xDesc(activationDims(g.n, g.c, g.in), memory::data_type::f32, tagOf(g.src, k));
    memory::desc yDesc(activationDims(g.n, g.m, g.out), memory::data_type::f32, tagOf(g.dst, k));
    memory::desc wUser(wDims, memory::data_type::f32, weightsTag(k, g.group > 1));
    memory::desc bDesc({g.m}, memory::data_type::f32, Tag::x);

    auto key = keyOf(g, b ? 1 : 0);
    key.push_back(int64_t(reinterpret_cast<uintptr_t>(weights.get())));
    key.push_back(int64_t(g.src) * 4 + int64_t(g.dst));
    key.push_back(int64_t(post.kind) * 2 + (z ? 1 : 0));
    if (post.kind == PostOp::Kind::Swish || post.kind == PostOp::Kind::Clip) {
      int32_t alpha, beta;
      std::memcpy(&alpha, &post.alpha, 4);
      std::memcpy(&beta, &post.beta, 4);
      key.push_back(alpha);
      key.push_back(beta);
    }
    std::optional<WithWeights<dnnl::convolution_forward>> once;
    const auto &c = weightedEntry(convCache, key, keep, once, weights, wUser, w, [&] {
      const WindowArgs a = windowArgs(g);
      memory::desc anyW(wDims, memory::data_type::f32, Tag::any);
      auto makePd = [&](Tag srcTag, Tag dstTag) {
        memory::desc src(activationDims(g.n, g.c, g.in), memory::data_type::f32, srcTag);
        memory::desc dst(activationDims(g.n, g.m, g.out), memory::data_type::f32, dstTag);
        auto desc = b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, src, anyW, bDesc, dst,
                                                        a.strides, a.dilates, a.padL, a.padR)
                      : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, src, anyW, dst,
                                                        a.strides, a.dilates, a.padL, a.padR);
        dnnl::primitive_attr attr;
        dnnl::post_ops ops;
        if (z) ops.append_binary(dnnl::algorithm::binary_add, yDesc); // z as y is kept
        switch (post.kind) {
        case PostOp::Kind::None: break;
        case PostOp::Kind::Relu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f); break;
        case PostOp::Kind::Clip: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, post.alpha, post.beta); break;
        case PostOp::Kind::HardSwish: // x * max(0, min(1, x / 6 + 1/2)), ONNX's
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_hardswish, 0.f, 0.f);
          break;
        case PostOp::Kind::Swish: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, post.alpha, 0.f); break;
        }
        if (ops.len() > 0) attr.set_post_ops(ops);
        return dnnl::convolution_forward::primitive_desc(desc, attr, e.engine);
      };
      // Channels in blocks (nChw16c or nChw8c) where both sides have whole blocks: the move from
      // and back to the plain layout is then a cheap blocked copy (a layout oneDNN picks itself,
      // channels last, costs a transpose each way: a quarter of the kernels' time on resnet18).
      // Otherwise, or where the blocked request finds only the reference kernel, oneDNN picks.
      auto notRef = [](const auto &pd) { return std::string(pd.impl_info_str()).rfind("ref", 0) != 0; };
      const int64_t blk = blockFor(g);
      const Tag blocked = tagOf(blockedLayout(blk), k);
      if (k == 2 && g.c % blk == 0 && g.m % blk == 0) {
        auto pd = makePd(blocked, blocked);
        if (notRef(pd)) return pd;
      }
      // Channels last where either side is kept so (channel counts not whole blocks): both
      // sides as they are kept, else both channels last (the other side reordered).
      if (k == 2 && (g.src == Layout::ChannelsLast || g.dst == Layout::ChannelsLast)) {
        auto pd = makePd(tagOf(g.src, k), tagOf(g.dst, k));
        if (notRef(pd)) return pd;
        pd = makePd(Tag::nhwc, Tag::nhwc);
        if (notRef(pd)) return pd;
      }
      // A first layer (a few plain input channels) whose output stays in blocks: read as it is.
      if (k == 2 && channelBlock(g.dst) && g.src == Layout::Plain && g.c % blk != 0) {
        auto pd = makePd(plainTag(k), blocked);
        if (notRef(pd)) return pd;
      }
      return makePd(Tag::any, Tag::any);
    });
    // The sum in the pass only where the primitive writes y in its layout with a compiled kernel.
    if (z && (c.pd.dst_desc() != yDesc || std::string(c.pd.impl_info_str()).rfind("ref", 0) == 0)) return false;
    runWeighted(c, bDesc, b, xDesc, yDesc, x, y, z);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

bool dnnlDeconv(const WindowGeometry &g, const float *x, const float *w,
                const std::shared_ptr<const Tensor> &weights, bool keep, const float *b, float *y) {
  if (!supported(g) || !weights || g.c % g.group != 0 || g.m % g.group != 0) return false;
  try {
    Env &e = env();
    const size_t k = g.in.size();
    // oneDNN's deconvolution weights are [m, c, kernel...] (grouped: [group, m/g, c/g, ...]);
    // ONNX stores them input channels first, which is oneDNN's io layout: [o, i, ...] stored i
    // first (bac...), grouped [g, o, i, ...] stored g, i, o (acb...).
    const memory::dims wDims = weightDims(g);
    const Tag wTag = g.group > 1 ? (k == 1 ? Tag::acbd : k == 2 ? Tag::acbde : Tag::acbdef)
                                 : (k == 1 ? Tag::bac : k == 2 ? Tag::bacd : Tag::bacde);
    memory::desc xDesc(activationDims(g.n, g.c, g.in), memory::data_type::f32, plainTag(k));
    memory::desc yDesc(activationDims(g.n, g.m, g.out), memory::data_type::f32, plainTag(k));
    memory::desc wUser(wDims, memory::data_type::f32, wTag);
    memory::desc bDesc({g.m}, memory::data_type::f32, Tag::x);
    auto key = keyOf(g, b ? 1 : 0);
    key.push_back(int64_t(reinterpret_cast<uintptr_t>(weights.get())));
    std::optional<WithWeights<dnnl::deconvolution_forward>> once;
    const auto &c = weightedEntry(deconvCache, key, keep, once, weights, wUser, w, [&] {
      const WindowArgs a = windowArgs(g);
      memory::desc anyW(wDims, memory::data_type::f32, Tag::any);
      memory::desc src(activationDims(g.n, g.c, g.in), memory::data_type::f32, Tag::any);
      memory::desc dst(activationDims(g.n, g.m, g.out), memory::data_type::f32, Tag::any);
      auto desc = b ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::deconvolution_direct, src, anyW, bDesc, dst,
                                                        a.strides, a.dilates, a.padL, a.padR)
                    : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::deconvolution_direct, src, anyW, dst,
                                                        a.strides, a.dilates, a.padL, a.padR);
      return dnnl::deconvolution_forward::primitive_desc(desc, e.engine);
    });
    runWeighted(c, bDesc, b, xDesc, yDesc, x, y);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

bool dnnlPool(const WindowGeometry &g, PoolKind kind, const float *x, float *y) {
  if (!supported(g)) return false;
  const size_t k = g.in.size();
  memory::dims padR;
  for (size_t i = 0; i < k; ++i) {
    if (g.dilation.size() == k && g.dilation[i] != 1) return false;
    // A window wholly in the padding has its own rule (eval's loops); oneDNN wants pads smaller
    // than the window.
    if (g.padBegin[i] >= g.kernel[i] || g.padEnd[i] >= g.kernel[i]) return false;
    // The right padding oneDNN needs for the output length asked (ceil_mode's overhang).
    int64_t r = (g.out[i] - 1) * g.stride[i] + g.kernel[i] - g.in[i] - g.padBegin[i];
    if (r < g.padEnd[i]) r = g.padEnd[i];
    // Counting pads: ONNX counts the explicit ones only, not the overhang.
    if (r != g.padEnd[i] && kind == PoolKind::AverageIncludingPads) return false;
    if (r >= g.kernel[i]) return false;
    padR.push_back(r);
  }
  try {
    Env &e = env();
    if (!layoutsFit(g, g.c, g.c)) return false;
    memory::desc xDesc(activationDims(g.n, g.c, g.in), memory::data_type::f32, tagOf(g.src, k));
    memory::desc yDesc(activationDims(g.n, g.c, g.out), memory::data_type::f32, tagOf(g.dst, k));
    auto key = keyOf(g, int64_t(kind));
    key.push_back(int64_t(g.src) * 4 + int64_t(g.dst));
    const auto &p = findOrMake(poolCache, key, [&] {
      auto algo = kind == PoolKind::Max ? dnnl::algorithm::pooling_max
                  : kind == PoolKind::AverageIncludingPads ? dnnl::algorithm::pooling_avg_include_padding
                                                           : dnnl::algorithm::pooling_avg_exclude_padding;
      // The source as it is, plain or in channel blocks (a pooling's source layout is not left
      // to oneDNN); the result in the layout oneDNN picks for it.
      memory::desc anyDst(activationDims(g.n, g.c, g.out), memory::data_type::f32, Tag::any);
      // A plain 2-D source of whole channel blocks is pooled in blocks (oneDNN's pooling of the
      // plain layout is several times slower than the reorder into blocks and back).
      const int64_t blk = blockFor(g);
      const bool toBlocks = g.src == Layout::Plain && k == 2 && g.c % blk == 0;
      memory::desc src = toBlocks ? memory::desc(activationDims(g.n, g.c, g.in), memory::data_type::f32,
                                                 tagOf(blockedLayout(blk), k))
                                  : xDesc;
      dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, algo, src, anyDst,
                                       memory::dims(g.stride.begin(), g.stride.end()),
                                       memory::dims(g.kernel.begin(), g.kernel.end()),
                                       memory::dims(g.padBegin.begin(), g.padBegin.end()), padR);
      return Primitive<dnnl::pooling_forward>(dnnl::pooling_forward::primitive_desc(desc, e.engine));
    });
    execute(p.prim, {}, p.pd.src_desc(), p.pd.dst_desc(), xDesc, yDesc, x, y);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

namespace {

/// The matmul primitive and packed weights of dnnlMatMul's arguments, made on a miss (throws
/// dnnl::error where oneDNN declines).
const WithWeights<dnnl::matmul> &matmulEntry(int64_t m, int64_t k, int64_t n, const float *w, bool transposed,
                                              const std::shared_ptr<const Tensor> &weights, bool bias,
                                              bool aTransposed) {
  Env &e = env();
  const int64_t address = int64_t(reinterpret_cast<uintptr_t>(weights.get()));
  // `w` in the key too: a recurrent op's directions are parts of one tensor.
  const int64_t part = int64_t(reinterpret_cast<uintptr_t>(w));
  std::vector<int64_t> key{address, m, k, n, transposed, bias, threads(), aTransposed, part};
  auto it = matmulCache.find(key);
  if (it == matmulCache.end() || it->second.from.expired()) {
    evictDead(matmulCache);
    // One packed copy per weights tensor (or part of it): another row count (sequence length)
    // replaces it.
    std::erase_if(matmulCache, [&](const auto &entry) { return entry.first[0] == address && entry.first[8] == part; });
    // B packed row-major with 16 floats more per row than it has columns: a row of n floats
    // whose bytes are a multiple of 4 KB (n = 1024, 3072, 4096: a transformer's MLP) makes
    // oneDNN's gemm read B's rows at addresses that alias in the cache, at half its speed
    // (measured: 50x768 by 768x3072 5.7 ms as oneDNN packs it, 2.8 ms so); other widths gain
    // 10-20%.
    memory::desc aDesc({m, k}, memory::data_type::f32, aTransposed ? Tag::ba : Tag::ab);
    memory::desc yDesc({m, n}, memory::data_type::f32, Tag::ab);
    memory::desc packedW({k, n}, memory::data_type::f32, memory::dims{n + 16, 1});
    auto desc = bias ? dnnl::matmul::desc(aDesc, packedW, memory::desc({1, n}, memory::data_type::f32, Tag::ab), yDesc)
                     : dnnl::matmul::desc(aDesc, packedW, yDesc);
    WithWeights<dnnl::matmul> entry(dnnl::matmul::primitive_desc(desc, e.engine));
    packWeights(entry, weights, memory::desc({k, n}, memory::data_type::f32, transposed ? Tag::ba : Tag::ab), w);
    it = matmulCache.insert_or_assign(key, std::move(entry)).first;
  }
  return it->second;
}

} // namespace

bool dnnlMatMul(int64_t m, int64_t k, int64_t n, const float *a, const float *w, bool transposed,
                const std::shared_ptr<const Tensor> &weights, const float *bias, float *y, bool aTransposed) {
  if (m <= 0 || k <= 0 || n <= 0 || !weights) return false;
  try {
    Env &e = env();
    const auto &c = matmulEntry(m, k, n, w, transposed, weights, bias != nullptr, aTransposed);
    memory::desc aDesc({m, k}, memory::data_type::f32, aTransposed ? Tag::ba : Tag::ab);
    memory::desc yDesc({m, n}, memory::data_type::f32, Tag::ab);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(aDesc, e.engine, const_cast<float *>(a))},
                                         {DNNL_ARG_WEIGHTS, c.weights},
                                         {DNNL_ARG_DST, memory(yDesc, e.engine, y)}};
    if (bias) args[DNNL_ARG_BIAS] = memory(memory::desc({1, n}, memory::data_type::f32, Tag::ab), e.engine,
                                           const_cast<float *>(bias));
    c.prim.execute(e.stream, args);
    e.stream.wait();
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

struct DnnlProduct::State {
  dnnl::matmul prim;
  memory a, y;
  std::unordered_map<int, memory> args;
};

bool DnnlProduct::prepare(int64_t m, int64_t k, int64_t n, const float *w, bool transposed,
                          const std::shared_ptr<const Tensor> &weights) {
  s_.reset();
  if (m <= 0 || k <= 0 || n <= 0 || !weights) return false;
  try {
    Env &e = env();
    const auto &c = matmulEntry(m, k, n, w, transposed, weights, false, false);
    auto s = std::make_shared<State>();
    s->prim = c.prim; // handles: the primitive and the packed weights live while this does
    s->a = memory(memory::desc({m, k}, memory::data_type::f32, Tag::ab), e.engine, nullptr);
    s->y = memory(memory::desc({m, n}, memory::data_type::f32, Tag::ab), e.engine, nullptr);
    s->args = {{DNNL_ARG_SRC, s->a}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, s->y}};
    s_ = std::move(s);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

void DnnlProduct::run(const float *a, float *y) const {
  Env &e = env();
  s_->a.set_data_handle(const_cast<float *>(a));
  s_->y.set_data_handle(y);
  s_->prim.execute(e.stream, s_->args);
  e.stream.wait();
}

bool dnnlEltwise(EltKind kind, const float *x, float *y, int64_t count) {
  if (count <= 0) return false;
  try {
    Env &e = env();
    memory::desc d({count}, memory::data_type::f32, Tag::a);
    std::vector<int64_t> key{int64_t(kind), count, threads()};
    const auto &p = findOrMake(eltCache, key, [&] {
      auto algo = kind == EltKind::Sigmoid  ? dnnl::algorithm::eltwise_logistic
                  : kind == EltKind::Tanh   ? dnnl::algorithm::eltwise_tanh
                  : kind == EltKind::GeluErf ? dnnl::algorithm::eltwise_gelu_erf
                                            : dnnl::algorithm::eltwise_exp;
      dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, algo, d, 0.f, 0.f);
      return Primitive<dnnl::eltwise_forward>(dnnl::eltwise_forward::primitive_desc(desc, e.engine));
    });
    p.prim.execute(e.stream, {{DNNL_ARG_SRC, memory(d, e.engine, const_cast<float *>(x))},
                                       {DNNL_ARG_DST, memory(d, e.engine, y)}});
    e.stream.wait();
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

void setDnnlThreads(int threads) { omp_set_num_threads(std::max(1, threads)); }
bool dnnlAvailable() { return true; }

int64_t dnnlChannelBlock() {
  // Asked of oneDNN once: whether its convolution of 16-channel blocks is a compiled kernel here
  // (AVX-512 machines) or only its reference one (AVX2 machines run blocks of 8).
  static const int64_t block = [] {
    try {
      Env &e = env();
      memory::desc x({1, 32, 8, 8}, memory::data_type::f32, Tag::nChw16c);
      memory::desc w({32, 32, 3, 3}, memory::data_type::f32, Tag::any);
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x,
                                           w, x, {1, 1}, {0, 0}, {1, 1}, {1, 1});
      dnnl::convolution_forward::primitive_desc pd(desc, e.engine);
      return std::string(pd.impl_info_str()).rfind("ref", 0) == 0 ? int64_t(8) : int64_t(16);
    } catch (const dnnl::error &) {
      return int64_t(8);
    }
  }();
  return block;
}

const char *dnnlBackend() {
  static const std::string name = [] {
    const dnnl_version_t *v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }();
  return name.c_str();
}

#else

bool dnnlConv(const WindowGeometry &, const float *, const float *, const std::shared_ptr<const Tensor> &,
              bool, const float *, float *, PostOp, const float *) {
  return false;
}
bool dnnlDeconv(const WindowGeometry &, const float *, const float *, const std::shared_ptr<const Tensor> &, bool,
                const float *, float *) {
  return false;
}
bool dnnlPool(const WindowGeometry &, PoolKind, const float *, float *) { return false; }
bool dnnlMatMul(int64_t, int64_t, int64_t, const float *, const float *, bool,
                const std::shared_ptr<const Tensor> &, const float *, float *, bool) {
  return false;
}
struct DnnlProduct::State {};
bool DnnlProduct::prepare(int64_t, int64_t, int64_t, const float *, bool, const std::shared_ptr<const Tensor> &) {
  return false;
}
void DnnlProduct::run(const float *, float *) const {}
bool dnnlEltwise(EltKind, const float *, float *, int64_t) { return false; }
void setDnnlThreads(int) {}
bool dnnlAvailable() { return false; }
int64_t dnnlChannelBlock() { return 16; }
const char *dnnlBackend() { return "none"; }

#endif

} // namespace sf::eval::detail
