// Test helper: how much work the heavier tests do. Sanitizer builds (Debug, ASan + UBSan, as in
// CI) run the same checks on fewer inputs so that the suite stays fast there too.
#pragma once

#include <cstddef>

namespace sf::onnx::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

/// Tensors with more values than this are not decoded by the cross-check.
inline constexpr size_t kCrossCheckDecodeLimit = kUnderSanitizer ? (1 << 12) : (1 << 20);
/// Mutants per seed model in the byte-flip test.
inline constexpr int kFlipsPerSeed = kUnderSanitizer ? 600 : 5000;
/// dev_models larger than this are left to the loader benchmark.
inline constexpr size_t kDevModelMaxBytes = kUnderSanitizer ? (16u << 20) : (64u << 20);

} // namespace sf::onnx::test
