// SPDX-License-Identifier: Apache-2.0
// Whether the tests run under AddressSanitizer, which makes C stack frames larger and each
// allocation slower: tests scale their recursion depths and long loops by it.
#pragma once

namespace tl::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace tl::test
