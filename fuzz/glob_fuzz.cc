// Fuzzes the glob and .gitignore matcher: the input is a pattern, a '\n',
// then a path. The automaton (walk.cc, Note [Linear globs]) must agree with
// a plain backtracking reference of git's wildmatch rules on inputs small
// enough for the reference to finish, and never crash or take long on any
// (libFuzzer's -timeout catches a slow one).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "anydev/scan.h"
#include "fuzz_common.h"

namespace {

// The reference: wildmatch with WM_PATHNAME, recursively (exponential at
// worst; only run on short inputs with few stars).
bool ClassMatch(std::string_view g, size_t* gi, unsigned char c, bool* closed) {
  size_t i = *gi;
  bool negate = false;
  if (i < g.size() && (g[i] == '!' || g[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false, first = true;
  while (i < g.size() && (g[i] != ']' || first)) {
    first = false;
    unsigned char lo = static_cast<unsigned char>(g[i]);
    if (lo == '\\' && i + 1 < g.size()) lo = static_cast<unsigned char>(g[++i]);
    unsigned char hi = lo;
    if (i + 2 < g.size() && g[i + 1] == '-' && g[i + 2] != ']') {
      hi = static_cast<unsigned char>(g[i + 2]);
      if (hi == '\\' && i + 3 < g.size()) {
        hi = static_cast<unsigned char>(g[i + 3]);
        ++i;
      }
      i += 2;
    }
    if (c >= lo && c <= hi) matched = true;
    ++i;
  }
  *closed = i < g.size();
  *gi = i + 1;
  return c != '/' && matched != negate;
}

bool Ref(std::string_view g, size_t gi, std::string_view s, size_t si) {
  while (gi < g.size()) {
    const char c = g[gi];
    if (c == '*') {
      const size_t run = gi;
      while (gi < g.size() && g[gi] == '*') ++gi;
      const bool seg_start = run == 0 || g[run - 1] == '/';
      if (gi - run >= 2 && seg_start && (gi == g.size() || g[gi] == '/')) {
        if (gi == g.size()) return true;
        // "**/": zero or more whole folders.
        for (size_t k = si;; ++k) {
          if ((k == si || s[k - 1] == '/') && Ref(g, gi + 1, s, k)) return true;
          if (k >= s.size()) return false;
        }
      }
      for (size_t k = si;; ++k) {
        if (Ref(g, gi, s, k)) return true;
        if (k >= s.size() || s[k] == '/') return false;
      }
    }
    if (si >= s.size()) return false;
    if (c == '?') {
      if (s[si] == '/') return false;
      ++gi, ++si;
      continue;
    }
    if (c == '[') {
      size_t end = gi + 1;
      bool closed = false;
      const bool m = ClassMatch(g, &end, static_cast<unsigned char>(s[si]), &closed);
      // An unclosed class is no literal '[': git's wildmatch gives up on the
      // whole pattern (WM_ABORT_ALL), so it matches nothing. (`[ab` in a
      // .gitignore ignores no file named `[ab`; check with git check-ignore.)
      if (!closed) return false;
      if (!m) return false;
      gi = end;
      ++si;
      continue;
    }
    char lit = c;
    if (c == '\\') {
      if (gi + 1 == g.size()) return false;
      lit = g[++gi];
    }
    if (s[si] != lit) return false;
    ++gi, ++si;
  }
  return si == s.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return 0;
  const std::string_view glob = in.substr(0, nl), path = in.substr(nl + 1);
  const bool ours = anydev::scan::GlobMatch(glob, path);
  size_t stars = 0;
  for (char c : glob) stars += c == '*';
  if (glob.size() <= 24 && path.size() <= 24 && stars <= 4) {
    FUZZ_CHECK(ours == Ref(glob, 0, path, 0));
  }
  anydev::scan::IgnoreList list;
  list.AddLine(glob, "/r");
  const int m = list.Match(std::string("/r/") + std::string(path), (size & 1) != 0);
  FUZZ_CHECK(m >= -1 && m <= 1);
  return 0;
}
