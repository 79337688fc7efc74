// The prefilter: before a file is lexed, a vectorised search for the few
// byte strings (needles) one of which every finding must contain. A file
// without any is not lexed at all (Note [Needles]).
//
// Note [Needles]: the lexers build every qualified name they match from the
// bytes of identifier tokens of the file itself (imports, aliases, chains,
// namespaces), so each component of a matched spelling occurs verbatim in a
// file with a finding. One component per spelling is therefore enough: the
// RuleSet picks, for each spelling of a rule that can report, its component
// shared by the most spellings ("cuda" for torch.cuda.*), so the set stays a
// handful of strings. A rule that matches something else (a string literal,
// say) gives its own needles in Rule::needles. A file without a needle can
// have no finding, and a lexical error in it hides none, so it is neither
// lexed nor reported for one; what is wrong with its bytes (NUL, invalid
// UTF-8, size) still is.
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal.h"

namespace anydev::scan::internal {

NeedleSet::NeedleSet(std::vector<std::string> needles) {
  // Drop a needle that contains another (the shorter one is found first),
  // and duplicates; an empty needle matches everything.
  for (const std::string& n : needles) {
    if (n.empty()) {
      always_ = true;
      needles_.clear();
      return;
    }
  }
  for (size_t i = 0; i < needles.size(); ++i) {
    bool redundant = false;
    for (size_t j = 0; j < needles.size() && !redundant; ++j) {
      if (i == j) continue;
      if (needles[j] == needles[i]) redundant = j < i;
      else redundant = needles[i].find(needles[j]) != std::string::npos;
    }
    if (!redundant) needles_.push_back(needles[i]);
  }
  min_len_ = needles_.empty() ? 0 : SIZE_MAX;
  max_len_ = 0;
  for (const std::string& n : needles_) {
    min_len_ = std::min(min_len_, n.size());
    max_len_ = std::max(max_len_, n.size());
  }
}

bool NeedleSet::FoundIn(const char* p, size_t n) const {
  if (always_) return true;
  if (needles_.empty() || n < min_len_) return false;
  size_t i = 0;
#if defined(__SSE2__)
  // For each needle, 16 positions at a time: where both its first and its
  // last byte are in place, compare the rest.
  const size_t k = needles_.size() < kMaxVector ? needles_.size() : 0;
  __m128i first[kMaxVector], last[kMaxVector];
  for (size_t j = 0; j < k; ++j) {
    first[j] = _mm_set1_epi8(needles_[j][0]);
    last[j] = _mm_set1_epi8(needles_[j].back());
  }
  if (k != 0) {
    for (; i + max_len_ - 1 + 16 <= n; i += 16) {
      const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      for (size_t j = 0; j < k; ++j) {
        const size_t len = needles_[j].size();
        const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + len - 1));
        unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(block, first[j]), _mm_cmpeq_epi8(tail, last[j]))));
        while (mask != 0) {
          const unsigned bit = static_cast<unsigned>(__builtin_ctz(mask));
          if (len <= 2 || std::memcmp(p + i + bit + 1, needles_[j].data() + 1, len - 2) == 0) {
            return true;
          }
          mask &= mask - 1;
        }
      }
    }
  }
#endif
  // The rest (or everything, without SSE2): memmem per needle.
  if (i >= n) return false;
  // (The vector loop has tried every start before i.)
  for (const std::string& needle : needles_) {
    if (memmem(p + i, n - i, needle.data(), needle.size()) != nullptr) return true;
  }
  return false;
}

}  // namespace anydev::scan::internal
