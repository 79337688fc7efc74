// The C/C++/CUDA/HIP scanner: a tokenizer that knows what is not code
// (comments, string and character literals of every prefix, raw strings,
// `#include`/`#error` lines, `#if 0` groups) followed by a pass over the
// tokens that tracks namespaces, namespace aliases, using-directives and
// using-declarations by brace depth and matches qualified names.
//
// Note [Braces and the preprocessor]: braces inside `#define` bodies do not
// count (`#define NS_BEGIN namespace x {` would never close), and the brace
// depth at the end of the first branch of an `#if`/`#else` that was lexed is
// the depth after its `#endif`, so `#ifdef A void f(int) { #else void f() {
// #endif` opens one block, not two (what ctags does).
//
// Note [Fast path for C++]: most statements of a file cannot hold a
// finding, and the scanner need not lex them. A finding's qualified name
// holds one of the fast-path needles of the rules (RuleSet::FastPathNeedles:
// a component of the spelling it matches, or its detector's string), unless
// a name the resolver's entries in scope bind stands for part of it: the
// name an alias or a using-declaration binds (`cu` of `namespace cu =
// c10::cuda;`), or, inside a namespace of the rules (`namespace at {`) and
// after a using-directive, a component that follows that namespace, or one
// enclosing it, in some spelling (Resolver::ContextNeedles, RuleSet::
// Followers). What a statement without any of them does to the resolver is
// nothing but its braces, its ';' and the preprocessor's groups, provided
// the statements that change the entries (`namespace`, `using`: needles
// too) are lexed. So the lexer
//   1. skims (Lexer::Skim): a vectorised scan (AVX2 nibble tables, 64 bytes
//      a step, the block's '(' from the same classification; a scalar table
//      elsewhere) for the bytes that can open a comment, a literal, a
//      directive or a continuation, end a line with a '\r', or be a
//      parenthesis, a brace or a ';'; each of them handled by the full
//      lexer's own code (comments, every literal with its prefix, raw
//      strings, digit separators, directives, `#if 0` groups, continuations,
//      line starts), so the skim ends each where the full lexer does and
//      fails where it fails; it keeps the braces, the ';' (a run of them with
//      nothing kept between as one token) and the preprocessor tokens, and
//      drops the rest. A '\n' stops nothing: whether a '#' or a "/*" is at a
//      line start, and whether a directive has ended, is found where asked,
//      from the last '\n' before it (Lexer::Settle); nor does a '/' that
//      opens no comment (Note [Divisions in the skim]). A comment the skim
//      stops at is read once, for its end and its markers together
//      (NoteBlockComment, NoteLineComment in scan_source.cc), a directive's
//      line a run at a time (Note [Directive lines a run at a time]);
//   2. ends a stretch at each '{', '}' or ';' outside parentheses (a
//      boundary), remembering its state there; where the next needle
//      (NeedleSearch over the file) comes before the next skim byte, it goes
//      back to the last boundary and lexes from there, every token kept, up
//      to the first boundary past the needle. A needle inside a comment, a
//      literal or a directive's text is skipped over (no name token there).
//   3. At each boundary after lexed code the driver (FastDriver) feeds the
//      resolver the tokens so far (Resolver::Feed) and, when its entries
//      changed, renews the needles: the static ones, `namespace`, `using`
//      and those of the entries in scope, searched for from there on (a name
//      means nothing before its binding; the searches built are kept per
//      thread for the files after, FastDriver::Search). Too many needles,
//      or a `namespace x` whose '{' comes in a directive: everything is
//      lexed until that changes.
// The token stream then differs from the full path's only by the tokens of
// skimmed statements that the resolver and the literal rules ignore: every
// lexed stretch starts after a boundary token, both streams hold, and
// begins and ends outside parentheses, so what they look at around a name
// (the token before it, `decltype(...)::`, a call's ')', what follows a
// definition's parameters) lies inside the stretch or is that boundary
// token. Comments are read either way, so suppressions and `noqa` are the
// same too. tests/cpp/scan_fast_path_cpp_test.cc, tests/python/
// test_scan_fast_path.py and the fuzz target scan_source check that both
// paths give the same findings, errors and suppressions;
// ANYDEV_SCAN_FULL_LEXER=1 forces the full path.
//
// Note [C++ needles as words]: the rules' words (RuleSet::FastPathWords: a
// component of each spelling, the literal rules' `cuda`, `is_cuda`, `CUDA`
// and `kCUDA`) are searched as whole identifiers, in the fast path and in
// the file's prefilter (RuleSet::MayMatchPadded), and only the rules' own
// needles (FastPathPlain) anywhere, as Note [Needles as words] in
// python_scan.cc does for Python. CUDA code is full of names that hold a
// needle inside them (`cudaStream_t`, `cudaMemcpyAsync`, `__CUDA_ARCH__`,
// `CUDA_CHECK`, `<cuda_runtime.h>`): each was a stretch lexed and resolved
// for nothing, and a file of them was no file the prefilter passed over.
// None is a finding's: a spelling's component is a whole name token of the
// chain that matches it (the resolver builds chains of the lexer's name
// tokens), the literal rules read the name tokens `kCUDA`, `CUDA` (after
// `DeviceType::`), `cuda` and `is_cuda` (kDetectors' `also` adds `kCUDA`,
// in which `CUDA` is no word). A name token to the lexer is a word to the
// search: the lexer's identifier bytes are IsIdentChar's and '$', so a
// word the search rejects (an IsIdentChar byte beside it) is inside a
// longer name token, or in a number (which takes identifier bytes too);
// '$' beside it or a continuation before it only lets more through. The
// driver's context needles (names a using-directive or a rule's namespace
// brings in, Resolver::ContextNeedles) are dropped where a word equals them
// or a plain needle lies inside them: `getCurrentCUDAStream` holds `CUDA`
// but not as a word, so it is searched for itself (a shim's definition of
// it, Note [Shim namespaces], is lexed so). Measured (callgrind,
// scan_native --jobs 1): DeepSpeed 87.71M to 74.59M instructions,
// Megatron-LM (whose C++ is a few files) unchanged; findings identical
// (scan_native --dump, fast and full, on the 13 dev-set trees, the
// generated trees and tests/). The prefilter passing over more files also
// means their lexical errors go unreported, as for Python files.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal.h"
#include "literal_rules.h"

namespace anydev::scan::internal {
namespace {

constexpr size_t kSentinels = 4;

enum Tk : uint8_t {
  kName,
  kColon2,  // '::'
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLBrack,
  kRBrack,
  kSemi,
  kComma,
  kDot,
  kArrow,
  kAssign,
  kLess,
  kGreater,
  kLiteral,  // a string, character or number
  kOther,
  kPpIf,     // an #if/#ifdef/#ifndef group begins
  kPpElse,   // #elif/#else: Tok::prev_active says whether the branch that ended was lexed
  kPpEndif,  // #endif: the same
  kEnd,
};

// See Note [No char-typed token fields] in python_scan.cc.
struct Tok {
  uint32_t start;
  uint32_t end;
  Tk type;
  bool directive;    // inside a #define (or other directive) line
  bool prev_active;  // kPpElse, kPpEndif: the branch that ended was lexed
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

// The bytes of a C++ identifier as the lexer reads them: IsIdentChar's and
// '$' (one lookup a byte, not a lookup and a compare).
constexpr std::array<bool, 256> MakeCppIdent() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = kBytes.ident[c] || c == '$';
  return t;
}
constexpr std::array<bool, 256> kCppIdent = MakeCppIdent();
// The bytes that start one: IsIdentStart's and '$'.
constexpr std::array<bool, 256> MakeCppIdentStart() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = kBytes.ident_start[c] || c == '$';
  return t;
}
constexpr std::array<bool, 256> kCppIdentStart = MakeCppIdentStart();

// The bytes the skim (Note [Fast path for C++]) stops at: parentheses, ';',
// braces, quotes, '/', '#', backslash and '\r' (a '\n' is not one: the skim
// looks for the last one only where a line start matters, Lexer::Settle).
// Classified by nibble (NibbleClass), one class bit each: '(' has bit 7, so
// that a movemask of the classified bytes gives the '(' of a block.
constexpr NibbleClass MakeSkimClass() {
  NibbleClass t{};
  t.hi[0x2] = 0x80 | 2 | 16;  // ( ) and " # ' /
  t.lo[0x8] = 0x80;           // (
  t.lo[0x9] = 2;              // )
  t.hi[0x3] = 4;              // ;
  t.lo[0xB] = 4 | 8;          // ; {
  t.hi[0x7] = 8;              // { }
  t.lo[0xD] = 8 | 64;         // } \r
  t.lo[0x2] = t.lo[0x3] = t.lo[0x7] = t.lo[0xF] = 16;
  t.hi[0x5] = 32;             // backslash
  t.lo[0xC] = 32;
  t.hi[0x0] = 64;             // \r
  t.Finish();
  return t;
}

constexpr NibbleClass kSkim = MakeSkimClass();

// The skim bytes of a 64-byte block, and their '('.
struct SkimMasks {
  uint64_t skim, opens;
};

#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
// Note [Skim tables in memory]: the tables and constants are 32-byte rows
// loaded as they are, one instruction each, where the 16-byte tables were
// loaded and broadcast and the constants built from immediates (two and
// three instructions each): 31 instructions a 64-byte block, not 36 (C/C++
// files of the 20 MB tree 47.34M to 46.87M). GCC reads them through a
// pointer it cannot see through (the empty asm), or it builds the uniform
// rows from immediates again.
struct SkimRows {
  alignas(32) uint8_t lo[32];
  alignas(32) uint8_t hi[32];
  alignas(32) uint8_t nib[32];
  alignas(32) uint8_t any[32];
};
constexpr SkimRows MakeSkimRows() {
  SkimRows r{};
  for (int k = 0; k < 32; ++k) {
    r.lo[k] = kSkim.lo[k & 15];
    r.hi[k] = kSkim.hi[k & 15];
    r.nib[k] = 0x0F;
    r.any[k] = 0x7F;
  }
  return r;
}
const SkimRows kSkimRows = MakeSkimRows();

// The skim tables in registers (SkimBmi loads them once a call).
struct SkimTables {
  __m256i lo, hi, nib, any;
};

__attribute__((target("avx2"))) inline SkimTables LoadSkimTables() {
  const SkimRows* rows = &kSkimRows;  // Note [Skim tables in memory]
  asm("" : "+r"(rows));
  return SkimTables{_mm256_load_si256(reinterpret_cast<const __m256i*>(rows->lo)),
                    _mm256_load_si256(reinterpret_cast<const __m256i*>(rows->hi)),
                    _mm256_load_si256(reinterpret_cast<const __m256i*>(rows->nib)),
                    _mm256_load_si256(reinterpret_cast<const __m256i*>(rows->any))};
}

// The skim bytes of the 64 at s (all readable) and their '(': ClassifyAvx2's
// classification, returned by value (in two registers, not stored and
// loaded again), a class's being none of zero read by one movemask (its
// byte plus 0x7F, saturated, has the top bit unless it is zero) where a
// compare, a movemask and a `not` did.
__attribute__((target("avx2"))) inline SkimMasks ClassifySkim(
    const SkimTables& t, const unsigned char* s) {
  uint64_t skim = 0, opens = 0;
  for (int h = 0; h < 2; ++h) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32 * h));
    const __m256i m = _mm256_and_si256(
        _mm256_shuffle_epi8(t.lo, _mm256_and_si256(v, t.nib)),
        _mm256_shuffle_epi8(t.hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), t.nib)));
    skim |= static_cast<uint64_t>(static_cast<uint32_t>(
                _mm256_movemask_epi8(_mm256_adds_epu8(m, t.any))))
            << (32 * h);
    // '(' has the top bit of its class: movemask reads it as it is.
    opens |= static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(m))) << (32 * h);
  }
  return SkimMasks{skim, opens};
}

// Note [Skim blocks classified in the loop]: SkimBmi (compiled for AVX2 as
// well as BMI1) classifies the blocks it walks into itself, with ClassifySkim
// inlined and the tables loaded once a call, and hands the cursor the block
// it stops in only when it leaves (SkimCursor::Take); each block had been a
// call of ClassifySkimAvx2 through the cursor (the tables loaded, the masks
// stored in the cursor and loaded back: 58 instructions a block with the
// loop's, 45 now). Only the blocks that lie whole in the input are
// classified so; the last ones, and all of them without AVX2, are the
// cursor's. Measured (callgrind, scan_native --jobs 1 on the C/C++ files of
// the 20 MB GPU tree): 45.58M to 45.12M instructions (the skim 13.65M to
// 13.01M with its classification).
//
// The same, out of line with the tables loaded (SkimCursor's blocks).
__attribute__((target("avx2"))) SkimMasks ClassifySkimAvx2(const unsigned char* s) {
  return ClassifySkim(LoadSkimTables(), s);
}
#endif

// The skim bytes of the input, a 64-byte block at a time, the block's bit
// masks kept between calls. Positions at or past n are none.
class SkimCursor {
 public:
  SkimCursor(const char* s, size_t n) : s_(reinterpret_cast<const unsigned char*>(s)), n_(n) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
    // (With BMI1 too, which every CPU with AVX2 has, for Lexer::SkimBmi.)
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi");
    // (One compare a block asks both whether AVX2 is there and whether the
    // whole block lies in the input.)
    whole_end_ = avx2 ? n_ : 0;
    part_end_ = avx2 ? n_ + 16 : 0;
#endif

  }

  // Just past the last skim byte before q, found looking back from the
  // block last classified (q is a skim byte in it), but not before floor.
  size_t Previous(size_t q, size_t floor) const {
    if (q - base_ < 64) {
      const uint64_t below = mask_ & ((uint64_t{1} << (q - base_)) - 1);
      if (below != 0) {
        return std::max(base_ + 64 - static_cast<size_t>(__builtin_clzll(below)), floor);
      }
    }
    for (size_t k = (q - base_ < 64 ? base_ : q); k-- > floor;) {
      if (kSkim.byte[s_[k]]) return k + 1;
    }
    return floor;
  }

  // Classifies the block at p unless p is in the current one; returns its
  // start (mask() its skim bytes, opens() their '(').
  size_t Block(size_t p) {
    if (p - base_ >= 64) Classify(p);
    return base_;
  }
  // Whether the CPU has AVX2 and BMI1 (Lexer::SkimBmi).
  bool avx2() const { return whole_end_ != 0 || part_end_ != 0; }
  // The block at p, classified now (p is past the current one).
  void Next(size_t p) { Classify(p); }
  // The block at p, classified by the caller (Lexer::SkimBody's blocks
  // that lie in the input whole, p + 64 <= whole_end()).
  void Take(size_t p, uint64_t mask, uint64_t opens) {
    base_ = p;
    mask_ = mask;
    opens_ = opens;
  }
  size_t whole_end() const { return whole_end_; }
  uint64_t mask() const { return mask_; }
  uint64_t opens() const { return opens_; }

 private:
  // The block at p: base_ = p, mask_ its skim bytes (none from n on).
  void Classify(size_t p) {
    base_ = p;
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
    if (p + 64 <= whole_end_) {
      const SkimMasks m = ClassifySkimAvx2(s_ + p);
      mask_ = m.skim;
      opens_ = m.opens;
      return;
    }
    // s[p, p + 64) lies in the input and its padding while p + 48 <= n.
    if (p + 64 <= part_end_) {
      const uint64_t in = (uint64_t{1} << (n_ - p)) - 1;
      const SkimMasks m = ClassifySkimAvx2(s_ + p);
      mask_ = m.skim & in;
      opens_ = m.opens & in;
      return;
    }
#endif
    mask_ = opens_ = 0;
    for (size_t k = 0; k < 64 && p + k < n_; ++k) {
      mask_ |= static_cast<uint64_t>(kSkim.byte[s_[p + k]]) << k;
      opens_ |= static_cast<uint64_t>(s_[p + k] == '(') << k;
    }
  }

  const unsigned char* s_;
  size_t n_;
  size_t whole_end_ = 0, part_end_ = 0;  // AVX2: n_ and n_ + 16; else 0
  size_t base_ = ~size_t{0} / 2;  // far from any p: the first Next classifies
  uint64_t mask_ = 0, opens_ = 0;
};

class FastDriver;

class Lexer {
 public:
  Lexer(std::string_view src, size_t begin, TokenBuffer<Tok>* toks, LexOutput* out)
      : s_(src.data()), n_(src.size()), p_(begin), toks_(*toks), out_(out), cursor_(s_, n_) {}

  // The fast path (Note [Fast path for C++]): the driver says where to lex.
  void set_driver(FastDriver* driver) { driver_ = driver; }

  void Run() {
    if (driver_ != nullptr) Boundary();
    while (!failed_ && p_ < n_) {
      if (skim_) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
        if (cursor_.avx2()) {
          SkimBmi();
          continue;
        }
#endif
        Skim();
      } else {
        // A name not before a quote (which may make it a literal's prefix:
        // Step decides) here, not in a call of Step: half the tokens lexed.
        const unsigned char c = static_cast<unsigned char>(s_[p_]);
        if (kCppIdentStart[c]) {
          size_t q = p_ + 1;
          while (kCppIdent[static_cast<unsigned char>(s_[q])]) ++q;  // padding stops it
          if (s_[q] != '"' && s_[q] != '\'') {
            EmitAlways(kName, p_, q);
            p_ = q;
            while (s_[p_] == ' ') ++p_;
            continue;
          }
        }
        Step();
        while (s_[p_] == ' ') ++p_;  // (a Step less a run of spaces; the padding stops it)
      }
    }
    if (!failed_ && !conds_.empty() && conds_.back().skipping_at_eof) {
      Fail(conds_.back().at, "unterminated conditional directive");
    }
  }

 private:
  struct Cond {
    size_t at;                // offset of its #if
    bool definitely_taken;    // a branch whose condition was true was lexed
    bool skipping_at_eof = false;
  };

  void Fail(size_t at, std::string message) {
    failed_ = true;
    out_->Fail(static_cast<uint32_t>(at), std::move(message));
  }

  // A token; while skimming, only what the resolver needs of the skimmed
  // code (EmitAlways) is kept.
  void Emit(Tk type, size_t start, size_t end) {
    if (skim_) {
      line_start_ = false;
      return;
    }
    EmitAlways(type, start, end);
  }

  void EmitAlways(Tk type, size_t start, size_t end, bool prev_active = false) {
    Tok* t = toks_.Add();
    t->start = static_cast<uint32_t>(start);
    t->end = static_cast<uint32_t>(end);
    t->type = type;
    t->directive = in_directive_;
    t->prev_active = prev_active;
    line_start_ = false;
  }

  bool IsNewline(size_t i) const { return s_[i] == '\n' || s_[i] == '\r'; }
  size_t SkipNewlineAt(size_t i) const {
    return (s_[i] == '\r' && i + 1 < n_ && s_[i + 1] == '\n') ? i + 2 : i + 1;
  }

  void Newline() {
    p_ = SkipNewlineAt(p_);
    line_start_ = true;
    in_directive_ = false;
  }

  // A `//` comment (a backslash-newline continues it). p_ at the first '/'.
  // (Its end and its markers in one pass: Note [Comments in one pass with
  // their end] in scan_source.cc.)
  void LineComment() { p_ = NoteLineComment(s_, p_, n_, out_); }

  // A `/* */` comment; p_ at the '/'. Returns false if it is not closed.
  bool BlockComment() {
    const size_t end = NoteBlockComment(s_, p_, n_, out_);
    if (end == std::string_view::npos) {
      Fail(p_, "unterminated comment");
      return false;
    }
    p_ = end;
    return true;
  }

  void Step() {
    const unsigned char c = static_cast<unsigned char>(s_[p_]);
    if (IsIdentStart(c) || c == '$') {
      size_t q = p_ + 1;
      while (kCppIdent[static_cast<unsigned char>(s_[q])]) ++q;  // padding stops it
      if ((s_[q] == '"' || s_[q] == '\'') && q - p_ <= 3) {
        const std::string_view id(s_ + p_, q - p_);
        const bool raw = s_[q] == '"' && (id == "R" || id == "LR" || id == "uR" || id == "UR" ||
                                          id == "u8R");
        const bool enc = id == "L" || id == "u" || id == "U" || id == "u8";
        if (raw) {
          const size_t start = p_;
          p_ = q;
          RawString(start);
          return;
        }
        if (enc) {
          const size_t start = p_;
          p_ = q;
          Quoted(start, s_[q]);
          return;
        }
      }
      Emit(kName, p_, q);
      p_ = q;
      return;
    }
    switch (c) {
      case ' ':
      case '\t':
      case '\f':
      case '\v':
        ++p_;
        while (s_[p_] == ' ') ++p_;
        return;
      case '\n':
      case '\r':
        Newline();
        return;
      case '\\':
        if (p_ + 1 < n_ && IsNewline(p_ + 1)) {  // a line continuation
          p_ = SkipNewlineAt(p_ + 1);
          return;
        }
        Emit(kOther, p_, p_ + 1);
        ++p_;
        return;
      case '/':
        if (p_ + 1 < n_ && s_[p_ + 1] == '/') {
          LineComment();
          return;
        }
        if (p_ + 1 < n_ && s_[p_ + 1] == '*') {
          const bool at_line_start = line_start_;
          if (BlockComment()) line_start_ = at_line_start;
          return;
        }
        Emit(kOther, p_, p_ + 1);
        ++p_;
        return;
      case '#':
        if (line_start_ && !in_directive_) {
          Directive();
          return;
        }
        Emit(kOther, p_, p_ + 1);
        ++p_;
        return;
      case '"':
      case '\'':
        Quoted(p_, static_cast<char>(c));
        return;
      case ':':
        if (p_ + 1 < n_ && s_[p_ + 1] == ':') {
          Emit(kColon2, p_, p_ + 2);
          p_ += 2;
          return;
        }
        Emit(kOther, p_, p_ + 1);
        ++p_;
        return;
      case '-':
        if (p_ + 1 < n_ && s_[p_ + 1] == '>') {
          Emit(kArrow, p_, p_ + 2);
          p_ += 2;
          return;
        }
        Emit(kOther, p_, p_ + 1);
        ++p_;
        return;
      case '.':
        if (p_ + 1 < n_ && IsDigit(static_cast<unsigned char>(s_[p_ + 1]))) {
          Number();
          return;
        }
        Emit(kDot, p_, p_ + 1);
        ++p_;
        return;
      case '=':
        if (p_ + 1 < n_ && s_[p_ + 1] == '=') {
          Emit(kOther, p_, p_ + 2);
          p_ += 2;
          return;
        }
        Emit(kAssign, p_, p_ + 1);
        ++p_;
        return;
      case '(': Emit(kLParen, p_, p_ + 1); ++p_; ++parens_; return;
      case ')':
        Emit(kRParen, p_, p_ + 1);
        ++p_;
        if (parens_ > 0) --parens_;
        return;
      case '{': Structural(kLBrace); return;
      case '}': Structural(kRBrace); return;
      case '[': Emit(kLBrack, p_, p_ + 1); ++p_; return;
      case ']': Emit(kRBrack, p_, p_ + 1); ++p_; return;
      case ';': Structural(kSemi); return;
      case ',': Emit(kComma, p_, p_ + 1); ++p_; return;
      case '<': Emit(kLess, p_, p_ + 1); ++p_; return;
      case '>': Emit(kGreater, p_, p_ + 1); ++p_; return;
      default:
        if (IsDigit(c)) {
          Number();
          return;
        }
        Emit(kOther, p_, p_ + 1);
        ++p_;
        return;
    }
  }

  // '{', '}' or ';' at p_: kept while skimming too. Outside parentheses it
  // ends a stretch (Note [Fast path for C++]).
  void Structural(Tk type) {
    EmitAlways(type, p_, p_ + 1);
    ++p_;
    if (parens_ == 0 && driver_ != nullptr) Boundary();
  }

  // Where a stretch ends: remembers the state to come back to, and (after
  // lexed code) asks the driver whether to skim on. Defined below FastDriver.
  void Boundary();
  // A needle behind p_ lies in what the last step of the skim read whole (a
  // comment, a literal, a directive's text or a group not compiled: the
  // step before stopped short of it), which has no name token to lex; with
  // needles of identifier bytes only, the needle ends there too, and the
  // skim goes on. Otherwise it lexes the stretch.
  void SkipHitsBehind();

  void Snapshot() {
    snap_p_ = p_;
    snap_toks_ = toks_.size();
    snap_sups_ = out_->suppressions.size();
    snap_line_start_ = line_start_;
    snap_in_directive_ = in_directive_;
    conds_saved_ = false;
  }

  // Back to the last boundary, to lex from there (Note [Fast path for C++]).
  void Rewind() {
    p_ = snap_p_;
    toks_.Truncate(snap_toks_);
    out_->suppressions.resize(snap_sups_);
    line_start_ = snap_line_start_;
    in_directive_ = snap_in_directive_;
    parens_ = 0;
    if (conds_saved_) conds_ = conds_snapshot_;
    skim_ = false;
    semi_at_ = SIZE_MAX;
  }

  // The skim (Note [Fast path for C++]): from p_ on, skim byte to skim
  // byte, each handled as Step would, only the structural tokens kept; the
  // parentheses, ';' and braces in a loop here, the rest one at a time by
  // SkimSpecial. line_start_ and in_directive_ are lazy here: they hold at
  // ls_from_, the '\n' from there on not looked at yet (Settle looks). A run
  // of ';' the skim keeps with nothing between is one token (the last), as
  // the resolver and the literal rules ignore skimmed ';' but for the one a
  // stretch starts after. Not inlined: inlined into Run (and so into
  // ScanCpp, the whole lexer with it), GCC kept the '(' count and the input
  // on the stack and loaded them at every skim byte; on its own it keeps
  // them in registers. Compiled twice (the one body, SkimBody): SkimBmi
  // runs where the skim classifies with AVX2, which it does only with BMI1
  // as well (every CPU with AVX2 has it), whose `blsr` clears a mask's
  // lowest bit in one instruction, not two (with BMI2 too, GCC's code took
  // 0.5M instructions more on the C/C++ files of the 20 MB tree; a flag of
  // its own for BMI1 in the cursor, 0.7M more), and for AVX2, whose blocks it
  // classifies itself (Note [Skim blocks classified in the loop]).
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
  __attribute__((noinline, target("avx2,bmi"))) void SkimBmi() { SkimBody<true>(); }
#endif
  __attribute__((noinline)) void Skim() { SkimBody<false>(); }
  template <bool kAvx2>
  __attribute__((always_inline)) inline void SkimBody() {
    if (next_hit_ < p_) SkipHitsBehind();
    if (next_hit_ < p_) {
      Rewind();
      return;
    }
    const size_t entry = p_;  // a token boundary
    const char* const s = s_;
    // Locals, not members, in the loop (the stores through toks_ may alias
    // a member, and the members' loads are per skim byte): the '(' open, the
    // tokens kept, the ';' the next may replace (semi_at_), and the boundary
    // found last (Snapshot's state there: after a kept token, so no line
    // start; the suppressions do not change in the loop), written back when
    // the loop ends. line_start_ is not written for a kept token: like a
    // division's, its effect is Settle's to find (Note [Divisions in the
    // skim]). The '(' test is marked likely, though a third of the skim
    // bytes are '(': so marked, GCC keeps the '(' count in a register (it
    // had spilled it, a load and a store for each parenthesis: 0.24M
    // instructions more on the C/C++ files of the 20 MB tree), and reads
    // the input for a division's next byte through s_ for the same reason.
    // (The ';' the next may replace as a pointer to its token, not through
    // toks_ at each ';'; the boundary's in_directive_ read from its token
    // when the loop ends, where it had been kept at each boundary.)
    int parens = parens_;
    size_t ntok = toks_.size();
    Tok* semi = ntok != 0 && semi_at_ == ntok ? &toks_.back() : nullptr;
    size_t snap_p = SIZE_MAX;
    size_t snap_ntok = 0;
    const auto leave = [&] {
      parens_ = parens;
      semi_at_ = semi != nullptr ? ntok : SIZE_MAX;
      if (snap_p != SIZE_MAX) {
        snap_p_ = snap_p;
        snap_toks_ = snap_ntok;
        snap_sups_ = out_->suppressions.size();
        snap_line_start_ = false;
        snap_in_directive_ = toks_[snap_ntok - 1].directive;  // the boundary's
        conds_saved_ = false;
      }
    };
    size_t base = cursor_.Block(p_);
    uint64_t whole = cursor_.mask();  // the block's skim bytes
    uint64_t opens = cursor_.opens();
    uint64_t mask = whole & (~uint64_t{0} << (p_ - base));
    // Note [Skim blocks classified in the loop] (where kAvx2).
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
    std::conditional_t<kAvx2, SkimTables, char> tables{};
    if constexpr (kAvx2) tables = LoadSkimTables();
    const size_t whole_end = cursor_.whole_end();
#endif
    // The cursor's block from here on (where the loop classified it, the
    // cursor's Previous asks for it; else it holds it already).
    const auto give_back = [&] { cursor_.Take(base, whole, opens); };
    // Where the skim stops: the next needle, or the end (one test a block).
    const size_t stop = std::min(next_hit_, n_);
    for (;;) {
      // The skim bytes of the block at base, up to the next needle.
      const size_t left = stop - base;
      if (left < 64) mask &= (uint64_t{1} << left) - 1;
      for (; mask != 0; mask &= mask - 1) {
        const unsigned k = static_cast<unsigned>(__builtin_ctzll(mask));
        if (__builtin_expect(opens >> k & 1, 1)) {
          ++parens;
          continue;
        }
        const size_t q = base + k;
        const char c = s[q];
        if (c == ')') {
          if (parens > 0) --parens;
          continue;
        }
        if (c == ';' || c == '{' || c == '}') {
          if (in_directive_) Settle(q);
          const bool dir = in_directive_;
          if (c == ';' && semi != nullptr && semi->directive == dir) {
            semi->start = static_cast<uint32_t>(q);
            semi->end = static_cast<uint32_t>(q + 1);
          } else {
            Tok* t = toks_.Add();
            t->start = static_cast<uint32_t>(q);
            t->end = static_cast<uint32_t>(q + 1);
            t->type = c == ';' ? kSemi : c == '{' ? kLBrace : kRBrace;
            t->directive = dir;
            t->prev_active = false;
            ++ntok;
            semi = c == ';' ? t : nullptr;
          }
          if (parens == 0) {
            snap_p = q + 1;
            snap_ntok = ntok;
          }
          continue;
        }
        // A '/' that opens no comment (a division): nothing to keep, and
        // line_start_ is lazy (Note [Divisions in the skim]).
        if (c == '/' && s_[q + 1] != '/' && s_[q + 1] != '*') continue;
        leave();
        give_back();
        p_ = q;
        SkimSpecial(q, entry);
        return;
      }
      if (left <= 64) {
        leave();
        give_back();
        if (stop == next_hit_) {  // a needle before the next skim byte
          Rewind();
        } else {
          p_ = n_;
        }
        return;
      }
      base += 64;
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
      if constexpr (kAvx2) {
        if (base + 64 <= whole_end) {
          const SkimMasks m =
              ClassifySkim(tables, reinterpret_cast<const unsigned char*>(s) + base);
          whole = m.skim;
          opens = m.opens;
          mask = whole;
          continue;
        }
      }
#endif
      cursor_.Next(base);
      whole = mask = cursor_.mask();
      opens = cursor_.opens();
    }
  }

  // Note [Divisions in the skim]: a '/' is a skim byte, as it may open a
  // comment, but most are divisions (14k of the 19k skim bytes that left
  // the skim's loop on the C/C++ files of the 20 MB tree, each a return to
  // Run, a SkimSpecial and a new Skim: about 120 instructions). One that
  // opens no comment (the next byte is neither '/' nor '*') is passed in
  // the loop: it keeps no token, and what SkimSpecial did with it (set
  // line_start_ false, settle in_directive_ to it, move ls_from_ past it)
  // Settle does where either is asked: from ls_from_, at or before the
  // '/', it finds the same last '\n' and, with none after the '/', passes
  // the '/' itself, not a space. (Previous, for a quote's prefix, finds the
  // '/' as a skim byte either way.) 51.81M to 50.76M instructions on
  // those files. A brace or ';' the skim keeps needs no line_start_ either,
  // for the same reason (the token is no space).
  //
  // Brings line_start_ and in_directive_ (lazy while skimming: see Skim)
  // up to q: the last '\n' in [ls_from_, q), then the bytes after it.
  void Settle(size_t q) {
    if (q <= ls_from_) return;
    if (const void* nl = memrchr(s_ + ls_from_, '\n', q - ls_from_)) {
      line_start_ = true;
      in_directive_ = false;
      ls_from_ = static_cast<size_t>(static_cast<const char*>(nl) - s_) + 1;
    }
    for (size_t k = ls_from_; line_start_ && k < q; ++k) {
      if (!IsSpace(s_[k])) line_start_ = false;
    }
    ls_from_ = q;
  }

  // Whether the lexer is at a line start at q (no token since the newline).
  bool LineStartAt(size_t q) {
    Settle(q);
    return line_start_;
  }

  // The rest of the skim bytes, at p_ == q; `entry` where Skim began. Each
  // leaves line_start_ and in_directive_ as they are at p_ (ls_from_).
  void SkimSpecial(size_t q, size_t entry) {
    if (in_directive_) Settle(q);
    switch (s_[q]) {
      case '\r':
        Newline();
        break;
      case '"':
      case '\'': {
        // Where a token starts: after the last skim byte (plain code between).
        const size_t from = cursor_.Previous(q, entry);
        const char b = q > from ? s_[q - 1] : ' ';
        if (IsIdentChar(static_cast<unsigned char>(b)) || b == '$' || b == '.' || b == '+' ||
            b == '-') {
          // An encoding prefix, a raw string or a digit separator, maybe:
          // the tokens from `from` on decide, as the full lexer reads them.
          p_ = from;
          while (!failed_ && p_ <= q) Step();
        } else {
          Quoted(q, s_[q]);
        }
        line_start_ = false;
        break;
      }
      case '/':
        if (s_[q + 1] == '/') {
          LineComment();  // up to the '\n' (or the end), which Settle finds
          line_start_ = false;
        } else if (s_[q + 1] == '*') {
          const bool at_line_start = LineStartAt(q);
          if (BlockComment()) line_start_ = at_line_start;
        } else {
          line_start_ = false;
          ++p_;
        }
        break;
      case '#':
        if (LineStartAt(q) && !in_directive_) {
          Directive();
        } else {
          line_start_ = false;
          ++p_;
        }
        break;
      case '\\':
        if (q + 1 < n_ && IsNewline(q + 1)) {
          LineStartAt(q);
          p_ = SkipNewlineAt(q + 1);
        } else {
          line_start_ = false;
          ++p_;
        }
        break;
      default:
        break;  // cannot happen: Skim handles the other skim bytes
    }
    ls_from_ = p_;
  }

  // A pp-number: digits, letters, '.', digit separators, exponent signs.
  void Number() {
    const size_t start = p_;
    ++p_;
    while (p_ < n_) {
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (IsIdentChar(c) || c == '.') {
        ++p_;
      } else if (c == '\'' && p_ + 1 < n_ && IsIdentChar(static_cast<unsigned char>(s_[p_ + 1]))) {
        p_ += 2;
      } else if ((c == '+' || c == '-') &&
                 (s_[p_ - 1] == 'e' || s_[p_ - 1] == 'E' || s_[p_ - 1] == 'p' ||
                  s_[p_ - 1] == 'P')) {
        ++p_;
      } else {
        break;
      }
    }
    Emit(kLiteral, start, p_);
  }

  // A string or character literal; p_ at the opening quote, `start` at its
  // encoding prefix.
  void Quoted(size_t start, char quote) {
    ++p_;
    for (;;) {
      while (p_ < n_ && s_[p_] != quote && s_[p_] != '\\' && !IsNewline(p_)) ++p_;
      if (p_ >= n_ || IsNewline(p_)) {
        Fail(start, quote == '"' ? "unterminated string literal" : "unterminated character literal");
        return;
      }
      if (s_[p_] == '\\') {
        if (p_ + 1 < n_ && IsNewline(p_ + 1)) {
          p_ = SkipNewlineAt(p_ + 1);
        } else {
          p_ += 2;
        }
        continue;
      }
      ++p_;
      break;
    }
    Emit(kLiteral, start, p_);
  }

  // R"delim( ... )delim"; p_ at the quote.
  void RawString(size_t start) {
    size_t q = p_ + 1;
    while (q < n_ && q - p_ - 1 <= 16 && s_[q] != '(') {
      const char c = s_[q];
      if (c == ' ' || c == ')' || c == '\\' || c == '\t' || c == '\v' || c == '\f' ||
          c == '\n' || c == '\r' || c == '"') {
        break;
      }
      ++q;
    }
    if (q >= n_ || s_[q] != '(') {
      Fail(start, "invalid raw string delimiter");
      return;
    }
    std::string close = ")";
    close.append(s_ + p_ + 1, q - p_ - 1);
    close += '"';
    const std::string_view rest(s_ + q + 1, n_ - q - 1);
    const size_t at = rest.find(close);
    if (at == std::string_view::npos) {
      Fail(start, "unterminated raw string literal");
      return;
    }
    p_ = q + 1 + at + close.size();
    Emit(kLiteral, start, p_);
  }

  // Note [Directive lines a run at a time]: the rest of a directive's line
  // (and each line of a group not compiled) went byte by byte, about ten
  // instructions a byte for an `#include <c10/cuda/CUDAStream.h>`, and its
  // text, where kept, a `+=` a byte. What stops that walk is a '\n', a
  // '\r', a backslash (a continuation) or a '/' (a comment): the first of
  // them at or after k (or n_), 16 bytes a step (the padding makes the reads
  // past n_ safe), and the bytes before it are passed, or appended, whole.
  size_t DirectiveStop(size_t k) const {
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    const __m128i bs = _mm_set1_epi8('\\'), slash = _mm_set1_epi8('/');
    for (; k < n_; k += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s_ + k));
      const uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)),
                       _mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, slash)))));
      if (m != 0) return std::min(k + static_cast<size_t>(__builtin_ctz(m)), n_);
    }
    return n_;
#else
    while (k < n_ && !IsNewline(k) && s_[k] != '\\' && s_[k] != '/') ++k;
    return k;
#endif
  }

  // Skips to the end of the directive line (continuations and comments
  // included) and returns its text, comments cut out, trimmed (`keep`
  // false: the empty string, for the directives whose text is not read).
  std::string DirectiveRest(bool keep = true) {
    std::string text;
    while (p_ < n_) {
      const size_t stop = DirectiveStop(p_);  // Note [Directive lines a run at a time]
      if (keep) text.append(s_ + p_, stop - p_);
      p_ = stop;
      if (p_ >= n_) break;
      const char c = s_[p_];
      if (IsNewline(p_)) break;
      if (c == '\\' && p_ + 1 < n_ && IsNewline(p_ + 1)) {
        p_ = SkipNewlineAt(p_ + 1);
        if (keep) text += ' ';
        continue;
      }
      if (c == '/' && p_ + 1 < n_ && s_[p_ + 1] == '/') {
        LineComment();
        break;
      }
      if (c == '/' && p_ + 1 < n_ && s_[p_ + 1] == '*') {
        if (!BlockComment()) return text;
        if (keep) text += ' ';
        continue;
      }
      if (keep) text += c;
      ++p_;
    }
    if (!keep) return text;
    size_t b = 0, e = text.size();
    while (b < e && IsSpace(text[b])) ++b;
    while (e > b && IsSpace(text[e - 1])) --e;
    return text.substr(b, e - b);
  }

  // Note [Comments in a directive's name]: the preprocessor reads a comment
  // as one space and splices continued lines before it looks for
  // directives, so `#/**/if 0`, `# /* x */ endif` and `#\<newline>if 0` are
  // `#if 0` and `#endif`. Skips those (and the spaces) at p_; `lexed`: the
  // comments are the lexer's (noted for suppressions, an unterminated one
  // an error), else they lie in a group that is not compiled (skipped as
  // SkipGroup skips them).
  void SkipDirectiveSpace(bool lexed) {
    for (;;) {
      while (p_ < n_ && IsSpace(s_[p_])) ++p_;
      if (p_ + 1 < n_ && s_[p_] == '/' && s_[p_ + 1] == '*') {
        if (lexed) {
          if (!BlockComment()) return;
        } else {
          const size_t close = std::string_view(s_ + p_ + 2, n_ - p_ - 2).find("*/");
          p_ = close == std::string_view::npos ? n_ : p_ + 2 + close + 2;
        }
        continue;
      }
      if (s_[p_] == '\\' && p_ + 1 < n_ && IsNewline(p_ + 1)) {
        p_ = SkipNewlineAt(p_ + 1);
        continue;
      }
      return;
    }
  }

  // Reads `# name` at p_ (the '#'); returns the name, p_ after it (Note
  // [Comments in a directive's name]).
  std::string_view DirectiveName(bool lexed = true) {
    ++p_;
    SkipDirectiveSpace(lexed);
    const size_t b = p_;
    while (p_ < n_ && IsIdentChar(static_cast<unsigned char>(s_[p_]))) ++p_;
    return std::string_view(s_ + b, p_ - b);
  }

  // -1: false, +1: true, 0: unknown.
  static int Evaluate(std::string_view name, const std::string& cond) {
    if (name != "if" && name != "elif") return 0;
    std::string_view c = cond;
    while (c.size() >= 2 && c.front() == '(' && c.back() == ')') {
      c = c.substr(1, c.size() - 2);
      while (!c.empty() && IsSpace(c.front())) c.remove_prefix(1);
      while (!c.empty() && IsSpace(c.back())) c.remove_suffix(1);
    }
    if (c == "0" || c == "false" || c == "0L" || c == "0U") return -1;
    if (c == "1" || c == "true") return 1;
    return 0;
  }

  void Directive() {
    if (driver_ != nullptr && !conds_saved_) {  // for Rewind
      conds_snapshot_ = conds_;
      conds_saved_ = true;
    }
    const size_t hash = p_;
    const std::string_view name = DirectiveName();
    if (name == "if" || name == "ifdef" || name == "ifndef") {
      const int v = Evaluate(name, DirectiveRest());
      conds_.push_back(Cond{hash, v > 0});
      EmitAlways(kPpIf, hash, hash + 1);
      if (v < 0) SkipGroup();
      return;
    }
    if (name == "elif" || name == "else" || name == "elifdef" || name == "elifndef") {
      const std::string cond = DirectiveRest();
      if (conds_.empty()) return;  // stray: ignore
      Cond& cond_frame = conds_.back();
      if (cond_frame.definitely_taken) {
        EmitAlways(kPpElse, hash, hash + 1, true);
        SkipGroup();
        return;
      }
      const int v = name == "else" ? 0 : Evaluate(name, cond);
      EmitAlways(kPpElse, hash, hash + 1, true);
      if (v < 0) {
        SkipGroup();
      } else if (v > 0) {
        cond_frame.definitely_taken = true;
      }
      return;
    }
    if (name == "endif") {
      DirectiveRest(false);
      if (conds_.empty()) return;
      conds_.pop_back();
      EmitAlways(kPpEndif, hash, hash + 1, true);
      return;
    }
    if (name == "include" || name == "include_next" || name == "import" || name == "error" ||
        name == "warning" || name == "line" || name == "ident" || name == "sccs" ||
        name == "assert" || name == "unassert") {
      DirectiveRest(false);
      return;
    }
    // #define, #undef, #pragma and the rest: the line is lexed as code.
    in_directive_ = true;
    line_start_ = false;
  }

  // Skips the lines of a group that is not compiled, up to the #elif/#else
  // that starts a branch to lex or past the #endif that ends it. p_ is on the
  // directive line that began the skipped branch.
  void SkipGroup() {
    int nested = 0;
    // Finish the current line.
    while (p_ < n_ && !IsNewline(p_)) ++p_;
    while (p_ < n_) {
      p_ = SkipNewlineAt(p_);
      // A line of the skipped group (a comment before its '#' is a space).
      SkipDirectiveSpace(false);
      if (p_ < n_ && s_[p_] == '#') {
        const size_t hash = p_;
        const std::string_view name = DirectiveName(false);
        if (name == "if" || name == "ifdef" || name == "ifndef") {
          ++nested;
        } else if (name == "endif") {
          if (nested == 0) {
            DirectiveRest(false);
            conds_.pop_back();
            EmitAlways(kPpEndif, hash, hash + 1, false);
            line_start_ = true;
            return;
          }
          --nested;
        } else if (nested == 0 &&
                   (name == "elif" || name == "else" || name == "elifdef" ||
                    name == "elifndef")) {
          const std::string cond = DirectiveRest();
          Cond& frame = conds_.back();
          if (!frame.definitely_taken) {
            const int v = name == "else" ? 0 : Evaluate(name, cond);
            if (v >= 0) {
              if (v > 0) frame.definitely_taken = true;
              EmitAlways(kPpElse, hash, hash + 1, false);
              line_start_ = true;
              return;
            }
          }
          if (p_ >= n_) break;
          continue;
        }
      }
      // The rest of the line, with its continuations and comments.
      while (p_ < n_ && !IsNewline(p_)) {
        p_ = DirectiveStop(p_);
        if (p_ >= n_ || IsNewline(p_)) break;
        if (s_[p_] == '\\' && p_ + 1 < n_ && IsNewline(p_ + 1)) {
          p_ = SkipNewlineAt(p_ + 1);
          continue;
        }
        if (s_[p_] == '/' && p_ + 1 < n_ && s_[p_ + 1] == '*') {
          const std::string_view rest(s_ + p_ + 2, n_ - p_ - 2);
          const size_t close = rest.find("*/");
          p_ = close == std::string_view::npos ? n_ : p_ + 2 + close + 2;
          continue;
        }
        if (s_[p_] == '/' && p_ + 1 < n_ && s_[p_ + 1] == '/') {
          while (p_ < n_ && !IsNewline(p_)) ++p_;
          break;
        }
        ++p_;
      }
    }
    conds_.back().skipping_at_eof = true;
  }

  const char* s_;
  size_t n_;
  size_t p_;
  TokenBuffer<Tok>& toks_;
  LexOutput* out_;
  std::vector<Cond> conds_;
  bool line_start_ = true;
  bool in_directive_ = false;
  bool failed_ = false;
  int parens_ = 0;  // '(' not closed yet (a ')' with none open counts nothing)
  // The fast path's (Note [Fast path for C++]); driver_ null: the full path.
  FastDriver* driver_ = nullptr;
  SkimCursor cursor_;
  bool skim_ = false;
  size_t next_hit_ = SIZE_MAX;  // the next needle at or after the last boundary
  // The state at the last boundary.
  size_t snap_p_ = 0, snap_toks_ = 0, snap_sups_ = 0;
  bool snap_line_start_ = true, snap_in_directive_ = false;
  size_t ls_from_ = 0;  // see Skim
  size_t semi_at_ = SIZE_MAX;  // toks_.size() just after the skim kept a ';' (see Skim)
  bool conds_saved_ = false;  // conds_snapshot_ holds conds_ at the last boundary
  std::vector<Cond> conds_snapshot_;
};

// The end offset of the ')' that closes the '(' at token i of toks[0, n), or
// -1. The first call matches every parenthesis (each ')' with the nearest '('
// before it still open: what counting the depth forwards from i finds), so
// nested calls cost one pass in all, not a scan each; a later call with a
// larger n (the fast path feeds the resolver stretch by stretch) goes on
// from where the last one stopped.
class ParenMatch {
 public:
  int64_t End(const TokenBuffer<Tok>& t, size_t i, size_t n) {
    if (i >= n) return -1;
    if (t[i].type != kLParen) {  // not a call's '(': the first one after it
      int d = 0;
      for (size_t k = i; k < n; ++k) {
        if (t[k].type == kLParen) {
          ++d;
        } else if (t[k].type == kRParen && --d == 0) {
          return t[k].end;
        }
      }
      return -1;
    }
    if (end_.size() < n) {
      end_.resize(n, -1);
      // The '(' open on a stack as deep as the tokens, read and written
      // through raw pointers (a push_back and a pointer reload a token were
      // most of this loop).
      if (opens_.size() < n) opens_.resize(n);
      const Tok* const toks = &t[0];
      int64_t* const ends = end_.data();
      uint32_t* const opens = opens_.data();
      size_t top = top_;
      for (size_t k = end_done_; k < n; ++k) {
        const Tk type = toks[k].type;
        if (type == kLParen) {
          opens[top++] = static_cast<uint32_t>(k);
        } else if (type == kRParen && top != 0) {
          ends[opens[--top]] = toks[k].end;
        }
      }
      top_ = top;
      end_done_ = n;
    }
    return end_[i];
  }

  // For the next file.
  void Reset() {
    end_.clear();
    top_ = 0;
    end_done_ = 0;
  }
  // Frees what a huge file made it take.
  void Trim() {
    if (end_.capacity() > (size_t{1} << 20)) {
      end_ = std::vector<int64_t>();
      opens_ = std::vector<uint32_t>();
    }
  }

 private:
  std::vector<int64_t> end_;
  std::vector<uint32_t> opens_;  // a stack: opens_[0, top_)
  size_t top_ = 0;
  size_t end_done_ = 0;
};

// ---------------------------------------------------------------------------
// The resolver.

class Resolver {
 public:
  Resolver(const RuleSet& rules, std::string_view src, const TokenBuffer<Tok>& toks,
           ParenMatch* parens, LexOutput* out)
      : rules_(rules), src_(src), t_(toks), out_(out),
        max_(rules.MaxComponents(Language::kCpp)), parens_(*parens) {
    names_.reserve(16);
    scratch_.reserve(128);
  }

  // Resolves the tokens up to n (the fast path feeds it stretch by stretch:
  // Note [Fast path for C++]); Finish after the last.
  void Feed(size_t n) {
    limit_ = n;
    size_t i = next_;
    if (i >= n) return;
    const Tok* const toks = &t_[0];  // (not reloaded each token)
    for (; i < n; ++i) {
      const Tok& tok = toks[i];
      const bool directive = tok.directive;
      switch (tok.type) {
        case kLBrace:
          if (directive) break;
          ++depth_;
          if (pending_namespace_) {
            Push(Entry{kNamespace, depth_, {}, pending_namespace_name_});
            pending_namespace_ = false;
          }
          break;
        case kRBrace:
          if (directive) break;
          if (depth_ > 0) --depth_;
          PopTo(depth_);
          break;
        case kSemi:
          pending_namespace_ = false;
          break;
        case kPpIf:
          conds_.push_back(CondDepth{depth_, -1});
          break;
        case kPpElse:
          if (!conds_.empty()) {
            CondDepth& c = conds_.back();
            if (tok.prev_active && c.first_end < 0) c.first_end = depth_;
            depth_ = c.at_if;
            PopTo(depth_);
          }
          break;
        case kPpEndif:
          if (!conds_.empty()) {
            CondDepth c = conds_.back();
            conds_.pop_back();
            if (tok.prev_active && c.first_end < 0) c.first_end = depth_;
            if (c.first_end >= 0) {
              depth_ = c.first_end;
              PopTo(depth_);
            }
          }
          break;
        case kName:
          i = Name(i, directive);
          break;
        default:
          break;
      }
    }
    next_ = i;
  }

  void Finish() { DropShimmed(); }

  // For the fast path: how often an entry was pushed (a pop only makes
  // fewer needles necessary), whether a namespace waits for its '{', and
  // the needles the entries in scope call for.
  uint64_t pushes() const { return pushes_; }
  bool pending_namespace() const { return pending_namespace_; }

  // Appends to *needles the names that the entries in scope let resolve
  // without a fast-path needle in them (Note [Fast path for C++]): a name
  // an alias or a using-declaration binds; for a namespace of the rules'
  // that encloses, and for each of its enclosing ones, the components that
  // follow it in a spelling; the same for the target of a using-directive.
  // Stops, returning false, past `limit` of them (so that a file of many
  // using-declarations costs no more a boundary than a few).
  bool ContextNeedles(std::vector<std::string_view>* needles, size_t limit) const {
    for (const Entry& e : entries_) {
      if (needles->size() > limit) return false;
      switch (e.kind) {
        case kAlias:
        case kUsingDecl:
          needles->push_back(e.name);
          break;
        case kNamespace:
          if (e.target.empty() || !IsRoot(FirstComponent(e.target))) break;
          for (std::string_view ns = e.target;;) {
            AddFollowers(ns, needles);
            const size_t cut = ns.rfind("::");
            if (cut == std::string_view::npos) break;
            ns = ns.substr(0, cut);
          }
          break;
        case kDirective:
          AddFollowers(e.target, needles);
          break;
      }
    }
    return needles->size() <= limit;
  }

 private:
  enum EntryKind : uint8_t { kNamespace, kAlias, kUsingDecl, kDirective };
  struct Entry {
    EntryKind kind;
    int depth;
    std::string_view name;  // alias or using-declared name
    std::string target;     // the namespace or qualified name it stands for
  };
  struct CondDepth {
    int at_if;
    int first_end;
  };
  struct FollowerCache {
    const char* data;
    size_t size;
    const std::vector<std::string_view>* followers;
    bool rooted;
  };

  std::string_view Text(size_t i) const {
    return src_.substr(t_[i].start, t_[i].end - t_[i].start);
  }

  // Whether prefix::name begins a spelling (is one, or a namespace of one).
  // `prefix` (an entry's target, or a namespace of one) looked up once while
  // the entries stay as they are: whether its root is the rules', and what
  // follows it in the spellings.
  const FollowerCache& Lookup(std::string_view prefix) const {
    if (cache_version_ != version_) {
      for (FollowerCache& c : cache_) c.data = nullptr;
      cache_version_ = version_;
    }
    for (const FollowerCache& c : cache_) {
      if (c.data == prefix.data() && c.size == prefix.size()) return c;
    }
    FollowerCache& c = cache_[cache_next_];
    cache_next_ = (cache_next_ + 1) % 4;
    c = FollowerCache{prefix.data(), prefix.size(), rules_.Followers(Language::kCpp, prefix),
                      IsRoot(FirstComponent(prefix))};
    return c;
  }

  static bool Follows(const FollowerCache& c, std::string_view name) {
    return c.followers != nullptr &&
           std::find(c.followers->begin(), c.followers->end(), name) != c.followers->end();
  }

  void PopTo(int depth) {
    while (!entries_.empty() && entries_.back().depth > depth) {
      entries_.pop_back();
      ++version_;
    }
  }

  void Push(Entry e) {
    entries_.push_back(std::move(e));
    ++version_;
    ++pushes_;
  }

  // The components that follow `ns` in the spellings (c10::cuda: CUDAStream,
  // device_count, ...).
  void AddFollowers(std::string_view ns, std::vector<std::string_view>* needles) const {
    if (const std::vector<std::string_view>* f = rules_.Followers(Language::kCpp, ns)) {
      needles->insert(needles->end(), f->begin(), f->end());
    }
  }

  const std::string* CurrentNamespace() const {
    for (size_t k = entries_.size(); k-- > 0;) {
      if (entries_[k].kind == kNamespace) return &entries_[k].target;
    }
    return nullptr;
  }

  bool IsRoot(std::string_view name) const { return rules_.IsRoot(Language::kCpp, name); }

  // Keywords that may stand before a global `::name` (`return ::c10::x()`).
  static bool IsKeyword(std::string_view w) {
    static constexpr std::string_view kWords[] = {
        "return", "case", "throw", "new", "delete", "else", "do", "const", "volatile",
        "static", "inline", "extern", "virtual", "constexpr", "consteval", "constinit",
        "typename", "friend", "explicit", "mutable", "register", "thread_local", "co_return",
        "co_yield", "co_await", "sizeof", "alignof", "typedef", "goto", "int", "void",
        "char", "bool", "float", "double", "long", "short", "signed", "unsigned", "auto",
        "struct", "class", "union", "enum", "operator", "template", "noexcept", "public",
        "private", "protected", "__host__", "__device__", "__global__", "__forceinline__"};
    // By length (all are shorter than 16): only those of w's are compared.
    static const std::vector<std::string_view>* by_size = [] {
      auto* t = new std::vector<std::string_view>[16];
      for (std::string_view k : kWords) t[k.size()].push_back(k);
      return t;
    }();
    if (w.size() >= 16) return false;
    for (std::string_view k : by_size[w.size()]) {
      if (w == k) return true;
    }
    return false;
  }

  // Returns true if the ')' at token i closes `decltype(`.
  bool IsDecltype(size_t i) const {
    int d = 0;
    for (size_t k = i + 1; k-- > 0;) {
      if (t_[k].type == kRParen) {
        ++d;
      } else if (t_[k].type == kLParen && --d == 0) {
        return k > 0 && t_[k - 1].type == kName && Text(k - 1) == "decltype";
      }
    }
    return false;
  }

  bool IsBound(std::string_view name) const {
    // Most names asked are no bound name's length (a bit a length mod 64,
    // made again when the entries change): the entries' loop compared
    // every such name with each alias and using-declaration in scope.
    if (bound_version_ != version_) {
      bound_lengths_ = 0;
      for (const Entry& e : entries_) {
        if (e.kind == kAlias || e.kind == kUsingDecl) {
          bound_lengths_ |= uint64_t{1} << (e.name.size() & 63);
        }
      }
      bound_version_ = version_;
    }
    if ((bound_lengths_ >> (name.size() & 63) & 1) == 0) return false;
    for (const Entry& e : entries_) {
      if ((e.kind == kAlias || e.kind == kUsingDecl) && e.name == name) return true;
    }
    return false;
  }

  static std::string_view FirstComponent(std::string_view q) {
    return q.substr(0, q.find("::"));
  }

  // Reads [::]NAME(::NAME)* at i into *names; returns the index past it.
  size_t Qualified(size_t i, std::vector<size_t>* names, bool* absolute) const {
    names->clear();
    *absolute = false;
    if (t_[i].type == kColon2) {
      *absolute = true;
      ++i;
    }
    if (t_[i].type != kName) return i;
    names->push_back(i);
    while (t_[i + 1].type == kColon2 && t_[i + 2].type == kName) {
      i += 2;
      names->push_back(i);
    }
    return i + 1;
  }

  // Appends names[from..] to q, "::"-separated, up to max_ components.
  void AppendNames(std::string* q, const std::vector<size_t>& names, size_t from) const {
    int comps = q->empty() ? 0 : Components(*q);
    for (size_t k = from; k < names.size() && comps < max_; ++k, ++comps) {
      if (!q->empty()) q->append("::");
      q->append(Text(names[k]));
    }
  }

  // Returns the number of components of the longest spelling that is a
  // prefix of q at a "::" boundary, 0 if none.
  int LongestPrefix(std::string_view q, const RuleSet::Spelling** match) const {
    size_t ends[16];
    int n = 0;
    for (size_t k = 0; k + 1 < q.size() && n < 15; ++k) {
      if (q[k] == ':' && q[k + 1] == ':') {
        ends[n++] = k;
        ++k;
      }
    }
    ends[n++] = q.size();
    return LongestPrefix(q, ends, n, match);
  }

  // The same, with the ends of q's n components given (the last q.size()).
  int LongestPrefix(std::string_view q, const size_t* ends, int n,
                    const RuleSet::Spelling** match) const {
    for (int m = n < max_ ? n : max_; m >= 1; --m) {
      if (const RuleSet::Spelling* s = rules_.Find(Language::kCpp, q.substr(0, ends[m - 1]))) {
        *match = s;
        return m;
      }
    }
    return 0;
  }

  static int Components(std::string_view q) {
    int n = 1;
    for (size_t k = 0; k + 1 < q.size(); ++k) {
      if (q[k] == ':' && q[k + 1] == ':') {
        ++n;
        ++k;
      }
    }
    return n;
  }

  struct Resolution {
    const RuleSet::Spelling* spelling = nullptr;
    int used = 0;  // names of the chain the match covers
    std::string qualified;  // kept only where want_qualified
    bool want_qualified = false;
  };

  // Tries the candidate prefix + "::" + names[from..] (prefix empty: the
  // names alone). The first candidate whose root is one of the rules' is
  // kept in r->qualified, matched or not.
  bool Try(std::string_view prefix, const std::vector<size_t>& names, size_t from,
           Resolution* r) const {
    // A match that covers names[0] after a prefix starts with prefix::names[0],
    // a spelling or a namespace of the rules: most candidates end here.
    bool follows = true;
    if (prefix.empty()) {
      if (!IsRoot(from < names.size() ? Text(names[from]) : std::string_view())) return false;
    } else {
      const FollowerCache& c = Lookup(prefix);
      if (!c.rooted) return false;
      follows = from != 0 || Follows(c, Text(names[0]));
    }
    const bool keep = r->want_qualified && r->qualified.empty();
    if (!follows && !keep) return false;
    // The candidate: the source's own bytes where the names are written
    // `a::b::c` with nothing between (the common case), else built.
    std::string_view q;
    // Where q is the source's, its components' ends are the names' (no
    // scan of q for its "::"), for at most 15 "::" as LongestPrefix finds.
    size_t ends[16];
    int n = 0;
    if (prefix.empty() && from < names.size() && max_ > 0) {
      const size_t last = std::min(names.size(), from + static_cast<size_t>(max_)) - 1;
      const uint32_t start = t_[names[from]].start;
      bool joined = true;
      for (size_t k = from + 1; k <= last && joined; ++k) {
        joined = t_[names[k]].start == t_[names[k - 1]].end + 2;
        if (n < 15) ends[n++] = t_[names[k - 1]].end - start;
      }
      if (joined) {
        q = src_.substr(start, t_[names[last]].end - start);
        ends[n++] = q.size();
      }
    }
    if (q.empty()) {
      scratch_.assign(prefix);
      AppendNames(&scratch_, names, from);
      q = scratch_;
    }
    if (keep) r->qualified.assign(q);
    if (!follows) return false;
    const RuleSet::Spelling* s = nullptr;
    const int m =
        q.data() == scratch_.data() ? LongestPrefix(q, &s) : LongestPrefix(q, ends, n, &s);
    const int used = m - (prefix.empty() ? 0 : Components(prefix)) + static_cast<int>(from);
    if (m == 0 || used < 1) return false;
    r->spelling = s;
    r->used = used;
    if (r->want_qualified) r->qualified.assign(q);
    return true;
  }

  // Resolves a qualified name the way C++ lookup would find it, roughly:
  // aliases and using-declarations of its first name, the enclosing
  // namespaces (for qualified names), using-directives, then as written.
  bool Resolve(const std::vector<size_t>& names, bool absolute, Resolution* r) const {
    if (absolute) return Try({}, names, 0, r);
    const std::string_view first = Text(names[0]);
    for (size_t k = entries_.size(); k-- > 0;) {
      const Entry& e = entries_[k];
      if ((e.kind == kAlias || e.kind == kUsingDecl) && e.name == first) {
        return Try(e.target, names, 1, r);
      }
    }
    if (names.size() >= 2) {
      for (size_t k = entries_.size(); k-- > 0;) {
        const Entry& e = entries_[k];
        if (e.kind != kNamespace || e.target.empty() || !IsRoot(FirstComponent(e.target))) continue;
        // Each enclosing namespace, innermost first: at::native, at.
        std::string_view ns = e.target;
        for (;;) {
          if (Try(ns, names, 0, r)) return true;
          const size_t cut = ns.rfind("::");
          if (cut == std::string_view::npos) break;
          ns = ns.substr(0, cut);
        }
        break;
      }
    }
    for (size_t k = entries_.size(); k-- > 0;) {
      const Entry& e = entries_[k];
      if (e.kind == kDirective && Try(e.target, names, 0, r)) return true;
    }
    return Try({}, names, 0, r);
  }

  // Resolves a namespace name (of a using-directive or an alias): returns
  // the qualified namespace, or "" if it is not one of the rules'.
  std::string ResolveNamespace(const std::vector<size_t>& names, bool absolute) const {
    std::string q;
    if (!absolute) {
      const std::string_view first = Text(names[0]);
      for (size_t k = entries_.size(); k-- > 0;) {
        const Entry& e = entries_[k];
        if (e.kind == kAlias && e.name == first) {
          q = e.target;
          AppendNames(&q, names, 1);
          return rules_.IsNamespace(Language::kCpp, q) ? q : std::string();
        }
      }
      std::vector<std::string_view> prefixes;
      if (const std::string* ns = CurrentNamespace()) {
        std::string_view v = *ns;
        while (!v.empty()) {
          prefixes.push_back(v);
          const size_t cut = v.rfind("::");
          if (cut == std::string_view::npos) break;
          v = v.substr(0, cut);
        }
      }
      for (size_t k = entries_.size(); k-- > 0;) {
        if (entries_[k].kind == kDirective) prefixes.push_back(entries_[k].target);
      }
      for (std::string_view p : prefixes) {
        q.assign(p);
        AppendNames(&q, names, 0);
        if (rules_.IsNamespace(Language::kCpp, q)) return q;
      }
    }
    q.clear();
    AppendNames(&q, names, 0);
    return rules_.IsNamespace(Language::kCpp, q) ? q : std::string();
  }

  void Add(const Resolution& r, RefKind kind, const std::vector<size_t>& names, int64_t call_end) {
    out_->findings.push_back(RawFinding{r.spelling->rule, kind, r.spelling->text,
                                        t_[names[0]].start,
                                        t_[names[static_cast<size_t>(r.used) - 1]].end, call_end});
  }

  int64_t MatchingParen(size_t i) const { return parens_.End(t_, i, limit_); }

  size_t SkipTo(size_t i, uint8_t type) const {
    while (t_[i].type != type && t_[i].type != kEnd) ++i;
    return i;
  }

  // A name at token i; returns the index of the last token it consumed.
  size_t Name(size_t i, bool directive) {
    const Tk prev = i > 0 ? t_[i - 1].type : kSemi;
    if (prev == kDot || prev == kArrow) return i;  // a member
    const std::string_view name = Text(i);
    // The common case first: a match covers the chain's first name, so that
    // name is a component of some spelling, unless an alias or
    // using-declaration stands for it. (The rest of a chain skipped here is
    // skipped below too: a name after `name::` is a member of it.)
    if (!rules_.HasComponent(Language::kCpp, name) && !(has_lookup_entries_ && IsBound(name))) {
      if (!directive && name == "namespace") return Namespace(i);
      if (!directive && name == "using") return Using(i);
      return i;
    }
    if (t_[i + 1].type == kColon2 && IsKeyword(name)) return i;  // `return ::x`, `const ::x`
    if (!directive && prev != kColon2 && t_[i + 1].type != kColon2) NoteShim(i);
    bool absolute = false;
    size_t at = i;
    if (prev == kColon2) {
      // `::name` is global unless the `::` qualifies something before it: a
      // template-id (`vector<T>::name`) or `decltype(e)::name`.
      const Tk before = i > 1 ? t_[i - 2].type : kSemi;
      if (before == kGreater) return i;
      if (before == kRParen && IsDecltype(i - 2)) return i;
      if (before == kName && !IsKeyword(Text(i - 2))) return i;
      absolute = true;
      at = i - 1;
    }
    std::vector<size_t>& names = names_;
    bool abs2 = false;
    Qualified(at, &names, &abs2);
    const size_t last = names.back();
    Resolution r;
    if (!Resolve(names, absolute, &r)) return last;
    if (rules_.rules()[r.spelling->rule].kept) return last;
    if (static_cast<size_t>(r.used) == names.size() && t_[last + 1].type == kLParen) {
      Add(r, RefKind::kCall, names, MatchingParen(last + 1));
    } else {
      Add(r, RefKind::kReference, names, -1);
    }
    return last;
  }

  // Note [Shim namespaces]: a file that defines a legacy name itself, in its
  // own `namespace at { namespace cuda {` (or `namespace c10::cuda {`) block
  // (a function with a body, a class, `using Name = ...;`), keeps that name
  // working for its callers: its references to that spelling are to its own
  // definition, not findings (anywhere in the file, before or after it).
  void NoteShim(size_t i) {
    const Entry* ns = nullptr;
    for (size_t k = entries_.size(); k-- > 0;) {
      if (entries_[k].kind == kNamespace) {
        ns = &entries_[k];
        break;
      }
    }
    if (ns == nullptr || ns->depth != depth_ || ns->target.empty() ||
        !IsRoot(FirstComponent(ns->target))) {
      return;
    }
    const Tk next = t_[i + 1].type;
    const std::string_view before = i > 0 && t_[i - 1].type == kName ? Text(i - 1) : "";
    bool defines = false;
    if (before == "struct" || before == "class" || before == "union") {
      defines = next == kLBrace || (next == kOther && Text(i + 1) == ":") ||
                (t_[i + 1].type == kName && Text(i + 1) == "final");
    } else if (before == "using") {
      defines = next == kAssign;
    } else if (next == kLParen) {
      int d = 0;
      size_t k = i + 1;
      for (; t_[k].type != kEnd; ++k) {
        if (t_[k].type == kLParen) ++d;
        else if (t_[k].type == kRParen && --d == 0) break;
      }
      if (t_[k].type == kEnd) return;
      ++k;
      while (t_[k].type == kName && (Text(k) == "const" || Text(k) == "noexcept" ||
                                     Text(k) == "override" || Text(k) == "final")) {
        ++k;
      }
      defines = t_[k].type == kLBrace;
    }
    if (!defines) return;
    std::string q = ns->target + "::" + std::string(Text(i));
    const RuleSet::Spelling* s = nullptr;
    if (LongestPrefix(q, &s) == Components(q)) shims_.push_back(s->text);
  }

  // Drops the findings of names the file defines itself (Note [Shim namespaces]).
  void DropShimmed() {
    if (shims_.empty()) return;
    std::vector<RawFinding>& f = out_->findings;
    size_t w = 0;
    for (size_t k = 0; k < f.size(); ++k) {
      bool shimmed = false;
      for (std::string_view s : shims_) shimmed = shimmed || f[k].symbol == s;
      if (!shimmed) f[w++] = f[k];
    }
    f.resize(w);
  }

  // `namespace a::b {`, `namespace {`, `namespace x = a::b;`.
  size_t Namespace(size_t i) {
    bool absolute = false;
    std::vector<size_t> names;
    size_t j = Qualified(i + 1, &names, &absolute);
    const std::string* current = CurrentNamespace();
    if (names.empty()) {
      if (t_[j].type == kLBrace) {  // anonymous: the enclosing namespace
        pending_namespace_ = true;
        pending_namespace_name_ = current ? *current : std::string();
      }
      return j - 1;
    }
    if (t_[j].type == kAssign && names.size() == 1) {
      std::vector<size_t> target;
      const size_t k = Qualified(j + 1, &target, &absolute);
      if (!target.empty()) {
        std::string ns = ResolveNamespace(target, absolute);
        if (!ns.empty()) {
          Push(Entry{kAlias, depth_, Text(names[0]), std::move(ns)});
          has_lookup_entries_ = true;
        }
      }
      return k - 1;
    }
    if (t_[j].type == kLBrace) {
      std::string q = current ? *current : std::string();
      for (size_t n : names) {
        if (!q.empty()) q += "::";
        q.append(Text(n));
      }
      pending_namespace_ = true;
      pending_namespace_name_ = std::move(q);
    }
    return j - 1;
  }

  // `using namespace a::b;`, `using a::b::c [, d::e];`, `using X = ...;`.
  size_t Using(size_t i) {
    size_t j = i + 1;
    bool absolute = false;
    std::vector<size_t> names;
    if (t_[j].type == kName && Text(j) == "namespace") {
      const size_t k = Qualified(j + 1, &names, &absolute);
      if (!names.empty()) {
        std::string ns = ResolveNamespace(names, absolute);
        if (!ns.empty()) {
          Push(Entry{kDirective, depth_, {}, std::move(ns)});
          has_lookup_entries_ = true;
        }
      }
      return k - 1;
    }
    for (;;) {
      if (t_[j].type == kName && Text(j) == "typename") ++j;
      const size_t k = Qualified(j, &names, &absolute);
      if (names.empty()) return j;
      if (t_[k].type == kAssign) {  // an alias declaration: its RHS is code
        if (names.size() == 1 && !absolute && j == i + 1) NoteShim(j);
        return k - 1;
      }
      if (names.size() >= 2) {
        Resolution r;
        r.want_qualified = true;
        if (Resolve(names, absolute, &r)) {
          if (!rules_.rules()[r.spelling->rule].kept) Add(r, RefKind::kImport, names, -1);
        }
        if (!r.qualified.empty()) {
          Push(Entry{kUsingDecl, depth_, Text(names.back()), r.qualified});
          has_lookup_entries_ = true;
        }
      }
      if (t_[k].type != kComma) return k - 1;
      j = k + 1;
    }
  }

  const RuleSet& rules_;
  std::string_view src_;
  const TokenBuffer<Tok>& t_;
  LexOutput* out_;
  const int max_;
  int depth_ = 0;
  std::vector<Entry> entries_;
  std::vector<CondDepth> conds_;
  std::vector<size_t> names_;
  bool pending_namespace_ = false;
  std::string pending_namespace_name_;
  ParenMatch& parens_;  // see MatchingParen
  mutable std::string scratch_;  // Try's candidate
  mutable FollowerCache cache_[4] = {};  // Lookup's last lookups
  mutable uint64_t cache_version_ = 0;
  mutable uint64_t bound_version_ = ~uint64_t{0};  // bound_lengths_ is of this version_
  mutable uint64_t bound_lengths_ = 0;
  mutable size_t cache_next_ = 0;
  bool has_lookup_entries_ = false;  // an alias, using-declaration or -directive was seen
  std::vector<std::string_view> shims_;  // spellings the file defines (Note [Shim namespaces])
  size_t next_ = 0;                   // the next token Feed resolves
  size_t limit_ = 0;                  // the tokens fed so far
  uint64_t version_ = 0;              // entries_ pushed or popped
  uint64_t pushes_ = 0;               // entries_ pushed
};

// ---------------------------------------------------------------------------
// The literal rules for C++ (Note [Literal rules] in python_scan.cc): the
// CUDA device type (at::kCUDA, c10::DeviceType::CUDA; never
// DispatchKey::CUDA or Backend::CUDA), and the Tensor methods .cuda() and
// .is_cuda(). Hints: whether a rewrite compiles is for the fixer to check.

class CppLiterals {
 public:
  CppLiterals(const RuleSet& rules, std::string_view src, const TokenBuffer<Tok>& toks,
              ParenMatch* parens, LexOutput* out)
      : rules_(rules), src_(src), t_(toks), out_(out), parens_(*parens) {}

  void Run() {
    const size_t n = t_.size() - kSentinels;
    // Through raw pointers: with t_[k] (a unique_ptr's get() behind a
    // reference) and src_[...], GCC loaded both again for every token
    // (about a million instructions on the C/C++ files of the 20 MB tree).
    const Tok* const toks = &t_[0];
    const char* const src = src_.data();
    for (size_t k = 0; k < n; ++k) {
      const Tok& tok = toks[k];
      if (tok.type != kName) continue;
      const uint32_t len = tok.end - tok.start;
      if (len != 4 && len != 5 && len != 7) continue;  // cuda CUDA kCUDA is_cuda
      const char c0 = src[tok.start];
      if (c0 != 'c' && c0 != 'C' && c0 != 'k' && c0 != 'i') continue;
      Candidate(k, n);
    }
  }

 private:
  // A name of the literal rules' lengths and first bytes at token k.
  void Candidate(size_t k, size_t n) {
    const std::string_view w = Text(k);
    if (w == "kCUDA") {
      Add(kCppDeviceType, RefKind::kLiteral, QualifiedStart(k), t_[k].end, -1);
    } else if (w == "CUDA") {
      // DeviceType::CUDA, optionally qualified (c10::DeviceType::CUDA).
      if (k >= 2 && t_[k - 1].type == kColon2 && t_[k - 2].type == kName &&
          Text(k - 2) == "DeviceType") {
        Add(kCppDeviceType, RefKind::kLiteral, QualifiedStart(k), t_[k].end, -1);
      }
    } else if ((w == "cuda" || w == "is_cuda") && k > 0 &&
               (t_[k - 1].type == kDot || t_[k - 1].type == kArrow) &&
               t_[k + 1].type == kLParen) {
      Add(w == "cuda" ? kCppCudaMethod : kCppIsCuda, RefKind::kCall, t_[k].start, t_[k].end,
          MatchingParen(k + 1, n));
    }
  }

  std::string_view Text(size_t k) const {
    return src_.substr(t_[k].start, t_[k].end - t_[k].start);
  }

  // The start of `a::b::NAME` ending at token k (a leading `::` excluded).
  uint32_t QualifiedStart(size_t k) const {
    size_t j = k;
    while (j >= 2 && t_[j - 1].type == kColon2 && t_[j - 2].type == kName) j -= 2;
    return t_[j].start;
  }

  int64_t MatchingParen(size_t i, size_t n) const { return parens_.End(t_, i, n); }

  void Add(Detector d, RefKind kind, uint32_t start, uint32_t end, int64_t call_end) {
    const int rule = rules_.DetectorRule(d);
    if (rule < 0) return;
    out_->findings.push_back(RawFinding{rule, kind, rules_.rules()[rule].detector, start, end,
                                        call_end});
  }

  const RuleSet& rules_;
  std::string_view src_;
  const TokenBuffer<Tok>& t_;
  LexOutput* out_;
  ParenMatch& parens_;  // see MatchingParen (the resolver's: the same tokens)
};

// ---------------------------------------------------------------------------
// The fast path's driver (Note [Fast path for C++]): at each boundary after
// lexed code, resolves what was lexed, renews the needles when the entries
// in scope changed, and finds the next needle.

class FastDriver {
 public:
  // `words`: the rules' words, searched as words; `plain`: their own
  // needles, anywhere (Note [C++ needles as words]).
  FastDriver(const std::vector<std::string>& words, const std::vector<std::string>& plain,
             std::string_view src, size_t begin, const TokenBuffer<Tok>& toks, Resolver* resolver)
      : words_(words), plain_(plain), src_(src), begin_(begin), toks_(toks), resolver_(resolver) {}

  // Called at a boundary p after lexed code: returns whether the lexer may
  // skim from p; *next_hit: the next needle at or after p (SIZE_MAX: none).
  bool Lexed(size_t p, size_t* next_hit) {
    resolver_->Feed(toks_.size());
    if ((!built_ || resolver_->pushes() != pushes_) && Renew()) {
      *next_hit = Find(p);
    } else if (*next_hit < p) {
      *next_hit = Find(p);
    }
    // (A needle close by: lex on rather than skim and come back.)
    return !full_ && !resolver_->pending_namespace() &&
           (*next_hit == SIZE_MAX || *next_hit >= p + kNear);
  }

  // Whether every needle is made of identifier bytes (then one that starts
  // in a comment, a literal or a directive's text ends there too).
  bool identifier_needles() const { return identifier_needles_; }

  // The next needle at or after p, past the first Lexed (SIZE_MAX: none).
  size_t Find(size_t p) const {
    if (full_) return SIZE_MAX;
    const size_t at = search_->Next(src_.data(), begin_, p, src_.size());
    return at >= src_.size() ? SIZE_MAX : at;
  }

 private:
  static constexpr size_t kNear = 48;


  // The needles for the entries in scope now; returns whether they changed.
  bool Renew() {
    pushes_ = resolver_->pushes();
    context_.clear();
    const bool complete =
        resolver_->ContextNeedles(&context_, 4 * static_cast<size_t>(NeedleSearch::kMax));
    // A name that is a rule's word, or holds one of its own needles, is
    // found by it already (a word only as a whole: Note [C++ needles as
    // words]).
    size_t w = 0;
    for (std::string_view c : context_) {
      bool covered = c == "namespace" || c == "using";
      for (const std::string& s : words_) covered = covered || c == s;
      for (const std::string& s : plain_) covered = covered || c.find(s) != std::string_view::npos;
      if (!covered) context_[w++] = c;
    }
    context_.resize(w);
    std::sort(context_.begin(), context_.end());
    context_.erase(std::unique(context_.begin(), context_.end()), context_.end());
    if (built_ && complete && context_ == built_context_) return false;
    built_ = true;
    built_context_ = context_;
    full_ = !complete ||
            words_.size() + plain_.size() + 2 + context_.size() >
                static_cast<size_t>(NeedleSearch::kMax);
    if (!full_) {
      const Built& b = Search(words_, plain_, context_);
      search_ = &b.search;
      identifier_needles_ = b.identifier_needles;
    }
    return true;
  }

  // A needle search built, kept for the files after (most files of a tree
  // ask for the same few sets), with the bytes its needles view.
  struct Built {
    std::vector<std::string> words, plain, context;
    NeedleSearch search;
    bool identifier_needles = true;
  };

  // The search for the rules' words and needles, `namespace`, `using` and
  // `context`: one of this thread's last few, or built now in place of the
  // oldest.
  static const Built& Search(const std::vector<std::string>& words,
                             const std::vector<std::string>& plain,
                             const std::vector<std::string_view>& context) {
    constexpr int kKept = 4;
    thread_local Built kept[kKept];
    thread_local int oldest = 0;
    for (const Built& b : kept) {
      if (b.words == words && b.plain == plain && b.context.size() == context.size() &&
          std::equal(context.begin(), context.end(), b.context.begin())) {
        return b;
      }
    }
    Built& b = kept[oldest];
    oldest = (oldest + 1) % kKept;
    b.words = words;
    b.plain = plain;
    b.context.assign(context.begin(), context.end());
    b.search = NeedleSearch();
    b.identifier_needles = true;
    for (const std::string& needle : b.words) {
      b.search.Add(needle, true);
      for (char c : needle) {
        b.identifier_needles = b.identifier_needles && IsIdentChar(static_cast<unsigned char>(c));
      }
    }
    for (const std::string& needle : b.plain) {
      b.search.Add(needle, false);
      for (char c : needle) {
        b.identifier_needles = b.identifier_needles && IsIdentChar(static_cast<unsigned char>(c));
      }
    }
    b.search.Add("namespace", true);
    b.search.Add("using", true);
    for (const std::string& c : b.context) b.search.Add(c, true);
    b.search.Build();
    return b;
  }

  const std::vector<std::string>& words_;
  const std::vector<std::string>& plain_;
  std::string_view src_;
  size_t begin_;
  const TokenBuffer<Tok>& toks_;
  Resolver* resolver_;
  const NeedleSearch* search_ = nullptr;  // (one of Search's)
  std::vector<std::string_view> context_, built_context_;
  bool built_ = false;
  bool full_ = false;  // the needles do not fit: lex everything while so
  bool identifier_needles_ = false;
  uint64_t pushes_ = 0;
};

void Lexer::SkipHitsBehind() {
  if (driver_->identifier_needles()) next_hit_ = driver_->Find(p_);
}

void Lexer::Boundary() {
  Snapshot();
  if (!skim_) {
    skim_ = driver_->Lexed(p_, &next_hit_);
    ls_from_ = p_;
  }
}

}  // namespace

void ScanCpp(const RuleSet& rules, std::string_view src, size_t begin, LexOutput* out) {
  struct Scratch {  // Note [Thread-local scratch] in internal.h
    TokenBuffer<Tok> toks;
    ParenMatch parens;
  };
  Scratch& scratch = ThreadScratch<Scratch>();
  TokenBuffer<Tok>& toks = scratch.toks;
  toks.clear();
  // (FastPathNeedles: whether the fast path may run; its needles are the
  // rules' words and needles: Note [C++ needles as words].)
  const bool fast = FastPathEnabled() && rules.FastPathNeedles(Language::kCpp) != nullptr;
  ParenMatch& parens = scratch.parens;
  parens.Reset();
  Resolver resolver(rules, src, toks, &parens, out);
  {
    Lexer lexer(src, begin, &toks, out);
    std::optional<FastDriver> driver;
    if (fast) {
      driver.emplace(rules.FastPathWords(Language::kCpp), rules.FastPathPlain(Language::kCpp), src,
                     begin, toks, &resolver);
      lexer.set_driver(&*driver);
    }
    lexer.Run();
  }
  for (size_t k = 0; k < kSentinels; ++k) {
    *toks.Add() = Tok{static_cast<uint32_t>(src.size()), static_cast<uint32_t>(src.size()), kEnd,
                      false, false};
  }
  resolver.Feed(toks.size() - kSentinels);
  resolver.Finish();
  if (fast) CountFastPathFile();
  if (rules.HasDetectors(Language::kCpp)) CppLiterals(rules, src, toks, &parens, out).Run();
  parens.Trim();
  toks.Trim(size_t{1} << 22);
}

}  // namespace anydev::scan::internal
