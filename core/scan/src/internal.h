// Internal to core/scan: what the two lexers share with the driver.
#ifndef ANYDEV_SCAN_INTERNAL_H_
#define ANYDEV_SCAN_INTERNAL_H_

#include <cstdint>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/scan.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ANYDEV_SCAN_NIBBLE_AVX2 1
#include <immintrin.h>
#endif

namespace anydev::scan::internal {

// A class of bytes told by nibble (the skims of both fast paths): byte b is in
// it when lo[b & 15] & hi[b >> 4] is not 0; `byte` is the same answer per byte,
// for the scalar paths. Fill lo and hi, then call Finish().
struct NibbleClass {
  alignas(16) uint8_t lo[16];
  alignas(16) uint8_t hi[16];
  bool byte[256];

  constexpr void Finish() {
    for (int b = 0; b < 256; ++b) byte[b] = (lo[b & 15] & hi[b >> 4]) != 0;
  }
};

#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
// Bit k of the result: s[k] is in `c`, for the 64 bytes at s (all readable).
// With kMarks, bit k of *marked: s[k]'s class has one of the bits kMarks. The
// plain form of the two fast paths' classifiers, which neither calls now:
// the C++ skim classifies with ClassifySkimAvx2 (cpp_scan.cc: its '(' by the
// top bit of the class, a class that is not zero by one movemask of a
// saturated sum) and the Python skeleton with ClassifyWith (python_scan.cc:
// kSpecial's tables built once a file and kept in registers, the brackets by
// the top bit of m | (m + m)), since building the tables here at every block
// cost ten of its instructions where a call in the loop clobbered them.
template <uint8_t kMarks = 0>
__attribute__((target("avx2"))) inline uint64_t ClassifyAvx2(const NibbleClass& c,
                                                             const unsigned char* s,
                                                             uint64_t* marked = nullptr) {
  const __m256i lo = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(c.lo)));
  const __m256i hi = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(c.hi)));
  const __m256i nib = _mm256_set1_epi8(0x0F);
  const __m256i zero = _mm256_setzero_si256();
  uint64_t out = 0, mark = 0;
  for (int h = 0; h < 2; ++h) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32 * h));
    const __m256i m = _mm256_and_si256(
        _mm256_shuffle_epi8(lo, _mm256_and_si256(v, nib)),
        _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib)));
    const uint32_t none = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero)));
    out |= static_cast<uint64_t>(~none) << (32 * h);
    if constexpr (kMarks == 0x80) {  // the top bit: movemask reads it as it is
      mark |= static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(m))) << (32 * h);
    } else if constexpr (kMarks != 0) {
      const __m256i bits = _mm256_set1_epi8(static_cast<char>(kMarks));
      const uint32_t unmarked = static_cast<uint32_t>(
          _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(m, bits), zero)));
      mark |= static_cast<uint64_t>(~unmarked) << (32 * h);
    }
  }
  if constexpr (kMarks != 0) *marked = mark;
  return out;
}
#endif

class NeedleSearch;

// A set of byte strings searched for at once (prefilter.cc; Note [Needles]).
class NeedleSet {
 public:
  NeedleSet() = default;
  explicit NeedleSet(std::vector<std::string> needles);
  // Returns true if p[0, n) contains one of the needles. Reads up to 16 bytes
  // past p + n - 1 only where n allows (never past the end).
  bool FoundIn(const char* p, size_t n) const;
  // FoundIn for p[0, n) followed by 16 readable bytes (the scanners' padded
  // buffers), by the needle search's kernel (Note [Prefilter by the needle
  // kernel] in prefilter.cc).
  bool FoundInPadded(const char* p, size_t n) const;
  // Makes FoundInPadded find `words` as whole words and `plain` anywhere
  // (the prefilters: Note [Needles as words] in python_scan.cc, Note [C++
  // needles as words] in cpp_scan.cc); no change where they do not fit a
  // search.
  void SearchAsWords(const std::vector<std::string>& words, const std::vector<std::string>& plain);
  const std::vector<std::string>& needles() const { return needles_; }
  bool always() const { return always_; }

 private:
  static constexpr size_t kMaxVector = 16;  // more needles: memmem each
  std::vector<std::string> needles_;
  size_t min_len_ = 0, max_len_ = 0;
  bool always_ = false;
  // The search and the bytes its views hold (shared: a copy of the set
  // keeps them where they are).
  std::shared_ptr<const std::vector<std::string>> search_needles_;
  std::shared_ptr<const NeedleSearch> search_;
};

// Every occurrence of a few byte strings, for the Python fast path's
// intra-file skipping (Note [Fast path] in python_scan.cc): a Teddy-style
// search (three bytes of each needle classified by nibble tables, 32 bytes at
// a time with AVX2 where the CPU has it; a scalar loop otherwise), each
// candidate then compared whole. A needle marked `word` matches only as a
// whole identifier (no identifier byte on either side). Holds views: the
// needles' bytes must outlive it. No heap.
class NeedleSearch {
 public:
  static constexpr int kMax = 64;
  // Returns false when full (the caller then takes the slow path).
  // `cheap` (a word): a match followed by '.' whose line holds no '='
  // before it on its line (past spaces) is passed over (Note [Cheap names]
  // in python_scan.cc); a needle added twice keeps the stricter kind.
  bool Add(std::string_view needle, bool word, bool cheap = false);
  int size() const { return count_; }
  // Builds the tables; call after the last Add.
  void Build();
  // The offset of the first match that starts in [from, end) and ends by
  // `end`, or `end` when none. p[begin, end + 16) must be readable; `begin`
  // is where the text starts (a word needs no identifier byte before it
  // there).
  size_t Next(const char* p, size_t begin, size_t from, size_t end) const;

 private:
  size_t NextScalar(const char* p, size_t begin, size_t from, size_t i, size_t end) const;
  // kWords2: the only whole words of 1-3 bytes are of 2 (none of 1 or 3).
  template <bool kRaw, bool kWords2 = false>
  size_t NextAvx2(const char* p, size_t begin, size_t from, size_t end) const;
  // The start of a needle of `buckets` whose fingerprint is at `at` and
  // that matches in [from, end), or SIZE_MAX.
  size_t Verify(const char* p, size_t begin, size_t from, size_t at, size_t end,
                unsigned buckets) const;

  struct Needle {
    std::string_view text;
    bool word;
    bool cheap;   // see Add
    uint8_t off;  // where its three fingerprint bytes are: its rarest
    // Its fingerprint bytes (up to 3) and its first bytes (up to 8) as a
    // 4- and an 8-byte load of the text would hold them, and which bytes
    // of those loads count.
    uint32_t fp, fp_mask;
    uint64_t head, head_mask;
  };
  Needle needles_[kMax];
  int count_ = 0;
  // Needles by bucket (8): indices into needles_, in order.
  uint8_t bucket_of_[kMax] = {};
  uint8_t bucket_[8][kMax] = {};  // the needles of each bucket
  int bucket_size_[8] = {};
  // Nibble tables: bit b of lo0[x & 15] & hi0[x >> 4] is set when byte x can
  // be the first fingerprint byte of a needle of bucket b; lo1/hi1 the second.
  alignas(16) uint8_t lo0_[16] = {}, hi0_[16] = {}, lo1_[16] = {}, hi1_[16] = {};
  alignas(16) uint8_t lo2_[16] = {}, hi2_[16] = {};  // the third
  // Identifier bytes by nibble: x is one when ident_lo_[x & 15] &
  // ident_hi_[x >> 4] is not zero (Note [Word boundaries] in prefilter.cc).
  alignas(16) uint8_t ident_lo_[16] = {}, ident_hi_[16] = {};
  // The buckets that hold only whole-word needles of 1, 2 or 3 bytes (and
  // so of that length), by length - 1: a candidate there needs a
  // non-identifier byte before and after it.
  uint8_t word_bits_[3] = {};
  uint8_t words_ = 0;  // their union
  // The bucket bits of all but those buckets, and word_bits_, in every
  // byte (the AVX2 kernel's masks, loaded from here rather than made).
  alignas(32) uint8_t other_[32] = {};
  alignas(32) uint8_t word_v_[3][32] = {};
  int8_t bucket_class_[8] = {};  // -1 empty, 0 other, 1-3 word length, 4 mixed
  // By fingerprint byte and bucket: the low and high nibbles the tables
  // admit, and the bytes they admit (Note [Buckets for whole words]).
  uint16_t nibbles_[3][2][8] = {};
  uint32_t admitted_[3][8] = {};
  int built_ = 0;         // the needles the tables hold (Build goes on from there)
  bool rebuild_ = false;  // an Add changed a needle built: Build starts over
  bool avx2_ = false;
  bool raw_ = false;  // the AVX2 kernel may skip masking the low nibbles
  // What Next runs, chosen by Build: NextNone (no needle), NextScalarFrom,
  // NextAvx2<false>, NextAvx2<true> or NextAvx2<true, true> (one indirect
  // call, where a switch over four asked up to three questions).
  void ChooseKernel();  // sets kernel_ (Build's last step)
  size_t NextNone(const char*, size_t, size_t, size_t end) const { return end; }
  size_t NextScalarFrom(const char* p, size_t begin, size_t from, size_t end) const {
    return NextScalar(p, begin, from, from, end);
  }
  size_t (NeedleSearch::*kernel_)(const char*, size_t, size_t, size_t) const =
      &NeedleSearch::NextNone;
};

// Whether the scanners may skip what cannot hold a finding (their fast
// paths: Note [Fast path] in python_scan.cc, Note [Fast path for C++] in
// cpp_scan.cc), or must lex every byte (the full path, which the
// differential tests compare them with). ANYDEV_SCAN_FULL_LEXER=1 in the
// environment forces the full path; tests may also set it here.
// Note [Thread-local scratch]: the buffers a scanner keeps from file to file
// on each thread (no allocation per file) are one T per thread, reached here
// once per file and passed down by reference. In a shared object (the Python
// module) a use of a thread_local's name is a call to __tls_get_addr, and GCC
// recomputes the address at each use rather than keep it: the Python fast path
// had 159 such calls, 8.75M in a 200 MB scan (3.4% of `anydev scan`;
// scan_native, an executable, paid none). The empty asm hides the address from
// the optimiser, which would otherwise propagate it into the callees as a
// constant and recompute it at each use there again.
template <class T>
T& ThreadScratch() {
  thread_local T value;
  T* p = &value;
  asm("" : "+r"(p));
  return *p;
}

bool FastPathEnabled();
void SetFastPathForTesting(int mode);  // 1: on, 0: off, -1: from the environment
// How many files the fast path has scanned in this process (for tests).
uint64_t FastPathFilesForTesting();
void CountFastPathFile();
// The Python fast path's budget for its walks back to a line's enclosing
// lines, in lines passed per line of the file (python_scan.cc, Parents):
// past it every parent is set in one pass. 4 unless a test sets it (0: the
// pass at the first walk); -1 restores it.
void SetParentWalkBudgetForTesting(int per_line);
// Whether the Python skeleton's loop classifies with its scalar code even
// where the CPU has AVX2 (python_scan.cc, SkeletonPass), for tests.
void SetSkeletonScalarForTesting(bool scalar);
// The end of the f-string whose prefix starts at `start` and whose opening
// quote is at `quote` in `src` (python_scan.cc, Note [Plain f-strings]): in
// *plain as the skeleton's scan of a plain one finds it (0: not plain), in
// *lexed as the lexer's code finds it (0: the lexer fails on it).
void FStringEndsForTesting(std::string_view src, size_t start, size_t quote, size_t* plain,
                           size_t* lexed);

// A finding before its line and column are known.
struct RawFinding {
  int rule;
  RefKind kind;
  std::string_view symbol;
  uint32_t start, end;
  int64_t call_end;
};

// An `anydev: ignore[...]` marker inside a comment. `codes` is the text
// between the brackets, empty for a bare `anydev: ignore`.
struct Suppression {
  uint32_t offset;
  std::string_view codes;
};

// A comment of a Python file that mentions `noqa` (any case): its bytes,
// from the '#' to its line's end, and whether it lies in an f-string's
// replacement field (Note [noqa directives] in scan_source.cc).
struct NoqaComment {
  uint32_t start, end;
  bool in_field;
};

// Everything one lexer run produces for one file. A lexer stops at its first
// error; findings at or after `error_offset` are dropped by the caller.
struct LexOutput {
  std::vector<RawFinding> findings;
  std::vector<Suppression> suppressions;
  bool noqa_comment = false;  // a comment lexed contains `noqa` (any case): see NoteComment
  // Python: the comments lexed that mention `noqa`, in order, and what the
  // file's indents are to Python's tokenize (PythonIndents), asked only where
  // one was.
  std::vector<NoqaComment> noqa;
  uint32_t indent_error = 0xFFFFFFFFu;  // the start of the line tokenize's dedent check fails on
  bool odd_indent = false;              // an indent holds a byte other than ' '
  bool has_error = false;
  uint32_t error_offset = 0;
  std::string error;

  void Fail(uint32_t offset, std::string message) {
    if (has_error) return;
    has_error = true;
    error_offset = offset;
    error = std::move(message);
  }
};

// Lexes and resolves `src[begin, end)` (begin skips a BOM). `has_cr`: whether
// src holds a '\r' (ScanPadded's text check finds it in the same pass as the
// NUL and UTF-8 checks; the Python skeleton would read the file again).
void ScanPython(const RuleSet& rules, std::string_view src, size_t begin, bool has_cr,
                LexOutput* out);
void ScanCpp(const RuleSet& rules, std::string_view src, size_t begin, LexOutput* out);

// Lexes a whole Python file for its `# noqa` comments and indents (as
// ScanPython's full path does; NoqaDirectives).
void LexPythonComments(std::string_view src, size_t begin, LexOutput* out);

// NoteComment for a Python comment (`in_field`: in an f-string's replacement
// field), which also records a comment that mentions `noqa`.
void NotePythonComment(std::string_view text, uint32_t offset, bool in_field, LexOutput* out);

// Reads the `# noqa` directive of a Python comment (from its '#' to its
// line's end, UTF-8) as anydev/_migrate/noqa.py does (Note [noqa directives] in
// scan_source.cc); false where it is none.
bool ParseNoqa(std::string_view comment, NoqaDirective* d);

// Records the marker if the comment `text` (starting at `offset`) holds one.
// Reads up to 15 bytes past the text: it must lie in a lexer's input (which
// kPadding bytes follow).
void NoteComment(std::string_view text, uint32_t offset, LexOutput* out);
// The C++ comments, noted as NoteComment notes them, in the pass that finds
// their end: the `/*` comment at s + start (of the input s[0, n)), whose end
// (past its `*/`) it returns, or npos where it is not closed (noted
// nowhere); the `//` comment at s + start, whose end (its line's '\n' or
// '\r' not after a backslash, or n) it returns.
size_t NoteBlockComment(const char* s, size_t start, size_t n, LexOutput* out);
size_t NoteLineComment(const char* s, size_t start, size_t n, LexOutput* out);

// The lexers read past the end of their input: `src` must be followed by
// kPadding zero bytes (which the input itself never contains: a file with a
// NUL byte is not lexed). ScanPadded is ScanSource for such a buffer.
constexpr size_t kPadding = 16;
FileResult ScanPadded(const RuleSet& rules, Language language, std::string_view src,
                      bool apply_noqa = true);

// The lexers' token arrays: written through a raw pointer, where a vector's
// push_back would reload and store its end pointer around every token.
// T is trivially copyable. One per thread, reused from file to file.
template <typename T>
class TokenBuffer {
 public:
  // Returns the slot for the next token.
  T* Add() {
    if (end_ == limit_) Grow();
    return end_++;
  }
  void clear() { end_ = data_.get(); }
  // Appends the n tokens at p (not in this buffer).
  void Append(const T* p, size_t n) {
    while (static_cast<size_t>(limit_ - end_) < n) Grow();
    if (n != 0) std::memcpy(static_cast<void*>(end_), p, n * sizeof(T));
    end_ += n;
  }
  // Drops the tokens from index n on (n <= size()).
  void Truncate(size_t n) { end_ = data_.get() + n; }
  size_t size() const { return static_cast<size_t>(end_ - data_.get()); }
  bool empty() const { return end_ == data_.get(); }
  T& back() { return end_[-1]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& operator[](size_t i) { return data_[i]; }
  // Frees the memory one huge file made it take.
  void Trim(size_t keep) {
    if (cap_ > keep) {
      data_.reset();
      cap_ = 0;
      end_ = limit_ = nullptr;
    }
  }

 private:
  void Grow() {
    const size_t n = size();
    const size_t cap = cap_ ? cap_ * 2 : 4096;
    std::unique_ptr<T[]> bigger(new T[cap]);
    if (n) std::memcpy(static_cast<void*>(bigger.get()), data_.get(), n * sizeof(T));
    data_ = std::move(bigger);
    cap_ = cap;
    end_ = data_.get() + n;
    limit_ = data_.get() + cap;
  }

  std::unique_ptr<T[]> data_;
  size_t cap_ = 0;
  T* end_ = nullptr;
  T* limit_ = nullptr;
};

// Byte classes shared by the lexers.
struct ByteTables {
  bool ident_start[256];
  bool ident[256];
};

constexpr ByteTables MakeByteTables() {
  ByteTables t{};
  for (int c = 0; c < 256; ++c) {
    const bool start = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
    t.ident_start[c] = start;
    t.ident[c] = start || (c >= '0' && c <= '9');
  }
  return t;
}

inline constexpr ByteTables kBytes = MakeByteTables();

inline bool IsIdentStart(unsigned char c) { return kBytes.ident_start[c]; }
inline bool IsIdentChar(unsigned char c) { return kBytes.ident[c]; }
inline bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

}  // namespace anydev::scan::internal

#endif  // ANYDEV_SCAN_INTERNAL_H_
