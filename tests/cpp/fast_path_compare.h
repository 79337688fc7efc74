// The fast path of a scanner against its full path on one source, for
// tests/cpp/scan_fast_path_test.cc (Python) and scan_fast_path_cpp_test.cc (C++).
#ifndef ANYDEV_TESTS_CPP_FAST_PATH_COMPARE_H_
#define ANYDEV_TESTS_CPP_FAST_PATH_COMPARE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "anydev/scan.h"
#include "internal.h"

namespace anydev::scan::testing {

// Everything a scan reports, one line each: findings (rule, kind, lines and
// columns, byte span, call end, symbol, text), errors and the noqa flag.
inline std::string Describe(const RuleSet& rules, const FileResult& r) {
  std::string out;
  for (const Finding& f : r.findings) {
    out += rules.rules()[static_cast<size_t>(f.rule)].code + " " + RefKindName(f.kind) + " " +
           std::to_string(f.line) + ":" + std::to_string(f.column) + "-" +
           std::to_string(f.end_line) + ":" + std::to_string(f.end_column) + " [" +
           std::to_string(f.start) + "," + std::to_string(f.end) + "," +
           std::to_string(f.call_end) + "] " + std::string(f.symbol) + " " +
           std::string(f.text) + "\n";
  }
  for (const FileError& e : r.errors) out += "error " + std::to_string(e.line) + " " + e.message + "\n";
  for (const NoqaDirective& d : r.noqa) {
    out += "noqa " + std::to_string(d.line) + (d.all ? " all" : "");
    for (const std::string& c : d.codes) out += " " + c;
    out += "\n";
  }
  if (r.noqa_fallback) out += "noqa fallback\n";
  return out;
}

// Scans `src` both ways, expects the same report; returns the fast path's and
// says in *fast_taken whether the fast path took the file.
inline std::string BothPaths(const RuleSet& rules, Language language, const std::string& src,
                             bool* fast_taken) {
  internal::SetFastPathForTesting(0);
  const std::string full = Describe(rules, ScanSource(rules, language, src));
  internal::SetFastPathForTesting(1);
  const uint64_t before = internal::FastPathFilesForTesting();
  const std::string fast = Describe(rules, ScanSource(rules, language, src));
  if (fast_taken) *fast_taken = internal::FastPathFilesForTesting() > before;
  internal::SetFastPathForTesting(-1);
  EXPECT_EQ(fast, full) << "source:\n" << src;
  return fast;
}

// The lines joined, each ended by `nl`.
inline std::string Lines(std::initializer_list<const char*> lines, const char* nl = "\n") {
  std::string s;
  for (const char* l : lines) s += std::string(l) + nl;
  return s;
}

// NeedleSearch::Next against a plain search (PlainNext) of every offset: from
// each `from` (every one of the first 140, then every 7th), the next 400
// matches, as the scanners walk them; `end` (SIZE_MAX: the text's end) cuts
// the search, the bytes after it being real text, not padding. For
// scan_fast_path_test.cc and scan_fast_path_cpp_test.cc.
inline size_t PlainNext(const std::vector<std::pair<std::string, bool>>& needles,
                        const std::string& s, size_t begin, size_t from, size_t end) {
  for (size_t i = from; i < end; ++i) {
    for (const auto& [n, word] : needles) {
      if (i + n.size() > end || s.compare(i, n.size(), n) != 0) continue;
      if (word && ((i > begin && internal::IsIdentChar(static_cast<unsigned char>(s[i - 1]))) ||
                   internal::IsIdentChar(static_cast<unsigned char>(s[i + n.size()])))) {
        continue;
      }
      return i;
    }
  }
  return end;
}

// `search` (built) against PlainNext over `needles`, from every offset.
inline void CheckBuiltSearch(const internal::NeedleSearch& search,
                             const std::vector<std::pair<std::string, bool>>& needles,
                             const std::string& text, size_t begin, size_t end = SIZE_MAX) {
  std::string padded = text;
  padded.append(internal::kPadding, '\0');
  const size_t n = std::min(end, text.size());
  for (size_t from = begin; from <= n; from += (from < 140 ? 1 : 7)) {
    size_t want = from, got = from;
    for (int k = 0; k < 400 && want < n; ++k) {
      want = PlainNext(needles, padded, begin, want, n);
      got = search.Next(padded.data(), begin, got, n);
      ASSERT_EQ(got, want) << "from " << from << " end " << n << " in "
                           << ::testing::PrintToString(text);
      ++want;
      ++got;
    }
  }
}

inline void CheckSearch(const std::vector<std::pair<std::string, bool>>& needles,
                        const std::string& text, size_t begin, size_t end = SIZE_MAX) {
  internal::NeedleSearch search;
  for (const auto& [n, word] : needles) ASSERT_TRUE(search.Add(n, word));
  search.Build();
  CheckBuiltSearch(search, needles, text, begin, end);
}

}  // namespace anydev::scan::testing

#endif  // ANYDEV_TESTS_CPP_FAST_PATH_COMPARE_H_
