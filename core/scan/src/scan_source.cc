// ScanSource: what happens to one file's bytes. Checks that they are text
// (no NUL, not UTF-16, valid UTF-8 where the language needs it), runs the
// language's scanner, drops what follows an error and what a suppression
// comment covers, and turns byte offsets into lines and columns.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "anydev/scan.h"
#include "internal.h"

namespace anydev::scan {
namespace internal {

namespace {

// Note [Comment markers in one pass]: most comments hold neither a `noqa`
// nor an `anydev:` marker, and are short (about 110 bytes a block comment,
// 45 a line comment on the generated GPU tree), so what a comment cost was
// the three searches' calls (a memchr for 'q', one for 'Q', one for ':',
// with string_view::find around each: about 330 instructions a comment, 1.6M
// of the 53M on the C/C++ files of the 20 MB tree), not their bytes. One
// pass, 16 bytes a step (SSE2), marks the bytes that may end `noq` ('q' or
// 'Q') or `anydev:` (a ':' after a 'v': most comments' ':' are a `::`), and
// each mark is checked as the searches checked their hits (the first
// `anydev:`; a `noqa` anywhere). It reads up to 15 bytes past the comment:
// the lexers' input is followed by kPadding bytes.
//
// Returns the offset in `text` of the first `anydev:` (kNone: none), and
// sets *noqa where a `noqa` (any case) is in it.
size_t CommentMarks(std::string_view text, bool* noqa) {
  const size_t n = text.size();
  const char* const t = text.data();
  size_t at = std::string_view::npos;
#if defined(__SSE2__)
  const __m128i lower = _mm_set1_epi8(0x20);
  const __m128i qs = _mm_set1_epi8('q');
  const __m128i colons = _mm_set1_epi8(':');
  const __m128i vs = _mm_set1_epi8('v');
  // (From 1: text[0] is the comment's '/' or '#', and a ':' after a 'v'.)
  for (size_t i = 1; i < n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + i));
    const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + i - 1));
    uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(_mm_or_si128(v, lower), qs),
                     _mm_and_si128(_mm_cmpeq_epi8(v, colons), _mm_cmpeq_epi8(before, vs)))));
    if (n - i < 16) m &= (1u << (n - i)) - 1;
    for (; m != 0; m &= m - 1) {
      const size_t c = i + static_cast<size_t>(__builtin_ctz(m));
      if (t[c] == ':') {
        if (at == std::string_view::npos && c >= 6 && std::memcmp(t + c - 6, "anydev", 6) == 0) {
          at = c - 6;
          if (*noqa) return at;
        }
      } else if (!*noqa && c >= 2 && c + 1 < n && (t[c - 2] | 0x20) == 'n' &&
                 (t[c - 1] | 0x20) == 'o' && (t[c + 1] | 0x20) == 'a') {
        *noqa = true;
      }
    }
  }
  return at;
#else
  // (One memchr pass per case: find_first_of("qQ") costs a call a byte.)
  for (const char c : {'q', 'Q'}) {
    for (size_t q = text.find(c, 2); !*noqa && q != std::string_view::npos && q + 1 < n;
         q = text.find(c, q + 1)) {
      if ((text[q - 2] | 0x20) == 'n' && (text[q - 1] | 0x20) == 'o' &&
          (text[q + 1] | 0x20) == 'a') {
        *noqa = true;
      }
    }
  }
  // Look for the ':' first: it is rarer in comments than 'a'.
  for (size_t c = text.find(':'); c != std::string_view::npos; c = text.find(':', c + 1)) {
    if (c >= 6 && std::memcmp(t + c - 6, "anydev", 6) == 0) {
      at = c - 6;
      break;
    }
  }
  return at;
#endif
}

// The suppression of the `anydev:` at `at` in the comment `text` (starting
// at `offset`), if the marker is one.
void Suppress(std::string_view text, uint32_t offset, size_t at, LexOutput* out) {
  size_t p = at + 7;
  while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
  if (text.compare(p, 6, "ignore") != 0) return;
  p += 6;
  std::string_view codes;
  if (p < text.size() && text[p] == '[') {
    const size_t close = text.find(']', p + 1);
    if (close == std::string_view::npos) return;
    codes = text.substr(p + 1, close - p - 1);
    if (codes.find_first_not_of(" \t,") == std::string_view::npos) return;  // `ignore[]`
  } else if (p < text.size() && IsIdentChar(static_cast<unsigned char>(text[p]))) {
    return;  // `ignored`, not the marker
  }
  out->suppressions.push_back(Suppression{static_cast<uint32_t>(offset + at), codes});
}

#if defined(__SSE2__)
// What the fused comment scans (Note [Comments in one pass with their end])
// found so far: the first `anydev:` (its offset in the comment), a `noqa`.
struct Marks {
  size_t at = std::string_view::npos;
  bool noqa = false;
};

// The candidates of m (bit j: s[base + j] is a 'q'/'Q', or a ':' after a
// 'v') in the comment that starts at `start`, checked as CommentMarks
// checks them. (A candidate's next byte may be the comment's end, which
// is no 'a': a '\n', a '\r', a '*' or the padding's NUL.)
inline void CheckMarks(const char* s, size_t start, size_t base, uint32_t m, Marks* marks) {
  for (; m != 0; m &= m - 1) {
    const size_t c = base + static_cast<size_t>(__builtin_ctz(m));
    if (s[c] == ':') {
      if (marks->at == std::string_view::npos && c >= start + 6 &&
          std::memcmp(s + c - 6, "anydev", 6) == 0) {
        marks->at = c - 6 - start;
      }
    } else if (!marks->noqa && c >= start + 2 && (s[c - 2] | 0x20) == 'n' &&
               (s[c - 1] | 0x20) == 'o' && (s[c + 1] | 0x20) == 'a') {
      marks->noqa = true;
    }
  }
}

// The candidates among the 16 bytes at s + k, whose byte before is b.
inline uint32_t MarkBits(__m128i v, __m128i b) {
  const __m128i q = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('q'));
  const __m128i colon =
      _mm_and_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), _mm_cmpeq_epi8(b, _mm_set1_epi8('v')));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(q, colon)));
}
#endif

}  // namespace

// Whether `text` holds `nydev` or `NYDEV` (`anydev` in lower, title or upper
// case): the gate of Python's file-level noqa reading (anydev/scan.py's
// drop_noqa), asked here where the bytes are.
inline bool MentionsAnydev(std::string_view text) {
  return text.find("nydev") != std::string_view::npos ||
         text.find("NYDEV") != std::string_view::npos;
}

void NoteComment(std::string_view text, uint32_t offset, LexOutput* out) {
  const size_t at = CommentMarks(text, &out->noqa_comment);
  if (at != std::string_view::npos) Suppress(text, offset, at, out);
}

void NotePythonComment(std::string_view text, uint32_t offset, bool in_field, LexOutput* out) {
  // Each comment that mentions `noqa` is kept (Note [noqa directives]):
  // CommentMarks asks for a `noqa` only until it finds one, so per comment.
  bool noqa = false;
  const size_t at = CommentMarks(text, &noqa);
  if (noqa) {
    out->noqa_comment = true;
    out->noqa.push_back(
        NoqaComment{offset, offset + static_cast<uint32_t>(text.size()), in_field});
  }
  if (at != std::string_view::npos) Suppress(text, offset, at, out);
}

// Note [noqa directives]: ruff's `# noqa` comments, as anydev/_migrate/noqa.py reads
// them (the reference: tests/python/scan/test_noqa_native.py compares the two on
// the fixtures, the development set's files when present and generated edge
// cases). noqa.py found the comments with Python's tokenize in every file
// with findings whose lexed comments mention noqa, and ran a regular
// expression over each, re.IGNORECASE on a str:
//   #\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*)|(?P<colon>:))?
// with finditer: a bare match names every rule, at once; the codes of every
// match with codes are upper-cased and kept in order; a ':' without a code
// names none, and a comment with no bare match and no code is no directive.
// On Megatron-LM that reading was 87% of `anydev scan`'s instructions (a
// file tokenized whole for a comment or two). The lexers see every comment
// on a line with a finding, so the scanner reads the directives itself, on
// those lines only, and drops the findings they name (ScanPadded). What the
// expression means on a str, exactly (Python's own tables, listed by
// tests/python/scan/test_noqa_native.py): `\s` is a whitespace character of
// str.isspace, ASCII's and \x1c-\x1f, U+0085, U+00A0, U+1680,
// U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000; `[A-Za-z]` with
// IGNORECASE is also U+0130, U+0131, U+017F and U+212A (their upper case:
// U+0130, "I", "S", U+212A); `noqa` and `[0-9]` are ASCII only. A
// directive's line is its comment's.
// What tokenize does that the lexers do not model, the file falls back to
// the reading in Python (FileResult::noqa_fallback), so that the result is
// the same on every Python the package supports: where a comment on a
// finding's line mentions noqa and the file has a lexing error (where 3.11's
// tokenize goes on past an unterminated quote, 3.12's stops; every comment
// the lexer read then counts, as noqa.py's gate was any lexed comment), is
// not UTF-8 (a coding declaration: tokenize decodes it; invalid UTF-8:
// tokenize stops at that line, or reads nothing where it is in the first
// two), holds a '\r' that ends no "\r\n" (tokenize's lines end at '\n'
// only), has an indent with a byte other than ' ' (3.12's tokenize stops at
// an inconsistent tab), or where that comment lies in an f-string's
// replacement field (a string to 3.11's tokenize, a comment to 3.12's).
// What it models: tokenize stops at a dedent that matches no enclosing
// indent (IndentationError), and no directive from that line on counts
// (PythonIndents in python_scan.cc finds the line from the skeleton's lines
// or the tokens).
namespace {

// The length of the `\s` character at t[i] (0: none).
size_t NoqaSpace(const unsigned char* t, size_t i, size_t n) {
  const unsigned char c = t[i];
  if (c < 0x80) return (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1C && c <= 0x1F)) ? 1 : 0;
  if (c == 0xC2 && i + 1 < n) return (t[i + 1] == 0x85 || t[i + 1] == 0xA0) ? 2 : 0;
  if (i + 2 >= n) return 0;
  const unsigned char b = t[i + 1], d = t[i + 2];
  if (c == 0xE1) return (b == 0x9A && d == 0x80) ? 3 : 0;
  if (c == 0xE2) {
    if (b == 0x80) return (d <= 0x8A || d == 0xA8 || d == 0xA9 || d == 0xAF) ? 3 : 0;
    return (b == 0x81 && d == 0x9F) ? 3 : 0;
  }
  if (c == 0xE3) return (b == 0x80 && d == 0x80) ? 3 : 0;
  return 0;
}

// The length of the `[A-Za-z]` (IGNORECASE) character at t[i] (0: none);
// appends its upper case to *code.
size_t NoqaLetter(const unsigned char* t, size_t i, size_t n, std::string* code) {
  const unsigned char c = t[i];
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
    code->push_back(static_cast<char>(c & ~0x20));
    return 1;
  }
  if (c == 0xC4 && i + 1 < n && (t[i + 1] == 0xB0 || t[i + 1] == 0xB1)) {
    if (t[i + 1] == 0xB1) code->push_back('I');      // U+0131 dotless i
    else code->append("\xC4\xB0");                  // U+0130: its own upper case
    return 2;
  }
  if (c == 0xC5 && i + 1 < n && t[i + 1] == 0xBF) {  // U+017F long s
    code->push_back('S');
    return 2;
  }
  if (c == 0xE2 && i + 2 < n && t[i + 1] == 0x84 && t[i + 2] == 0xAA) {  // U+212A Kelvin
    code->append("\xE2\x84\xAA");
    return 3;
  }
  return 0;
}

// A code, `[A-Za-z]+[0-9]+`, at t[i]: past it, or 0 where there is none.
size_t NoqaCode(const unsigned char* t, size_t i, size_t n, std::string* code) {
  code->clear();
  size_t k = i;
  for (size_t w; k < n && (w = NoqaLetter(t, k, n, code)) != 0;) k += w;
  if (k == i) return 0;
  const size_t digits = k;
  while (k < n && t[k] >= '0' && t[k] <= '9') code->push_back(static_cast<char>(t[k++]));
  return k == digits ? 0 : k;
}

}  // namespace

bool ParseNoqa(std::string_view comment, NoqaDirective* d) {
  const unsigned char* t = reinterpret_cast<const unsigned char*>(comment.data());
  const size_t n = comment.size();
  d->all = false;
  d->codes.clear();
  bool found = false;
  std::string code;
  for (size_t i = 0;;) {
    const size_t hash = comment.find('#', i);
    if (hash == std::string_view::npos) break;
    size_t k = hash + 1;
    for (size_t w; k < n && (w = NoqaSpace(t, k, n)) != 0;) k += w;
    if (k + 4 > n || (t[k] | 0x20) != 'n' || (t[k + 1] | 0x20) != 'o' ||
        (t[k + 2] | 0x20) != 'q' || (t[k + 3] | 0x20) != 'a') {
      i = hash + 1;  // no match here: the next '#'
      continue;
    }
    k += 4;
    if (k >= n || t[k] != ':') {  // a bare `# noqa`: every rule, whatever else
      d->all = true;
      d->codes.clear();
      return true;
    }
    size_t m = k + 1;
    for (size_t w; m < n && (w = NoqaSpace(t, m, n)) != 0;) m += w;
    size_t end = NoqaCode(t, m, n, &code);
    if (end == 0) {  // `# noqa:` and no code: names nothing
      i = k + 1;
      continue;
    }
    d->codes.push_back(code);
    found = true;
    for (;;) {  // (?:[,\s]+ code)*, backing off a separator run without a code
      size_t p = end;
      for (size_t w; p < n && (w = t[p] == ',' ? 1 : NoqaSpace(t, p, n)) != 0;) p += w;
      if (p == end) break;
      const size_t next = NoqaCode(t, p, n, &code);
      if (next == 0) break;
      d->codes.push_back(code);
      end = next;
    }
    i = end;
  }
  return found;
}

// Note [Comments in one pass with their end]: the C++ lexer found a
// comment's end (a memchr-based find of "*/", eight bytes a step to the
// line's end) and then NoteComment read it again. Here one pass, 16 bytes a
// step (SSE2), reads each 16 bytes and the 16 one byte before (so a
// candidate's byte before, and the '*' before a '/', are in the same lane)
// for both the end and the marks; a block comment's "*/" must not use the
// opening "/*"'s '*'. The noqa flag and the suppression are noted only for
// a comment that ends (an unterminated one is an error, noted nowhere).
// Reads up to 15 bytes past n: the lexers' input is followed by kPadding.
size_t NoteBlockComment(const char* s, size_t start, size_t n, LexOutput* out) {
#if defined(__SSE2__)
  Marks marks;
  marks.noqa = out->noqa_comment;
  const __m128i star = _mm_set1_epi8('*'), slash = _mm_set1_epi8('/');
  for (size_t k = start + 1; k < n; k += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k - 1));
    uint32_t ends = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(b, star), _mm_cmpeq_epi8(v, slash))));
    if (k == start + 1) ends &= ~2u;  // "/*/": the '*' is the opening's
    const uint32_t m = MarkBits(v, b);
    if (ends != 0) {
      const size_t e = k + static_cast<size_t>(__builtin_ctz(ends));  // the closing '/'
      CheckMarks(s, start, k, m & ((1u << (e - k)) - 1), &marks);
      out->noqa_comment = marks.noqa;
      if (marks.at != std::string_view::npos) {
        Suppress(std::string_view(s + start, e + 1 - start), static_cast<uint32_t>(start), marks.at,
                 out);
      }
      return e + 1;
    }
    CheckMarks(s, start, k, m, &marks);
  }
  return std::string_view::npos;
#else
  const size_t close = std::string_view(s + start + 2, n - start - 2).find("*/");
  if (close == std::string_view::npos) return close;
  const size_t end = start + 2 + close + 2;
  NoteComment(std::string_view(s + start, end - start), static_cast<uint32_t>(start), out);
  return end;
#endif
}

size_t NoteLineComment(const char* s, size_t start, size_t n, LexOutput* out) {
  size_t end = n;
#if defined(__SSE2__)
  Marks marks;
  marks.noqa = out->noqa_comment;
  const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
  for (size_t k = start + 1; k < n;) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k - 1));
    const uint32_t nl = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr))));
    const uint32_t m = MarkBits(v, b);
    if (nl == 0) {
      CheckMarks(s, start, k, m, &marks);
      k += 16;
      continue;
    }
    const size_t e = k + static_cast<size_t>(__builtin_ctz(nl));  // (< n: the padding is NULs)
    CheckMarks(s, start, k, m & ((1u << (e - k)) - 1), &marks);
    if (s[e - 1] != '\\') {
      end = e;
      break;
    }
    // A continued line: the comment goes on after the newline.
    k = s[e] == '\r' && e + 1 < n && s[e + 1] == '\n' ? e + 2 : e + 1;
  }
  out->noqa_comment = marks.noqa;
  if (marks.at != std::string_view::npos) {
    Suppress(std::string_view(s + start, end - start), static_cast<uint32_t>(start), marks.at, out);
  }
#else
  for (size_t k = start;; ++k) {
    if (k >= n) break;
    if (s[k] != '\n' && s[k] != '\r') continue;
    if (k > start && s[k - 1] == '\\') {
      if (s[k] == '\r' && k + 1 < n && s[k + 1] == '\n') ++k;
      continue;
    }
    end = k;
    break;
  }
  NoteComment(std::string_view(s + start, end - start), static_cast<uint32_t>(start), out);
#endif
  return end;
}

}  // namespace internal

namespace {

using internal::LexOutput;
using internal::RawFinding;
using internal::Suppression;

constexpr size_t kNone = std::string_view::npos;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ANYDEV_SCAN_CHECK_AVX2 1
// The signed minimum of four blocks' bytes and their bytes xor '\r': not
// positive where one of them is a NUL, a '\r' or over 0x7F (Note [Text check
// without a '\r']).
__attribute__((target("avx2"), always_inline)) inline __m256i Low(__m256i a, __m256i b, __m256i c,
                                                                 __m256i d, __m256i crs) {
  return _mm256_min_epi8(_mm256_min_epi8(_mm256_min_epi8(a, _mm256_xor_si256(a, crs)),
                                         _mm256_min_epi8(b, _mm256_xor_si256(b, crs))),
                         _mm256_min_epi8(_mm256_min_epi8(c, _mm256_xor_si256(c, crs)),
                                         _mm256_min_epi8(d, _mm256_xor_si256(d, crs))));
}

// From i, while the bytes are ASCII without a NUL; returns where it stopped
// and sets *cr when a '\r' was among the bytes passed. Note [Text check
// without a '\r']: 512 bytes a test, then 256 and 128, while there is no
// '\r' either (most files have none): a byte's minimum with itself xor '\r'
// is zero only at a NUL or a '\r', and taken as signed bytes, negative only
// over 0x7F (the xor keeps the top bit), so one signed minimum of a block's
// bytes and their xors says all three: not positive where the block has any
// (23 instructions a 256 bytes; an unsigned minimum for the NUL and the
// '\r' and an or for the top bits took 31; the test and the step, 8, are
// paid once a 512). A block with a '\r' goes on 64 bytes a step, noting it.
__attribute__((target("avx2"))) size_t AsciiRunAvx2(const unsigned char* p, size_t i, size_t n,
                                                    bool* cr) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i crs = _mm256_set1_epi8('\r');
  const __m256i ones = _mm256_set1_epi8(1);
  while (i + 512 <= n) {
    const __m256i* v = reinterpret_cast<const __m256i*>(p + i);
    const __m256i low = _mm256_min_epi8(
        _mm256_min_epi8(Low(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1),
                            _mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 3), crs),
                        Low(_mm256_loadu_si256(v + 4), _mm256_loadu_si256(v + 5),
                            _mm256_loadu_si256(v + 6), _mm256_loadu_si256(v + 7), crs)),
        _mm256_min_epi8(Low(_mm256_loadu_si256(v + 8), _mm256_loadu_si256(v + 9),
                            _mm256_loadu_si256(v + 10), _mm256_loadu_si256(v + 11), crs),
                        Low(_mm256_loadu_si256(v + 12), _mm256_loadu_si256(v + 13),
                            _mm256_loadu_si256(v + 14), _mm256_loadu_si256(v + 15), crs)));
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi8(ones, low)) != 0) break;
    i += 512;
  }
  while (i + 256 <= n) {  // (a test and a step are 6 instructions)
    const __m256i* v = reinterpret_cast<const __m256i*>(p + i);
    const __m256i a = _mm256_loadu_si256(v), b = _mm256_loadu_si256(v + 1);
    const __m256i c = _mm256_loadu_si256(v + 2), d = _mm256_loadu_si256(v + 3);
    const __m256i e = _mm256_loadu_si256(v + 4), f = _mm256_loadu_si256(v + 5);
    const __m256i g = _mm256_loadu_si256(v + 6), h = _mm256_loadu_si256(v + 7);
    const __m256i low = _mm256_min_epi8(Low(a, b, c, d, crs), Low(e, f, g, h, crs));
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi8(ones, low)) != 0) break;
    i += 256;
  }
  while (i + 128 <= n) {
    const __m256i* v = reinterpret_cast<const __m256i*>(p + i);
    const __m256i a = _mm256_loadu_si256(v), b = _mm256_loadu_si256(v + 1);
    const __m256i c = _mm256_loadu_si256(v + 2), d = _mm256_loadu_si256(v + 3);
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi8(ones, Low(a, b, c, d, crs))) != 0) break;
    i += 128;
  }
  __m256i seen = zero;
  while (i + 64 <= n) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
    // A high bit in either, or a zero byte in their unsigned minimum.
    const __m256i bad = _mm256_or_si256(_mm256_or_si256(a, b),
                                        _mm256_cmpeq_epi8(_mm256_min_epu8(a, b), zero));
    if (_mm256_movemask_epi8(bad) != 0) break;
    seen = _mm256_or_si256(seen, _mm256_or_si256(_mm256_cmpeq_epi8(a, crs),
                                                 _mm256_cmpeq_epi8(b, crs)));
    i += 64;
  }
  if (!_mm256_testz_si256(seen, seen)) *cr = true;
  return i;
}
#endif

// Finds the first NUL byte and the first byte that does not start a valid
// UTF-8 sequence, from `begin`, and whether there is a '\r' and a byte over
// 0x7F from there on (known only when there is no NUL: the scan stops at the
// first). ASCII goes 64 bytes at a time with AVX2 (32 with SSE2, else 8);
// only the stretches with a high byte are decoded byte by byte.
void CheckText(std::string_view s, size_t begin, size_t* nul, size_t* invalid, bool* has_cr,
               bool* has_high) {
  *nul = kNone;
  *invalid = kNone;
  *has_cr = false;
  *has_high = false;
  bool cr = false;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = begin;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kCrs = 0x0D0D0D0D0D0D0D0DULL;
#if defined(ANYDEV_SCAN_CHECK_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2");
#endif
  while (i < n) {
#if defined(ANYDEV_SCAN_CHECK_AVX2)
    if (avx2) i = AsciiRunAvx2(p, i, n, &cr);
#endif
#if defined(__SSE2__)
    // 32 bytes at a time: no byte with the high bit set, none zero.
    const __m128i zero = _mm_setzero_si128();
    const __m128i crs = _mm_set1_epi8('\r');
    while (i + 32 <= n) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16));
      const __m128i bad = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(_mm_cmpeq_epi8(a, zero),
                                                                        _mm_cmpeq_epi8(b, zero)));
      if (_mm_movemask_epi8(bad) != 0) break;
      if (_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(a, crs), _mm_cmpeq_epi8(b, crs))) != 0) {
        cr = true;
      }
      i += 32;
    }
    if (i >= n) break;
#endif
    if (i + 8 <= n) {
      uint64_t v;
      std::memcpy(&v, p + i, 8);
      if (((v & kHigh) | ((v - kOnes) & ~v & kHigh)) == 0) {
        const uint64_t x = v ^ kCrs;  // a zero byte where v has '\r'
        if (((x - kOnes) & ~x & kHigh) != 0) cr = true;
        i += 8;
        continue;
      }
    }
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c == 0 && *nul == kNone) {
        *nul = i;
        return;  // binary: nothing else matters
      }
      if (c == '\r') cr = true;
      ++i;
      continue;
    }
    *has_high = true;
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = len != 0 && i + len <= n;
    if (ok && (p[i + 1] < lo || p[i + 1] > hi)) ok = false;
    for (size_t k = 2; ok && k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) ok = false;
    }
    if (!ok) {
      if (*invalid == kNone) *invalid = i;
      ++i;
      continue;
    }
    i += len;
  }
  *has_cr = cr;
}

// A PEP 263 coding declaration in the first two lines naming an encoding
// other than UTF-8.
// (A line's first byte that is no space decides: a '#' makes it a comment,
// which may be the declaration; anything else ends the search, which does
// not look for the line's end. Most files' first line is a comment of 70
// or so bytes, whose end is found by memchr, not byte by byte.)
bool HasNonUtf8Cookie(std::string_view s, size_t begin) {
  size_t p = begin;
  const size_t n = s.size();
  for (int line = 0; line < 2 && p < n; ++line) {
    size_t first = p;
    while (first < n && (s[first] == ' ' || s[first] == '\t' || s[first] == '\f')) ++first;
    if (first < n && s[first] != '#' && s[first] != '\n' && s[first] != '\r') {
      return false;  // the declaration must come before any code
    }
    // The line's end: its first '\n' or '\r'.
    const void* lf = std::memchr(s.data() + first, '\n', n - first);
    size_t e = lf != nullptr ? static_cast<size_t>(static_cast<const char*>(lf) - s.data()) : n;
    if (const void* cr = std::memchr(s.data() + first, '\r', e - first)) {
      e = static_cast<size_t>(static_cast<const char*>(cr) - s.data());
    }
    const std::string_view l = s.substr(p, e - p);
    const size_t hash = first - p;
    if (first < e) {  // (else a blank line)
      const size_t c = l.find("coding", hash);
      if (c != kNone && c + 6 < l.size() && (l[c + 6] == ':' || l[c + 6] == '=')) {
        size_t b = c + 7;
        while (b < l.size() && (l[b] == ' ' || l[b] == '\t')) ++b;
        std::string name;
        while (b < l.size() && (internal::IsIdentChar(static_cast<unsigned char>(l[b])) ||
                                l[b] == '-' || l[b] == '.')) {
          char ch = l[b++];
          if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
          if (ch == '_') ch = '-';
          name += ch;
        }
        return !(name == "utf-8" || name == "utf8" || name == "utf-8-sig" ||
                 name.rfind("utf-8-", 0) == 0);
      }
    }
    p = e < n ? e + (s[e] == '\r' && e + 1 < n && s[e + 1] == '\n' ? 2 : 1) : e;
  }
  return false;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ANYDEV_SCAN_COUNT_AVX2 1
// The '\n' in p[0, n) (n > 0) 128 bytes at a time, then 32, then the last
// n % 32 as the top bits of a mask of the 32 bytes that end at p + n (none
// past the range; those before p must be readable: n plus the bytes
// readable before p is at least 32); one call per span between two
// findings, most of them short, where the SSE2, 8-byte and byte loops of
// CountNewlines took the tail.
__attribute__((target("avx2,popcnt"))) size_t CountNewlinesAvx2(const char* p, size_t n) {
  const __m256i nl = _mm256_set1_epi8('\n');
  if (n <= 32) {  // (most spans: a finding's own, the next finding on its line)
    const uint32_t last = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + n - 32)), nl)));
    return n == 0 ? 0 : static_cast<size_t>(__builtin_popcount(last >> (32 - n)));
  }
  const __m256i zero = _mm256_setzero_si256();
  __m256i total = zero;
  size_t i = 0;
  // Note [Newlines 256 bytes a round]: each '\n' subtracts -1 from a byte
  // counter, eight blocks' compares summed first; 31 rounds of 8 stay below
  // 256 before the counters are summed (psadbw). The rounds of a run are
  // counted before it, so the loop tests one pointer: 10.5 instructions a
  // 128 bytes, where four blocks a round took 15 (GCC copied the counter
  // and tested both the round count and the end).
  while (i + 256 <= n) {
    const size_t rounds = std::min<size_t>((n - i) / 256, 31);
    const __m256i* v = reinterpret_cast<const __m256i*>(p + i);
    const __m256i* const end = v + 8 * rounds;
    __m256i acc = zero;
    for (; v != end; v += 8) {
      const __m256i a = _mm256_add_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(v), nl),
                                        _mm256_cmpeq_epi8(_mm256_loadu_si256(v + 1), nl));
      const __m256i b = _mm256_add_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(v + 2), nl),
                                        _mm256_cmpeq_epi8(_mm256_loadu_si256(v + 3), nl));
      const __m256i c = _mm256_add_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(v + 4), nl),
                                        _mm256_cmpeq_epi8(_mm256_loadu_si256(v + 5), nl));
      const __m256i d = _mm256_add_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(v + 6), nl),
                                        _mm256_cmpeq_epi8(_mm256_loadu_si256(v + 7), nl));
      acc = _mm256_sub_epi8(acc, _mm256_add_epi8(_mm256_add_epi8(a, b), _mm256_add_epi8(c, d)));
    }
    i += 256 * rounds;
    total = _mm256_add_epi64(total, _mm256_sad_epu8(acc, zero));
  }
  // Then 32 at a time (at most 7 rounds: no counter can wrap).
  __m256i acc = zero;
  for (; i + 32 <= n; i += 32) {
    acc = _mm256_sub_epi8(
        acc, _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), nl));
  }
  total = _mm256_add_epi64(total, _mm256_sad_epu8(acc, zero));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  size_t count = static_cast<size_t>(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
  if (i < n) {  // the last n - i (< 32): the top bits of the last 32 bytes' mask
    const uint32_t last = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + n - 32)), nl)));
    count += static_cast<size_t>(__builtin_popcount(last >> (32 - (n - i))));
  }
  return count;
}

// Bit k: at[k] is a UTF-8 continuation byte (10xxxxxx).
__attribute__((target("avx2"))) inline uint32_t Continuations(const char* at) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
      _mm256_and_si256(v, _mm256_set1_epi8(static_cast<char>(0xC0))),
      _mm256_set1_epi8(static_cast<char>(0x80)))));
}

// The bytes of p[0, n) (n > 0) that start a UTF-8 sequence (are not
// 10xxxxxx), 32 at a time and the rest from the 32 that end at p + n, as
// CountNewlinesAvx2 counts (the same bytes must be readable).
__attribute__((target("avx2,popcnt"))) size_t CountCodePointsAvx2(const char* p, size_t n) {
  size_t count = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    count += 32 - static_cast<size_t>(__builtin_popcount(Continuations(p + i)));
  }
  if (i < n) {
    const size_t rest = n - i;
    const uint32_t last = Continuations(p + n - 32) >> (32 - rest);
    count += rest - static_cast<size_t>(__builtin_popcount(last));
  }
  return count;
}
#endif

// Returns the number of '\n' in p[0, n): 128 and 32 bytes at a time with AVX2
// where the CPU has it, else 16 (SSE2) and eight at a time. `before`: the
// bytes readable before p (the AVX2 path reads back from p + n - 32).
size_t CountNewlines(const char* p, size_t n, size_t before) {
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  constexpr uint64_t kNewlines = 0x0A0A0A0A0A0A0A0AULL;
  size_t count = 0, i = 0;
#if defined(ANYDEV_SCAN_COUNT_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (n == 0) return 0;
  if (avx2 && n + before >= 32) return CountNewlinesAvx2(p, n);
#else
  (void)before;
#endif
#if defined(__SSE2__)
  // 16 at a time: each '\n' subtracts -1 from a byte counter, summed (psadbw)
  // before any counter can wrap.
  const __m128i nl = _mm_set1_epi8('\n');
  while (i + 16 <= n) {
    __m128i acc = _mm_setzero_si128();
    for (int k = 0; k < 255 && i + 16 <= n; ++k, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    count += static_cast<size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<size_t>(_mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    const uint64_t x = v ^ kNewlines;  // a zero byte where p had '\n'
    // The high bit of each byte of `zero` is set exactly where x is zero.
    const uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    // One per matching byte, summed by a multiply (no popcnt in baseline x86-64).
    count += static_cast<size_t>(((zero >> 7) * 0x0101010101010101ULL) >> 56);
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

// Returns the number of bytes of p[0, n) that start a UTF-8 sequence (are not
// 10xxxxxx): with AVX2 as CountCodePointsAvx2 (`before` as for
// CountNewlines), else eight at a time.
size_t CountCodePoints(const char* p, size_t n, size_t before) {
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
#if defined(ANYDEV_SCAN_COUNT_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (n == 0) return 0;
  if (avx2 && n + before >= 32) return CountCodePointsAvx2(p, n);
#else
  (void)before;
#endif
  size_t count = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    // A continuation byte has bit 7 set and bit 6 clear.
    const uint64_t cont = v & ~(v << 1) & kHigh;
    count += 8 - static_cast<size_t>(((cont >> 7) * 0x0101010101010101ULL) >> 56);
  }
  for (; i < n; ++i) count += (static_cast<unsigned char>(p[i]) & 0xC0) != 0x80;
  return count;
}

// Maps byte offsets to lines and columns, moving forward (it restarts for an
// offset behind it).
class LineMap {
 public:
  // `has_cr`: whether s holds a '\r' (then lines are counted byte by byte).
  LineMap(std::string_view s, size_t begin, bool bytes, bool has_cr)
      : s_(s), begin_(begin), bytes_(bytes), pos_(begin), line_start_(begin), has_cr_(has_cr) {
#if defined(ANYDEV_SCAN_COUNT_AVX2)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    avx2_ = avx2;
#endif
  }

  void Seek(size_t off) {
    if (off < pos_) {
      if (off >= line_start_) {  // behind, on the same line: nothing to recount
        pos_ = off;
        return;
      }
      pos_ = line_start_ = begin_;
      line_ = 1;
    }
    const char* p = s_.data();
    if (!has_cr_) {  // the common case: only '\n' ends lines; count them in bulk
      if (off > pos_) {
        const char* b = p + pos_;
        const size_t n = off - pos_;
#if defined(ANYDEV_SCAN_COUNT_AVX2)
        // (CountNewlines's own test, inlined: a call and a guarded static
        // a finding, 24 instructions, where the count is often 100.)
        const size_t lines = avx2_ && n + pos_ >= 32 ? CountNewlinesAvx2(b, n)
                                                     : CountNewlines(b, n, pos_);
#else
        const size_t lines = CountNewlines(b, n, pos_);
#endif
        if (lines != 0) {
          line_ += static_cast<int>(lines);
          const void* last = memrchr(b, '\n', n);
          line_start_ = static_cast<size_t>(static_cast<const char*>(last) - p) + 1;
        }
        pos_ = off;
      }
      return;
    }
    while (pos_ < off) {
      const char c = p[pos_++];
      if (c == '\n' || (c == '\r' && (pos_ >= s_.size() || p[pos_] != '\n'))) {
        ++line_;
        line_start_ = pos_;
      }
    }
  }
  int Line(size_t off) {
    Seek(off);
    return line_;
  }
  // Returns the 1-based column of `off` (code points since the line start).
  // Counts on from the last column asked on the same line, so many findings
  // on one long line cost the line's length once, not once each.
  int Column(size_t off) {
    Seek(off);
    if (bytes_) return static_cast<int>(off - line_start_) + 1;
    if (col_line_ != line_start_ || off < col_pos_) {
      col_line_ = col_pos_ = line_start_;
      col_ = 1;
    }
    col_ += static_cast<int>(CountCodePoints(s_.data() + col_pos_, off - col_pos_, col_pos_));
    col_pos_ = off;
    return col_;
  }

 private:
  std::string_view s_;
  size_t begin_;
  bool bytes_;
  size_t pos_;
  size_t line_start_;
  bool has_cr_;
  bool avx2_ = false;
  int line_ = 1;
  size_t col_line_ = kNone;  // the line start col_pos_ is on
  size_t col_pos_ = 0;
  int col_ = 1;  // the column of col_pos_
};

bool CodeMatches(std::string_view code, std::string_view list) {
  size_t p = 0;
  while (p <= list.size()) {
    size_t e = list.find(',', p);
    if (e == kNone) e = list.size();
    std::string_view item = list.substr(p, e - p);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty() && code.substr(0, item.size()) == item) return true;
    p = e + 1;
  }
  return false;
}

// What ScanPadded keeps from file to file on each thread (Note
// [Thread-local scratch] in internal.h): the lexer's output, whose vectors
// grew again for every file (1,009 reallocations on the 20 MB GPU tree), and
// SortByStart's buffer.
struct PaddedScratch {
  LexOutput out;
  std::vector<RawFinding> merged;
};

// Empties the lexer's output for the next file, keeping its vectors' memory
// unless one huge file made them take more than 2 MiB.
void Reset(LexOutput* out) {
  constexpr size_t kKeep = (size_t{2} << 20) / sizeof(RawFinding);
  if (out->findings.capacity() > kKeep) out->findings = {};
  if (out->suppressions.capacity() > kKeep) out->suppressions = {};
  out->findings.clear();
  out->suppressions.clear();
  out->noqa_comment = false;
  out->noqa.clear();
  out->indent_error = 0xFFFFFFFFu;
  out->odd_indent = false;
  out->has_error = false;
  out->error_offset = 0;
  out->error.clear();
}

// Note [Findings in two runs]: the lexers' findings come in order of their
// start but for the literal rules' (and the mock targets'), which a second
// pass adds after the others: 549 of the 635 files of the 20 MB GPU tree had
// exactly two sorted runs, none more. One merge into the thread's buffer
// sorts those (std::merge takes the first run's on a tie, as the stable
// sort did), where std::stable_sort cost 0.95M instructions there, its
// temporary buffer allocated per file; more runs still go to it.
void SortByStart(std::vector<RawFinding>* raw, std::vector<RawFinding>* merged) {
  const auto by_start = [](const RawFinding& a, const RawFinding& b) { return a.start < b.start; };
  const auto second = std::is_sorted_until(raw->begin(), raw->end(), by_start);
  if (second == raw->end()) return;
  if (!std::is_sorted(second, raw->end(), by_start)) {
    std::stable_sort(raw->begin(), raw->end(), by_start);
    return;
  }
  merged->resize(raw->size());
  std::merge(raw->begin(), second, second, raw->end(), merged->begin(), by_start);
  raw->swap(*merged);
}

std::string Hex(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", c);
  return buf;
}

}  // namespace

FileResult ScanSource(const RuleSet& rules, Language language, std::string_view src,
                      bool apply_noqa) {
  std::string padded;
  padded.reserve(src.size() + internal::kPadding);
  padded.append(src);
  padded.append(internal::kPadding, '\0');
  return internal::ScanPadded(rules, language, std::string_view(padded.data(), src.size()),
                              apply_noqa);
}

namespace {

// Whether src[begin, ...) holds a '\r' that ends no "\r\n" (Note [noqa
// directives]: Python's tokenize reads lines to a '\n').
bool HasLoneCr(std::string_view src, size_t begin) {
  const char* p = src.data() + begin;
  const char* const end = src.data() + src.size();
  while ((p = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p))))) {
    if (p + 1 == end || p[1] != '\n') return true;
    p += 2;
  }
  return false;
}

// The directives of the noqa comments of `out` on the lines `want` asks for
// (all of them where it is null), into *dirs, in line order (Note [noqa
// directives]). `lines` maps offsets to lines.
template <typename Want>
void ReadNoqa(std::string_view src, const LexOutput& out, LineMap* lines, Want want,
              std::vector<NoqaDirective>* dirs) {
  NoqaDirective d;
  for (const internal::NoqaComment& c : out.noqa) {
    if (c.start >= out.indent_error) break;  // tokenize stops before that line
    const int line = lines->Line(c.start);
    if (!want(line)) continue;
    if (!internal::ParseNoqa(src.substr(c.start, c.end - c.start), &d)) continue;
    d.line = line;
    dirs->push_back(d);
  }
}

// Whether the noqa comments `out` lexed must be read by tokenize in Python
// (Note [noqa directives]), whatever lines they are on but for the comment's
// own field flag (`in_field`).
bool NoqaUnsure(std::string_view src, size_t begin, const LexOutput& out, bool bytes_mode,
                size_t invalid, bool has_cr) {
  return out.has_error || bytes_mode || invalid != kNone || out.odd_indent ||
         (has_cr && HasLoneCr(src, begin));
}

}  // namespace

bool NoqaDirectives(std::string_view source, std::vector<NoqaDirective>* dirs) {
  dirs->clear();
  std::string padded;
  padded.reserve(source.size() + internal::kPadding);
  padded.append(source);
  padded.append(internal::kPadding, '\0');
  const std::string_view src(padded.data(), source.size());
  if (src.size() >= 0xFFFFFF00u || std::memchr(src.data(), '\0', src.size()) != nullptr) {
    return false;
  }
  if (src.size() >= 2 && ((static_cast<unsigned char>(src[0]) == 0xFF &&
                           static_cast<unsigned char>(src[1]) == 0xFE) ||
                          (static_cast<unsigned char>(src[0]) == 0xFE &&
                           static_cast<unsigned char>(src[1]) == 0xFF))) {
    return false;
  }
  size_t begin = 0;
  if (src.size() >= 3 && src.compare(0, 3, "\xEF\xBB\xBF") == 0) begin = 3;
  const bool bytes_mode = HasNonUtf8Cookie(src, begin);
  size_t nul, invalid;
  bool has_cr, has_high;
  CheckText(src, begin, &nul, &invalid, &has_cr, &has_high);
  LexOutput out;
  internal::LexPythonComments(src, begin, &out);
  if (out.has_error) return false;  // tokenize may read on past it (3.11 does)
  if (out.noqa.empty()) return true;
  if (NoqaUnsure(src, begin, out, bytes_mode, invalid, has_cr)) return false;
  for (const internal::NoqaComment& c : out.noqa) {
    if (c.in_field && c.start < out.indent_error) return false;
  }
  LineMap lines(src, begin, true, has_cr);
  ReadNoqa(src, out, &lines, [](int) { return true; }, dirs);
  return true;
}

FileResult internal::ScanPadded(const RuleSet& rules, Language language, std::string_view src,
                                bool apply_noqa) {
  FileResult r;
  r.language = language;
  if (src.size() >= 0xFFFFFF00u) {  // offsets are 32-bit
    r.errors.push_back({"file is over 4 GiB, too large to scan; skipped", 0});
    return r;
  }
  if (src.size() >= 2 && ((static_cast<unsigned char>(src[0]) == 0xFF &&
                           static_cast<unsigned char>(src[1]) == 0xFE) ||
                          (static_cast<unsigned char>(src[0]) == 0xFE &&
                           static_cast<unsigned char>(src[1]) == 0xFF))) {
    r.errors.push_back({"UTF-16 encoded (byte-order mark); only UTF-8 sources are scanned", 0});
    return r;
  }
  size_t begin = 0;
  if (src.size() >= 3 && src.compare(0, 3, "\xEF\xBB\xBF") == 0) begin = 3;
  const bool python = language == Language::kPython;
  const bool bytes_mode = python && HasNonUtf8Cookie(src, begin);
  size_t nul, invalid;
  bool has_cr, has_high;
  CheckText(src, begin, &nul, &invalid, &has_cr, &has_high);
  if (nul != kNone) {
    LineMap lines(src, begin, true, std::memchr(src.data(), '\r', src.size()) != nullptr);
    r.errors.push_back({"binary file (a NUL byte); skipped", lines.Line(nul)});
    return r;
  }
  if (bytes_mode) invalid = kNone;
  // (CheckText looked from `begin`: the BOM before it has no '\r'.)
  LineMap lines(src, begin, bytes_mode, has_cr);
  if (invalid != kNone) {
    const int line = lines.Line(invalid);
    const std::string byte = Hex(static_cast<unsigned char>(src[invalid]));
    if (python) {
      r.errors.push_back({"invalid UTF-8 (byte " + byte + "); not scanned from there on", line});
    } else {
      r.errors.push_back({"invalid UTF-8 (byte " + byte + "); scanned as bytes", line});
    }
  }
  // No needle, no finding (Note [Needles]): most files end here, unlexed.
  if (!rules.MayMatchPadded(language, src.substr(begin, (python && invalid != kNone ? invalid
                                                                              : src.size()) -
                                                         begin))) {
    return r;
  }

  PaddedScratch& scratch = internal::ThreadScratch<PaddedScratch>();
  LexOutput& out = scratch.out;
  Reset(&out);
  if (python) {
    internal::ScanPython(rules, src, begin, has_cr, &out);
  } else {
    internal::ScanCpp(rules, src, begin, &out);
  }

  size_t limit = out.has_error ? out.error_offset : src.size() + 1;
  if (invalid != kNone && python) limit = std::min(limit, invalid);
  if (out.has_error && out.error_offset < (invalid == kNone || !python ? src.size() + 1 : invalid)) {
    r.errors.push_back({out.error + "; findings after it are not reported",
                        lines.Line(out.error_offset)});
  }
  std::sort(r.errors.begin(), r.errors.end(),
            [](const FileError& a, const FileError& b) { return a.line < b.line; });

  SortByStart(&out.findings, &scratch.merged);  // (it may swap the vectors: name it after)
  const std::vector<RawFinding>& raw = out.findings;
  // `# noqa` (Note [noqa directives]): the directives on the findings'
  // lines, read here unless tokenize must read them in Python.
  if (python && !out.noqa.empty() && !raw.empty() && raw.front().start < limit) {
    std::vector<int> found_lines;  // the findings' lines, ascending
    {
      LineMap at(src, begin, true, has_cr);
      for (const RawFinding& f : raw) {
        if (f.start >= limit) break;
        const int line = at.Line(f.start);
        if (found_lines.empty() || found_lines.back() != line) found_lines.push_back(line);
      }
    }
    const auto on_found = [&](int line) {
      return std::binary_search(found_lines.begin(), found_lines.end(), line);
    };
    bool asked = out.has_error;  // an error: every lexed comment counts (noqa.py's gate)
    bool in_field = false;
    {
      LineMap at(src, begin, true, has_cr);
      for (const internal::NoqaComment& c : out.noqa) {
        if (!on_found(at.Line(c.start))) continue;
        asked = true;
        in_field = in_field || c.in_field;
      }
    }
    if (asked) {
      if (in_field || NoqaUnsure(src, begin, out, bytes_mode, invalid, has_cr)) {
        r.noqa_fallback = true;
      } else {
        LineMap at(src, begin, true, has_cr);
        ReadNoqa(src, out, &at, on_found, &r.noqa);
      }
    }
  }
  // A file-level `# anydev: noqa` (Note [File-level noqa] in anydev/scan.py)
  // holds no legacy name, so no lexer sees its line: a Python file with
  // findings whose bytes mention anydev goes to Python's reading, as one whose
  // directives tokenize must read (the bytes are here: Python read every such
  // file again to ask).
  if (python && !r.noqa_fallback && !raw.empty() && raw.front().start < limit &&
      internal::MentionsAnydev(src)) {
    r.noqa_fallback = true;
  }
  size_t next_noqa = 0;
  const bool drop_noqa = apply_noqa && !r.noqa.empty();
  // The lines that carry a suppression, in order: the findings, in order
  // too, walk them once (a merge), however many of each there are.
  std::vector<std::pair<int, std::string_view>> suppressed;
  if (!out.suppressions.empty() && !raw.empty()) {
    std::vector<Suppression>& sup = out.suppressions;
    if (!std::is_sorted(sup.begin(), sup.end(), [](const Suppression& a, const Suppression& b) {
          return a.offset < b.offset;
        })) {
      std::stable_sort(sup.begin(), sup.end(), [](const Suppression& a, const Suppression& b) {
        return a.offset < b.offset;
      });
    }
    LineMap sup_lines(src, begin, true, has_cr);
    suppressed.reserve(sup.size());
    for (const Suppression& s : sup) suppressed.emplace_back(sup_lines.Line(s.offset), s.codes);
  }
  size_t next_sup = 0;
  int quiet_line = 0;       // the line `quiet` and `quiet_all` are for
  std::vector<bool> quiet;  // by rule: quieted on quiet_line
  bool quiet_all = false;
  // Starts ascend: one cursor walks them; each end is counted on from its
  // start (a copy of the cursor there), so the file is counted once.
  // Note [Columns of an ASCII file]: where no byte is over 0x7F (and the
  // BOM, before `begin`, starts no line), a column counts bytes: each is a
  // code point, and CountCodePoints need not look.
  const bool byte_columns = bytes_mode || !has_high;
  LineMap starts(src, begin, byte_columns, has_cr);
  // Note [Finding texts]: a finding's text was a std::string of its own, on
  // the heap past 15 bytes (`torch.cuda.current_device`): 5,283 allocations,
  // and as many frees with the results, for the 11,705 findings of the 20 MB
  // GPU tree. The texts of a file are one block now, which the findings view:
  // made once, sized for all the raw findings' bytes and filled in place (its
  // string lives in make_shared's block and never grows, so its bytes never
  // move, however short), and shared by the FileResult's copies.
  std::shared_ptr<std::string> texts;
  char* text_at = nullptr;
  if (!raw.empty() && raw.front().start < limit) {
    size_t bytes = 0;
    for (const RawFinding& f : raw) bytes += f.end - f.start;
    texts = std::make_shared<std::string>(bytes, '\0');
    text_at = texts->data();
  }
  r.findings.reserve(raw.size());
  for (const RawFinding& f : raw) {
    if (f.start >= limit) break;
    const int line = starts.Line(f.start);
    const int column = starts.Column(f.start);
    while (next_sup < suppressed.size() && suppressed[next_sup].first < line) ++next_sup;
    if (next_sup < suppressed.size() && suppressed[next_sup].first == line) {
      if (quiet_line != line) {  // the first finding on this line: which rules it quiets
        quiet_line = line;
        quiet.assign(rules.rules().size(), false);
        quiet_all = false;
        std::vector<std::string_view> seen;
        for (size_t k = next_sup; k < suppressed.size() && suppressed[k].first == line; ++k) {
          const std::string_view codes = suppressed[k].second;
          if (codes.empty()) quiet_all = true;
          if (quiet_all) break;
          if (std::find(seen.begin(), seen.end(), codes) != seen.end()) continue;
          if (seen.size() < 64) seen.push_back(codes);
          for (size_t rule = 0; rule < quiet.size(); ++rule) {
            if (!quiet[rule] && CodeMatches(rules.rules()[rule].code, codes)) quiet[rule] = true;
          }
        }
      }
      if (quiet_all || quiet[static_cast<size_t>(f.rule)]) continue;
    }
    if (drop_noqa) {
      while (next_noqa < r.noqa.size() && r.noqa[next_noqa].line < line) ++next_noqa;
      if (next_noqa < r.noqa.size() && r.noqa[next_noqa].line == line) {
        const NoqaDirective& d = r.noqa[next_noqa];
        const std::string& code = rules.rules()[static_cast<size_t>(f.rule)].code;
        bool named = d.all;
        for (size_t k = 0; !named && k < d.codes.size(); ++k) {
          named = code.compare(0, d.codes[k].size(), d.codes[k]) == 0;
        }
        if (named) continue;
      }
    }
    // A finding's end is most often on its line: with byte columns and no
    // '\r' in the file, one memchr of its text says so, and the end's
    // column is its start's plus the text's bytes (no copy of the line map,
    // no count of the text's newlines).
    int end_line = line, end_column = column + static_cast<int>(f.end - f.start);
    if (!byte_columns || has_cr || std::memchr(src.data() + f.start, '\n', f.end - f.start)) {
      LineMap ends = starts;
      end_line = ends.Line(f.end);
      end_column = ends.Column(f.end);
    }
    const size_t n = f.end - f.start;
    std::memcpy(text_at, src.data() + f.start, n);
    r.findings.push_back(Finding{f.rule, f.kind, f.symbol, f.start, f.end, f.call_end, line,
                                 column, end_line, end_column, std::string_view(text_at, n)});
    text_at += n;
  }
  if (!r.findings.empty()) r.texts = std::move(texts);
  return r;
}

}  // namespace anydev::scan
