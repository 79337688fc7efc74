// The Python scanner: a tokenizer that knows what is not code (strings of
// every prefix, comments, docstrings, bytes) and what is (f-string replacement
// fields, nested, with format specs), followed by a pass over the tokens that
// resolves imports and aliases and matches dotted chains against the rules.
//
// Note [Python scopes]: bindings are tracked per function and class body, by
// indentation: an import or a rebinding inside a `def` lasts until the body
// ends; at module level it lasts to the end of the file (flow-insensitive, as
// the common `try: import torch / except ImportError: torch = None` needs:
// `NAME = None` does not unbind). Parameters shadow the enclosing names.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <memory>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "internal.h"
#include "literal_rules.h"

namespace anydev::scan::internal {
namespace {

// Tokens of lookahead the resolver may read past the last real one.
constexpr size_t kSentinels = 4;

enum Tk : uint8_t {
  kName,
  kString,
  kNumber,
  kDot,
  kLParen,
  kRParen,
  kLBrack,
  kRBrack,
  kLBrace,
  kRBrace,
  kFieldOpen,   // the '{' of an f-string replacement field
  kFieldClose,  // its '}'
  kAssign,      // a lone '='
  kWalrus,      // ':='
  kColon,
  kSemi,
  kComma,
  kStar,     // '*' or '**'
  kNewline,  // end of a logical line
  kOther,
  kEnd,  // sentinel past the last token
};

// Note [No char-typed token fields]: a store through an unsigned char (uint8_t)
// may alias anything, so the compiler would reload the lexer's position after
// every token it writes; enum and bool fields keep it in a register.
struct Tok {
  uint32_t start;
  uint32_t end;
  uint16_t indent;  // for the first token of a logical line
  Tk type;
  bool first;  // the first token of a logical line
  // An opening bracket's: how many tokens on its closer is (0 if the lexer
  // closed none; every other token's is 0). Note [Brackets matched as
  // lexed].
  uint32_t span;
};

// Bytes that end a comment, and bytes that stop the fast path through a
// string body ([quote is '"'][f-string]); the padding's NUL is in each.
struct StopTables {
  bool comment[256];
  bool string[4][256];
};

constexpr StopTables MakeStopTables() {
  StopTables t{};
  t.comment[0] = t.comment[static_cast<int>('\n')] = t.comment[static_cast<int>('\r')] = true;
  for (int k = 0; k < 4; ++k) {
    bool* row = t.string[k];
    row[0] = row[static_cast<int>('\n')] = row[static_cast<int>('\r')] = true;
    row[static_cast<int>('\\')] = true;
    row[static_cast<int>((k & 1) ? '"' : '\'')] = true;
    if (k & 2) row[static_cast<int>('{')] = row[static_cast<int>('}')] = true;
  }
  return t;
}

constexpr StopTables kStops = MakeStopTables();
constexpr const bool* kCommentStop = kStops.comment;
constexpr const bool (*kStringStop)[256] = kStops.string;

// The token types that open and that close a bracket, as bit masks: the
// bracket matchers ask it of every token.
constexpr uint32_t kOpenTypes =
    1u << kLParen | 1u << kLBrack | 1u << kLBrace | 1u << kFieldOpen;
constexpr uint32_t kCloseTypes =
    1u << kRParen | 1u << kRBrack | 1u << kRBrace | 1u << kFieldClose;
static_assert(kEnd < 32, "token types fit the masks");

// Whether w is the literal `lit`: a memcmp of a constant size, which GCC
// turns into a compare or two (string_view's == called compare out of line,
// 64k times on the Python files of the 20 MB tree).
template <size_t N>
bool Is(std::string_view w, const char (&lit)[N]) {
  return w.size() == N - 1 && std::memcmp(w.data(), lit, N - 1) == 0;
}

bool IsOpen(uint8_t t) { return (kOpenTypes >> (t & 31) & 1) != 0; }
bool IsClose(uint8_t t) { return (kCloseTypes >> (t & 31) & 1) != 0; }

// Returns true if `p` (lowercase or not) is a string prefix: r u b f t, br rb
// fr rf tr rt.
bool IsStringPrefix(const char* p, size_t n, bool* raw, bool* fmt, bool* bytes) {
  if (n == 0 || n > 2) return false;
  bool r = false, f = false, b = false, u = false, t = false;
  for (size_t i = 0; i < n; ++i) {
    switch (p[i] | 0x20) {
      case 'r': if (r) return false; r = true; break;
      case 'f': if (f) return false; f = true; break;
      case 'b': if (b) return false; b = true; break;
      case 'u': if (u) return false; u = true; break;
      case 't': if (t) return false; t = true; break;
      default: return false;
    }
  }
  if (u && n > 1) return false;
  if (n == 2 && !r) return false;  // two letters: one of them is r
  if (b && (f || t)) return false;
  *raw = r;
  *fmt = f || t;
  *bytes = b;
  return true;
}

// The fast path's lines (Note [Fast path]), found by the skeleton.
constexpr uint32_t kNoToken = 0xFFFFFFFFu;
constexpr int32_t kParentUnknown = -2;  // Region::parent not asked for yet (Parents)

// One logical line: [start, end) from the start of its first physical line
// to just past its newline.
struct Region {
  // Not zeroed: the skeleton grows its regions by resize and writes every
  // field of each it keeps (a zeroing resize cost 1M instructions on the
  // Python files of the 20 MB GPU tree).
  Region() {}
  uint32_t start, end;
  uint32_t first;   // offset of its first token; kNoToken for a blank or comment line
  uint16_t indent;  // of its first token, as the lexer counts it; 0xFFFF for no token
  int32_t parent;   // the nearest earlier line with a token and a smaller indent; -1
                    // (Parents finds it, where a binding asks for it)
};

// Note [Brackets matched as lexed]: the resolver (a call's end) and the
// literal rules (a call's arguments, an expression's end) ask for the closer
// of an opening bracket. They matched every bracket of the tokens in a pass
// of their own (MatchAllBrackets, 2.8M instructions on the Python files of
// the 20 MB GPU tree, about 11 a token, and an array as long as the tokens
// for each resolver run). The lexer matches them anyway, to report a
// mismatch: its stack now holds the opens' token indices, and a closer sets
// its open's Tok::span, the distance in tokens. What the pass found is the
// same: the lexer pops the nearest open still open (the fields of an
// f-string are opens and closers too, matched by Field's recursion), and
// where it fails it stops before the failing closer, so an open it leaves
// unclosed (span 0) was unmatched by the pass as well. A distance, not an
// index, since the fast path copies tokens lexed once into its buffer at
// another place (Note [Import lines lexed once]) and lexes a file's marked
// lines with several lexers into one buffer. (Those Python files: 143.66M
// to 140.82M instructions; the full path 468.26M to 444.31M. A token is 16
// bytes for it, not 12.)
//
// The lexer's stack of open brackets (their token indices): the first 64 in
// the object itself, so that the lexer of a run of a few lines (the fast path
// makes thousands per file) allocates nothing.
class BracketStack {
 public:
  BracketStack() = default;
  BracketStack(const BracketStack&) = delete;
  BracketStack& operator=(const BracketStack&) = delete;

  void push_back(size_t v) {
    if (size_ == cap_) Grow();
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  size_t back() const { return data_[size_ - 1]; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

 private:
  void Grow() {
    std::unique_ptr<size_t[]> bigger(new size_t[cap_ * 2]);
    std::memcpy(bigger.get(), data_, size_ * sizeof(size_t));
    heap_ = std::move(bigger);
    data_ = heap_.get();
    cap_ *= 2;
  }

  size_t inline_[64];
  size_t* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = 64;
  std::unique_ptr<size_t[]> heap_;
};

class Lexer {
 public:
  // Lexes src[begin, end): the whole input, or (the fast path) a run of
  // logical lines that ends just past a newline, or at the input's end.
  // `line`, where not null, is the skeleton's region that holds `begin`,
  // whose indents the lexer takes (Note [Indents from the skeleton]).
  Lexer(std::string_view src, size_t begin, TokenBuffer<Tok>* toks, LexOutput* out,
        size_t end = std::string_view::npos, const Region* line = nullptr)
      : s_(src.data()), n_(end < src.size() ? end : src.size()), p_(begin), line_start_(begin),
        toks_(*toks), out_(out), line_(line) {}

  // Lexes the one string literal whose prefix starts at `start` and whose
  // opening quote is at `quote` (the fast path's skeleton, which needs its
  // end exactly as the full lexer finds it). Returns false if the lexer
  // fails on it; else sets *after past its closing quote.
  bool LexStringAt(size_t start, size_t quote, bool raw, bool fmt, size_t* after) {
    p_ = quote;
    at_logical_start_ = false;
    String(start, raw, fmt);
    *after = p_;
    return !failed_;
  }

  void Run() {
    LexCode(false);
    if (failed_) return;
    if (!brackets_.empty()) {
      const size_t at = toks_[brackets_.back()].start;
      Fail(at, std::string("'") + s_[at] + "' was never closed");
      return;
    }
    EmitNewline();
  }

 private:
  void Fail(size_t at, std::string message) {
    failed_ = true;
    out_->Fail(static_cast<uint32_t>(at), std::move(message));
  }

  // Out of line: the fast path takes most indents from the skeleton (Note
  // [Indents from the skeleton]), and FirstIndent stays lean.
  __attribute__((noinline)) uint16_t IndentOf(size_t at) const {
    // Spaces only, as most indents are: their count, eight bytes a step
    // (a byte at a time, the lines' first tokens cost 1.3M instructions on
    // the Python files of the 20 MB GPU tree, the fast path's lexing).
    size_t k = line_start_;
    while (k + 8 <= at) {
      uint64_t w;
      std::memcpy(&w, s_ + k, 8);
      if (w != 0x2020202020202020ULL) break;
      k += 8;
    }
    while (k < at && s_[k] == ' ') ++k;
    if (k >= at) {
      return static_cast<uint16_t>(at > line_start_ ? std::min<size_t>(at - line_start_, 0xFFFF)
                                                    : 0);
    }
    unsigned col = 0;
    for (size_t i = line_start_; i < at; ++i) {
      char c = s_[i];
      if (c == '\t') col = (col / 8 + 1) * 8;
      else if (c == '\f') col = 0;
      else ++col;
    }
    return static_cast<uint16_t>(col > 0xFFFF ? 0xFFFF : col);
  }

  // Inlined into the lexer's loop (a call per token cost more than the
  // store); a line's first token's indent is a call (FirstIndent).
  __attribute__((always_inline)) void Emit(Tk type, size_t start, size_t end) {
    if (at_logical_start_) {
      EmitFirst(type, start, end);
      return;
    }
    *toks_.Add() =
        Tok{static_cast<uint32_t>(start), static_cast<uint32_t>(end), 0, type, false, 0};
  }

  // Note [Indents from the skeleton]: a line's first token takes the indent
  // the skeleton found for its region (Region::indent, counted as IndentOf
  // counts: spaces, tabs to the next multiple of 8, a form feed resets, at
  // most 0xFFFF, from the start of the token's physical line), where one is
  // given and the region's first token is this one; else IndentOf counts it
  // again (the full path, and any line whose first token the skeleton put
  // elsewhere). The regions are contiguous, and the lexer's first tokens
  // ascend, so a cursor walks them. On the Python files of the 20 MB GPU
  // tree the fast path's 22.8k first tokens cost 1.47M instructions, 58
  // each, where IndentOf counted the spaces again in an EmitFirst out of
  // line; now FirstIndent costs 0.32M, and the token's store inlined 0.28M
  // more in LexCode (140.82M to 139.88M in all; the full path, whose
  // IndentOf is now a call from FirstIndent, 444.31M to 442.22M).
  __attribute__((always_inline)) void EmitFirst(Tk type, size_t start, size_t end) {
    const uint16_t indent = FirstIndent(start);
    *toks_.Add() =
        Tok{static_cast<uint32_t>(start), static_cast<uint32_t>(end), indent, type, true, 0};
    at_logical_start_ = false;
  }

  __attribute__((noinline)) uint16_t FirstIndent(size_t start) {
    const Region* line = line_;
    if (line == nullptr) return IndentOf(start);
    while (line->end <= start) ++line;  // the region holding start (< n_)
    line_ = line;
    return line->first == start ? line->indent : IndentOf(start);
  }

  void EmitNewline() {
    if (!toks_.empty() && toks_.back().type != kNewline) {
      *toks_.Add() =
          Tok{static_cast<uint32_t>(p_), static_cast<uint32_t>(p_), 0, kNewline, false, 0};
    }
    at_logical_start_ = true;
  }

  // Skips a newline at p_ (\n, \r\n or \r) and starts a physical line.
  void SkipNewline() {
    if (s_[p_] == '\r' && p_ + 1 < n_ && s_[p_ + 1] == '\n') ++p_;
    ++p_;
    line_start_ = p_;
  }

  void Comment(bool in_field) {
    const size_t start = p_;
    size_t q = p_;  // a local (see LexCode's spaces)
    while (!kCommentStop[static_cast<unsigned char>(s_[q])]) ++q;
    p_ = q;
    NotePythonComment(std::string_view(s_ + start, p_ - start), static_cast<uint32_t>(start),
                      in_field, out_);
  }

  // Lexes code. At top level (in_field false) it runs to the end of the
  // input; in an f-string replacement field it returns with p_ at the '}',
  // '!' or ':' that ends the field's expression.
  // failed_ is asked where it can have changed (after a string, whose body
  // may fail), not at every token: a token's store may alias it (a bool), so
  // the loop read it from memory each time.
  void LexCode(bool in_field) {
    const size_t base = brackets_.size();
    if (failed_) return;
    for (;;) {
      if (p_ >= n_) {
        if (in_field) Fail(p_, "unterminated f-string replacement field");
        return;
      }
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (IsIdentStart(c)) {
        size_t q = p_ + 1;
        while (IsIdentChar(static_cast<unsigned char>(s_[q]))) ++q;  // the padding stops it
        // The byte after the name read again: kept from the loop's load, it
        // cost a move at every byte of every name.
        const char* again = s_;
        __asm__("" : "+r"(again));
        bool raw, fmt, bytes;
        if ((again[q] == '"' || again[q] == '\'') && q - p_ <= 2 &&
            IsStringPrefix(s_ + p_, q - p_, &raw, &fmt, &bytes)) {
          const size_t start = p_;
          p_ = q;
          String(start, raw, fmt);
          if (failed_) return;
          continue;
        }
        Emit(kName, p_, q);
        p_ = q;
        continue;
      }
      switch (c) {
        case ' ':
        case '\t':
        case '\f': {
          // In a local: a byte's load may alias p_, so a loop on p_ itself
          // stored it at every byte.
          size_t q = p_ + 1;
          while (s_[q] == ' ') ++q;
          p_ = q;
          continue;
        }
        case '\n':
        case '\r':
          SkipNewline();
          if (!in_field && brackets_.empty()) EmitNewline();
          continue;
        case '#':
          Comment(in_field);
          continue;
        case '\\':
          if (p_ + 1 < n_ && (s_[p_ + 1] == '\n' || s_[p_ + 1] == '\r')) {
            ++p_;
            SkipNewline();
            continue;
          }
          if (p_ + 1 >= n_) {
            Fail(p_, "unexpected end of file after line continuation character");
          } else {
            Fail(p_, "unexpected character after line continuation character");
          }
          return;
        case '"':
        case '\'':
          String(p_, false, false);
          if (failed_) return;
          continue;
        case '(':
        case '[':
        case '{':
          brackets_.push_back(toks_.size());
          Emit(c == '(' ? kLParen : c == '[' ? kLBrack : kLBrace, p_, p_ + 1);
          ++p_;
          continue;
        case ')':
        case ']':
        case '}': {
          if (brackets_.size() == base) {
            if (in_field && c == '}') return;
            Fail(p_, std::string(in_field ? "f-string: unmatched '" : "unmatched '") +
                         static_cast<char>(c) + "'");
            return;
          }
          const size_t open_tok = brackets_.back();
          const char open = s_[toks_[open_tok].start];
          const char want = open == '(' ? ')' : open == '[' ? ']' : '}';
          if (c != want) {
            Fail(p_, std::string("closing parenthesis '") + static_cast<char>(c) +
                         "' does not match opening parenthesis '" + open + "'");
            return;
          }
          brackets_.pop_back();
          toks_[open_tok].span = static_cast<uint32_t>(toks_.size() - open_tok);
          Emit(c == ')' ? kRParen : c == ']' ? kRBrack : kRBrace, p_, p_ + 1);
          ++p_;
          continue;
        }
        case '.':
          if (p_ + 1 < n_ && IsDigit(static_cast<unsigned char>(s_[p_ + 1]))) {
            Number();
          } else {
            Emit(kDot, p_, p_ + 1);
            ++p_;
          }
          continue;
        case '=':
          if (p_ + 1 < n_ && s_[p_ + 1] == '=') {
            Emit(kOther, p_, p_ + 2);
            p_ += 2;
            continue;
          }
          if (in_field && brackets_.size() == base) {
            // A self-documenting `{x=}`: '=' then optional spaces, then the end.
            size_t q = p_ + 1;
            while (q < n_ && (s_[q] == ' ' || s_[q] == '\t')) ++q;
            if (q < n_ && (s_[q] == '}' || s_[q] == '!' || s_[q] == ':')) {
              Emit(kOther, p_, p_ + 1);
              p_ = q;
              continue;
            }
          }
          Emit(kAssign, p_, p_ + 1);
          ++p_;
          continue;
        case ':':
          if (p_ + 1 < n_ && s_[p_ + 1] == '=') {
            Emit(kWalrus, p_, p_ + 2);
            p_ += 2;
            continue;
          }
          if (in_field && brackets_.size() == base) return;
          Emit(kColon, p_, p_ + 1);
          ++p_;
          continue;
        case '!':
          if (p_ + 1 < n_ && s_[p_ + 1] == '=') {
            Emit(kOther, p_, p_ + 2);
            p_ += 2;
            continue;
          }
          if (in_field && brackets_.size() == base) return;
          Fail(p_, "invalid syntax: '!'");
          return;
        case ';':
          Emit(kSemi, p_, p_ + 1);
          ++p_;
          continue;
        case ',':
          Emit(kComma, p_, p_ + 1);
          ++p_;
          continue;
        case '*': {
          size_t q = p_ + 1;
          if (q < n_ && s_[q] == '*') ++q;
          if (q < n_ && s_[q] == '=') {
            Emit(kOther, p_, q + 1);
            p_ = q + 1;
          } else {
            Emit(kStar, p_, q);
            p_ = q;
          }
          continue;
        }
        case '<':
        case '>':
        case '+':
        case '-':
        case '/':
        case '%':
        case '&':
        case '|':
        case '^':
        case '~':
        case '@': {
          size_t q = p_ + 1;
          if (q < n_ && (s_[q] == c || (c == '-' && s_[q] == '>'))) ++q;  // << >> // ** ->
          if (q < n_ && s_[q] == '=') ++q;
          Emit(kOther, p_, q);
          p_ = q;
          continue;
        }
        default:
          if (IsDigit(c)) {
            Number();
            continue;
          }
          Fail(p_, std::string("invalid character '") + static_cast<char>(c) + "' in code");
          return;
      }
    }
  }

  void Number() {
    const size_t start = p_;
    size_t q = p_ + 1;  // a local (see LexCode's spaces)
    while (q < n_) {
      const unsigned char c = static_cast<unsigned char>(s_[q]);
      if (IsIdentChar(c) || c == '.') {
        ++q;
      } else if ((c == '+' || c == '-') && (s_[q - 1] == 'e' || s_[q - 1] == 'E') &&
                 !(s_[start] == '0' && q - start > 1 && (s_[start + 1] | 0x20) == 'x')) {
        ++q;
      } else {
        break;
      }
    }
    p_ = q;
    Emit(kNumber, start, p_);
  }

  // Lexes a string literal whose prefix starts at `start` and whose opening
  // quote is at p_.
  void String(size_t start, bool raw, bool fmt) {
    const char quote = s_[p_];
    const bool triple = p_ + 2 < n_ && s_[p_ + 1] == quote && s_[p_ + 2] == quote;
    p_ += triple ? 3 : 1;
    Emit(kString, start, p_);
    StringBody(start, quote, triple, raw, fmt);
  }

  // The rest of a string after its opening quote, up to and past the closing
  // one. Fails if the string is not terminated.
  void StringBody(size_t start, char quote, bool triple, bool raw, bool fmt) {
    while (!failed_) {
      // The fast path: bytes that cannot end or escape anything (the
      // padding's NUL stops it at the end).
      const bool* stop = kStringStop[(quote == '"' ? 1 : 0) + (fmt ? 2 : 0)];
      size_t at = p_;  // a local (see LexCode's spaces)
      while (!stop[static_cast<unsigned char>(s_[at])]) ++at;
      p_ = at;
      if (p_ >= n_) {
        Fail(start, triple ? "unterminated triple-quoted string literal"
                           : "unterminated string literal");
        return;
      }
      const char c = s_[p_];
      if (c == quote) {
        if (!triple) {
          ++p_;
          return;
        }
        if (p_ + 2 < n_ && s_[p_ + 1] == quote && s_[p_ + 2] == quote) {
          p_ += 3;
          return;
        }
        ++p_;
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) {
          Fail(start, "unterminated string literal");
          return;
        }
        SkipNewline();
        continue;
      }
      if (c == '\\') {
        if (p_ + 1 >= n_) {
          ++p_;
          continue;
        }
        const char d = s_[p_ + 1];
        if (fmt && (d == '{' || d == '}')) {
          ++p_;  // the brace is handled on its own
          continue;
        }
        if (fmt && !raw && d == 'N' && p_ + 2 < n_ && s_[p_ + 2] == '{') {
          // \N{NAME}: a named escape, not a replacement field.
          size_t q = p_ + 3;
          while (q < n_ && s_[q] != '}' && s_[q] != quote && s_[q] != '\n') ++q;
          p_ = q < n_ && s_[q] == '}' ? q + 1 : q;
          continue;
        }
        if (d == '\n' || d == '\r') {
          ++p_;
          SkipNewline();
          continue;
        }
        p_ += 2;
        continue;
      }
      // fmt: a brace.
      if (p_ + 1 < n_ && s_[p_ + 1] == c) {  // {{ or }}
        p_ += 2;
        continue;
      }
      if (c == '}') {  // a single '}' (Python rejects it; not our concern)
        ++p_;
        continue;
      }
      Field(quote, triple);
    }
  }

  // An f-string replacement field starting at the '{' at p_.
  void Field(char quote, bool triple) {
    const size_t open = p_;
    const size_t open_tok = toks_.size();
    Emit(kFieldOpen, p_, p_ + 1);
    ++p_;
    LexCode(true);
    if (failed_) return;
    if (s_[p_] == '!') {  // conversion
      ++p_;
      while (p_ < n_ && IsIdentChar(static_cast<unsigned char>(s_[p_]))) ++p_;
      while (p_ < n_ && (s_[p_] == ' ' || s_[p_] == '\t')) ++p_;
    }
    if (p_ < n_ && s_[p_] == ':') {  // format spec: literal text with nested fields
      ++p_;
      while (!failed_) {
        while (p_ < n_ && s_[p_] != '{' && s_[p_] != '}' && s_[p_] != quote &&
               s_[p_] != '\\' && s_[p_] != '\n' && s_[p_] != '\r') {
          ++p_;
        }
        if (p_ >= n_) break;
        const char c = s_[p_];
        if (c == '{') {
          Field(quote, triple);
        } else if (c == '}') {
          break;
        } else if (c == '\\') {
          p_ += p_ + 1 < n_ ? 2 : 1;
        } else if (c == quote) {
          break;  // the string ends inside the field: reported below
        } else {  // a newline
          if (!triple) break;
          SkipNewline();
        }
      }
      if (failed_) return;
    }
    if (p_ < n_ && s_[p_] == '}') {
      toks_[open_tok].span = static_cast<uint32_t>(toks_.size() - open_tok);
      Emit(kFieldClose, p_, p_ + 1);
      ++p_;
      return;
    }
    Fail(open, "f-string: expecting '}'");
  }

  const char* s_;
  size_t n_;
  size_t p_;
  size_t line_start_;
  TokenBuffer<Tok>& toks_;
  LexOutput* out_;
  const Region* line_;  // see the constructor
  BracketStack brackets_;  // the open brackets' token indices
  bool at_logical_start_ = true;
  bool failed_ = false;
};

// ---------------------------------------------------------------------------
// What the resolver tells the literal rules: the chains that resolve to the
// few torch names their positions depend on.

enum ChainKind : uint8_t {
  kChainTorchDevice,     // torch.device
  kChainAutocast,        // torch.autocast, torch.amp.autocast
  kChainGradScaler,      // torch.amp.GradScaler
  kChainAvailability,    // (torch.cuda|torch.accelerator).(is_available|device_count)
  kChainInitProcessGroup,
  kChainDistributed,     // any other torch.distributed.*
};

struct ResolvedChain {
  uint32_t first, last;  // token indices
  ChainKind kind;
};

void NoteChain(size_t first, size_t last, std::string_view q, std::vector<ResolvedChain>* out) {
  if (q.size() < 12 || q.compare(0, 6, "torch.") != 0) return;
  ChainKind kind;
  if (Is(q, "torch.device")) {
    kind = kChainTorchDevice;
  } else if (Is(q, "torch.autocast") || Is(q, "torch.amp.autocast") ||
             Is(q, "torch.amp.autocast_mode.autocast")) {
    kind = kChainAutocast;
  } else if (Is(q, "torch.amp.GradScaler") || Is(q, "torch.amp.grad_scaler.GradScaler")) {
    kind = kChainGradScaler;
  } else if (Is(q, "torch.cuda.is_available") || Is(q, "torch.cuda.device_count") ||
             Is(q, "torch.accelerator.is_available") || Is(q, "torch.accelerator.device_count")) {
    // torch.accelerator's: the half-migrated idiom, "cuda" behind a generic check
    kind = kChainAvailability;
  } else if (Is(q, "torch.distributed.init_process_group")) {
    kind = kChainInitProcessGroup;
  } else if (q.compare(0, 18, "torch.distributed.") == 0) {
    kind = kChainDistributed;
  } else {
    return;
  }
  out->push_back(ResolvedChain{static_cast<uint32_t>(first), static_cast<uint32_t>(last), kind});
}

// ---------------------------------------------------------------------------
// The resolver: walks the tokens, tracking bindings per scope.

// What an import statement does to the resolver, as the fast path's first
// search records it (Note [Import lines lexed once]): a name bound (to
// `target`, or to nothing from the table where it is empty: an Unbind) at
// `offset`, the offset of the statement's first token.
struct ImportOp {
  uint32_t offset;
  bool bind;
  std::string_view name;
  std::string target;
};

// A run of import lines whose resolution the rounds replay: its tokens
// [tok_begin, tok_end) in the round's buffer, and what the first search's
// resolver did there.
struct ImportReplay {
  uint32_t tok_begin, tok_end;
  const ImportOp* ops;
  size_t op_count;
  const RawFinding* findings;
  size_t finding_count;
};

// A scope of the resolver's (Note [Python scopes]): the indent of the line
// that opened it and where its bindings begin.
struct ResolverScope {
  int indent;
  size_t bindings_begin;
};

// A name the resolver has bound: to `target` (a qualified name of the
// table's roots), or to nothing from the table where it is empty.
// `target` views a source's bytes, an ImportOp's string, or a string of
// ResolverScratch::targets, which outlive the binding (see NewTarget).
struct ResolverBinding {
  std::string_view name;
  std::string_view target;
};

// Note [Cheap names]: the fast path searched for every name bound to a
// target, and `import torch` binds `torch`: every line of a real tree that
// says `torch.` (23,296 Python lines of Megatron-LM, `dist.`, `nn.`, `F.`
// 7,061 more) was lexed and resolved, though a chain from such a name
// holds a needle word of its own wherever it can be a finding (a spelling's
// component that the name's target lacks is in the chain's text: Note
// [Needles as words]). What such a line can do besides is bind: the name
// itself (`torch = None`, a parameter, a loop target, `as torch`), or
// another name to a chain from it (`init = torch.distributed.init_process_group`,
// which the line `init("nccl")` then needs). A name whose target has no
// word of the rules as a component ("torch", "torch.distributed", not
// "torch.cuda") is cheap: a line where it is followed by '.' (no binding of
// it: `torch.x = 1` binds an attribute) and not preceded by '=' (no alias:
// AliasAssignment's chain follows the '=' at once) is not marked for it.
// A name bound to a target with a word anywhere is searched as before,
// from that binding on (the resolver reads bindings in order, so a line
// before it resolves the name to what the cheap bindings before it gave).

// Whether no component of `target` is a word of the rules (nor holds a
// rule's own needle).
bool CheapTarget(const RuleSet& rules, std::string_view target) {
  for (const std::string& p : rules.FastPathPlain(Language::kPython)) {
    if (target.find(p) != std::string_view::npos) return false;
  }
  const std::vector<std::string>& words = rules.FastPathWords(Language::kPython);
  for (size_t b = 0;;) {
    size_t e = target.find('.', b);
    if (e == std::string_view::npos) e = target.size();
    const std::string_view part = target.substr(b, e - b);
    for (const std::string& w : words) {
      if (part == w) return false;
    }
    if (e == target.size()) return true;
    b = e + 1;
  }
}

// Whether a name bound to a cheap target may be searched as cheap: not where
// it is a word of the rules itself (`cuda = torch`: its matches are the
// words' too), nor where a rule has needles of its own (a match of one may
// start where a cheap name does).
bool CheapName(const RuleSet& rules, std::string_view name) {
  if (!rules.FastPathPlain(Language::kPython).empty()) return false;
  for (const std::string& w : rules.FastPathWords(Language::kPython)) {
    if (w == name) return false;
  }
  return true;
}

// Whether the match at `at` (a whole word) is one of the cheap names where
// it binds nothing (Note [Cheap names]): no line need be marked for it.
// What the resolver reads as a binding, and where this marks the line:
// an alias, `x = <name>[.a.b]` ending its statement (the '=' before the
// name, no call or subscript after the chain: AliasAssignment); the name
// rebound, followed by '=' (not "=="), or by ':', ',', ')' or a name after
// '(', ',', '*' or a line's start (a parameter, an annotated or tuple
// target, a `for` target), or after `def`, `class`, `as`, `for`, `lambda`,
// `import`. A name followed by '.' binds nothing itself.
bool CheapHit(std::string_view src, size_t begin, size_t at,
              const std::vector<std::string_view>& cheap) {
  const char* s = src.data();
  size_t len = 0;
  size_t id = at + 1;  // the match is a whole word: its end, then its size
  while (IsIdentChar(static_cast<unsigned char>(s[id]))) ++id;
  for (std::string_view c : cheap) {
    if (c.size() == id - at && c[0] == s[at] && std::memcmp(s + at, c.data(), c.size()) == 0) {
      len = c.size();
      break;
    }
  }
  if (len == 0) return false;
  const auto space = [](char b) { return b == ' ' || b == '\t' || b == '\f'; };
  // The byte before it ('\n' for a line's start; a continuation is passed).
  char prev = '\n';
  size_t j = at;
  while (j > begin) {
    const char b = s[j - 1];
    if (space(b)) {
      --j;
      continue;
    }
    if (b == '\n' || b == '\r') {
      size_t q = j - 1;
      if (b == '\n' && q > begin && s[q - 1] == '\r') --q;
      if (q > begin && s[q - 1] == '\\') {
        j = q - 1;
        continue;
      }
      break;
    }
    prev = b;
    break;
  }
  if (prev == '.') return true;  // an attribute: no name of the resolver's
  // What follows the name, and after '=' what follows its chain (the
  // padding's NUL ends every run).
  size_t k = at + len;
  while (space(s[k])) ++k;
  const char next = s[k];
  if (prev == '=') {
    size_t e = k;
    while (s[e] == '.') {
      ++e;
      while (space(s[e])) ++e;
      if (!IsIdentStart(static_cast<unsigned char>(s[e]))) break;
      while (IsIdentChar(static_cast<unsigned char>(s[e]))) ++e;
      while (space(s[e])) ++e;
    }
    const char after = s[e];
    if (after == '\n' || after == '\r' || after == ';' || after == '#' || after == '\0' ||
        after == '\\') {
      return false;  // `x = name.a.b`: an alias
    }
  }
  if (next == '.') return true;
  if (next == '=' && s[k + 1] != '=') return false;
  const bool bind_before = prev == '\n' || prev == '(' || prev == ',' || prev == '*' || prev == ';';
  if (bind_before && (next == ':' || next == ',' || next == ')' ||
                      IsIdentStart(static_cast<unsigned char>(next)))) {
    return false;
  }
  if (IsIdentChar(static_cast<unsigned char>(prev))) {
    size_t w = j;
    while (w > begin && IsIdentChar(static_cast<unsigned char>(s[w - 1]))) --w;
    const std::string_view word(s + w, j - w);
    if (Is(word, "def") || Is(word, "class") || Is(word, "as") || Is(word, "for") ||
        Is(word, "lambda") || Is(word, "import")) {
      return false;
    }
  }
  return true;
}

// Note [Resolver scratch]: what a Resolver grows as it reads, kept from run
// to run on each thread (Note [Thread-local scratch] in internal.h) and
// handed to it: a file's resolvers (the fast path makes two, one for its
// first search and one a round) had allocated their vectors, each
// qualified name they bound (a std::string in each binding, on the heap
// past 15 bytes) and Chain's name again at each run, and freed them all:
// 2,622 allocations and 4,114 frees on the Python files of the 20 MB GPU
// tree. The targets are strings of a deque, reused in order (a deque's
// elements stay where they are as it grows, so the bindings' views of them
// hold) and assigned in place, so that their heap buffers are kept.
struct ResolverScratch {
  std::vector<ResolverScope> scopes;
  std::vector<ResolverBinding> bindings;
  std::vector<size_t> dotted;  // Import's and FromImport's dotted name
  std::string chain_q;         // Chain's qualified name (grown, never shrunk)
  std::string module;          // FromImport's module
  std::deque<std::string> targets;
};

class Resolver {
 public:
  Resolver(const RuleSet& rules, std::string_view src, const TokenBuffer<Tok>& toks,
           LexOutput* out, ResolverScratch* scratch)
      : rules_(rules),
        src_(src),
        t_(toks),
        out_(out),
        scratch_(*scratch),
        scopes_(scratch->scopes),
        bindings_(scratch->bindings) {
    scopes_.clear();
    bindings_.clear();
    scopes_.push_back(Scope{-1, 0});
  }

  void Run() {
    const size_t n = t_.size() - kSentinels;
    // Through a raw pointer: after the calls below GCC reloaded the buffer's
    // pointer at every token.
    const Tok* const t = &t_[0];
    bool stmt_start = true;
    bool header = false;      // a compound statement's header: its ':' starts a statement
    int depth = 0;
    int param_depth = -1;     // depth of the parameter list of the `def` being read
    bool await_params = false;
    int for_depth = -1;       // depth of a `for` whose targets are being read
    bool for_stmt = false;
    for (size_t i = 0; i < n; ++i) {
      // A run of tokens that do nothing here but end a statement's start
      // (strings, numbers, dots, operators), passed in a loop of their
      // own: the loop below, which keeps its state on the stack, took 25
      // instructions for each. (Not the first token of a line, whose
      // indent may pop a scope, and not the sentinels: kEnd is none.)
      if (IsPlain(t[i])) {
        do {
          ++i;
        } while (IsPlain(t[i]));
        stmt_start = false;
        if (i >= n) break;
      }
      const Tok& tok = t[i];
      const uint8_t type = tok.type;
      cur_ = static_cast<uint32_t>(i);
      if (tok.first) {
        while (scopes_.size() > 1 && static_cast<int>(tok.indent) <= scopes_.back().indent) {
          bindings_.resize(scopes_.back().bindings_begin);
          scopes_.pop_back();
        }
        stmt_start = true;
        header = false;
        depth = 0;
        param_depth = -1;
        await_params = false;
        for_depth = -1;
        if (i == replay_at_) {  // a run of import lines the first search resolved
          i = Replay();
          continue;
        }
      }
      switch (type) {
        case kName:
          break;
        case kNewline:
        case kSemi:
          stmt_start = true;
          header = false;
          for_depth = -1;
          if (!pending_name_.empty()) {  // `name = torch.cuda` takes effect after its line
            Bind(pending_name_, pending_target_);
            pending_name_ = {};
          }
          continue;
        case kLParen:
        case kLBrack:
        case kLBrace:
        case kFieldOpen:
          ++depth;
          if (await_params && type == kLParen) {
            param_depth = depth;
            await_params = false;
          }
          continue;
        case kRParen:
        case kRBrack:
        case kRBrace:
        case kFieldClose:
          if (depth == param_depth) param_depth = -1;
          if (depth > 0) --depth;
          continue;
        case kColon:
          if (depth == 0 && header) {
            header = false;
            stmt_start = true;
            continue;
          }
          stmt_start = false;
          continue;
        default:
          stmt_start = false;
          continue;
      }

      const std::string_view name = Text(i);
      const uint8_t next = t[i + 1].type;
      if (stmt_start) {
        stmt_start = false;
        if (Is(name, "import")) {
          i = Import(i + 1) - 1;
          continue;
        }
        if (Is(name, "from")) {
          i = FromImport(i + 1) - 1;
          continue;
        }
        if (IsCompoundKeyword(name)) {
          header = true;
          if (Is(name, "for")) {
            for_depth = depth;
            for_stmt = true;
            continue;
          }
        } else if (next == kAssign || next == kColon) {
          // `name = torch.cuda` makes `name` an alias of what the chain resolves to.
          if (next == kAssign && AliasAssignment(i)) continue;
          // `name = ...` / `name: T = ...` rebinds the name; `name = None` is
          // the fallback of an optional import and keeps it (Note [Python scopes]).
          if (!(next == kAssign && t[i + 2].type == kName && Is(Text(i + 2), "None") &&
                (t[i + 3].type == kNewline || t[i + 3].type == kSemi ||
                 t[i + 3].type == kEnd))) {
            Unbind(name);
          }
          continue;
        }
      }
      if (next == kLParen && MaybePatch(name)) MockTarget(i, name);
      if (i > 0 && t[i - 1].type == kDot) continue;  // an attribute
      if (for_depth >= 0) {
        if (Is(name, "in") && depth == for_depth) {
          for_depth = -1;
          continue;
        }
        if (for_stmt && depth == 0) Unbind(name);
        continue;  // a loop target, not a use
      }
      if (!MaybeKeyword(name) && !MaybeBound(name)) continue;  // the common case
      if (Is(name, "for")) {  // a comprehension
        for_depth = depth;
        for_stmt = false;
        continue;
      }
      if (Is(name, "def") || Is(name, "class")) {
        if (next == kName) {
          Unbind(Text(i + 1));
          scopes_.push_back(Scope{StatementIndent(i), bindings_.size()});
          await_params = Is(name, "def");
          header = true;
          ++i;
        }
        continue;
      }
      if (Is(name, "as")) {
        if (next == kName) {
          Unbind(Text(i + 1));
          ++i;
        }
        continue;
      }
      if (Is(name, "global") || Is(name, "nonlocal") || Is(name, "del")) {
        while (t[i + 1].type != kNewline && t[i + 1].type != kSemi && t[i + 1].type != kEnd) {
          ++i;
        }
        continue;
      }
      if (param_depth >= 0 && depth == param_depth) {
        const uint8_t prev = t[i - 1].type;
        if ((prev == kLParen || prev == kComma || prev == kStar) &&
            (next == kComma || next == kRParen || next == kColon || next == kAssign)) {
          Shadow(name);  // a parameter
          continue;
        }
      }
      if (next == kAssign) {
        if (depth == 0) Unbind(name);  // `a = name = ...`
        continue;                      // else a keyword argument
      }
      if (next == kWalrus) {
        Unbind(name);
        continue;
      }
      const std::string_view target = Lookup(name);
      if (target.empty()) continue;
      i = Chain(i, target);
    }
  }

 private:
  using Scope = ResolverScope;
  using Binding = ResolverBinding;

  // The token types Run passes without a look (see there).
  static constexpr uint32_t kPlainTypes = 1u << kString | 1u << kNumber | 1u << kDot |
                                          1u << kAssign | 1u << kWalrus | 1u << kComma |
                                          1u << kStar | 1u << kOther;
  static bool IsPlain(const Tok& tok) {
    return !tok.first && (kPlainTypes >> tok.type & 1) != 0;
  }

  // The keywords the loop below acts on, by length first.
  static bool MaybeKeyword(std::string_view w) {
    switch (w.size()) {
      case 2: return Is(w, "as");
      case 3: return Is(w, "for") || Is(w, "def") || Is(w, "del");
      case 5: return Is(w, "class");
      case 6: return Is(w, "global");
      case 8: return Is(w, "nonlocal");
      default: return false;
    }
  }

  // False when no binding has a name starting with the same byte.
  bool MaybeBound(std::string_view name) const {
    return bound_first_[static_cast<unsigned char>(name[0])];
  }

  static bool IsCompoundKeyword(std::string_view w) {
    switch (w.size()) {
      case 2: return Is(w, "if");
      case 3: return Is(w, "for") || Is(w, "try") || Is(w, "def");
      case 4: return Is(w, "elif") || Is(w, "else") || Is(w, "with");
      case 5: return Is(w, "while") || Is(w, "class") || Is(w, "async");
      case 6: return Is(w, "except");
      case 7: return Is(w, "finally");
      default: return false;
    }
  }

  // A token's text. Not src_.substr: its test of the start against the
  // size (a token lies in the source) and the size's clamp cost 8
  // instructions a name in Run (62.6k names on the Python files of the 20
  // MB GPU tree).
  std::string_view Text(size_t i) const {
    const Tok& tok = t_[i];
    return std::string_view(src_.data() + tok.start, tok.end - tok.start);
  }

  int StatementIndent(size_t i) const {
    while (i > 0 && !t_[i].first) --i;
    return t_[i].indent;
  }

  // The target `name` is bound to; empty where none (or one not from the
  // table's roots).
  std::string_view Lookup(std::string_view name) const {
    // The sizes and first bytes compared first (most bindings differ in
    // them): GCC called string_view's compare out of line for every one.
    const size_t size = name.size();
    const char head = name[0];
    // A name whose first byte no Bind saw has no target (Unbind, from
    // `x = ...` at depth 0 and the like, asked it of every binding).
    if (!bound_first_[static_cast<unsigned char>(head)]) return {};
    for (size_t k = bindings_.size(); k-- > 0;) {
      const std::string_view b = bindings_[k].name;
      if (b.size() == size && b[0] == head && std::memcmp(b.data(), name.data(), size) == 0) {
        return bindings_[k].target;
      }
    }
    return {};
  }

  // A string for a target to be bound, empty, kept until the next Reset or
  // run (Note [Resolver scratch]).
  std::string& NewTarget() {
    if (targets_used_ == scratch_.targets.size()) scratch_.targets.emplace_back();
    std::string& target = scratch_.targets[targets_used_++];
    target.clear();
    return target;
  }

  // `target` must outlive the binding (ResolverBinding).
  void Bind(std::string_view name, std::string_view target) {
    bound_first_[static_cast<unsigned char>(name[0])] = true;
    if (bound_names_ != nullptr) {
      if (!target.empty()) NoteBound(name, target, CurOffset());
      binding_offsets_->push_back(CurOffset());
    }
    bindings_.push_back(Binding{name, target});
  }
  // Rebinding a name that resolves to the table's namespaces hides it.
  void Unbind(std::string_view name) {
    if (!Lookup(name).empty()) {
      if (binding_offsets_ != nullptr) binding_offsets_->push_back(CurOffset());
      bindings_.push_back(Binding{name, {}});
    }
  }
  void Shadow(std::string_view name) { Unbind(name); }

  // Returns the number of components of the longest spelling that is a
  // prefix of `q` at a '.' boundary (0 if none), and sets *match.
  int LongestPrefix(std::string_view q, const RuleSet::Spelling** match) const {
    size_t ends[16];
    int n = 0;
    for (size_t k = 0; k < q.size() && n < 15; ++k) {
      if (q[k] == '.') ends[n++] = k;
    }
    ends[n++] = q.size();
    return LongestPrefixAt(q, ends, n, match);
  }

  // LongestPrefix, given the offsets of q's first 15 dots and then q's size
  // (ends[0, n)): Chain knows them as it writes q.
  int LongestPrefixAt(std::string_view q, const size_t* ends, int n,
                      const RuleSet::Spelling** match) const {
    const int max = rules_.MaxComponents(Language::kPython);
    for (int m = n < max ? n : max; m >= 1; --m) {
      if (const RuleSet::Spelling* s = rules_.Find(Language::kPython, q.substr(0, ends[m - 1]))) {
        *match = s;
        return m;
      }
    }
    return 0;
  }

  static int Components(std::string_view q) {
    int n = 1;
    for (char c : q) n += c == '.';
    return n;
  }

  void Add(int rule, RefKind kind, std::string_view symbol, size_t first_tok, size_t last_tok,
           int64_t call_end) {
    out_->findings.push_back(RawFinding{rule, kind, symbol, t_[first_tok].start,
                                        t_[last_tok].end, call_end});
  }

  // `name = a.b.c` alone on its line, where `a` resolves: records that
  // `name` will stand for a.b.c's qualified name once the line is read (the
  // right side is still read with the old bindings). Returns true if so.
  bool AliasAssignment(size_t i) {
    const size_t j = i + 2;
    if (t_[j].type != kName) return false;
    const std::string_view root = Lookup(Text(j));
    if (root.empty()) return false;
    // The chain's end and its qualified name's size first: most such lines
    // go on past the chain (a call), and are no alias.
    size_t last = j, size = root.size();
    while (t_[last + 1].type == kDot && t_[last + 2].type == kName) {
      last += 2;
      size += 1 + (t_[last].end - t_[last].start);
    }
    const uint8_t after = t_[last + 1].type;
    if (after != kNewline && after != kSemi && after != kEnd) return false;
    std::string& q = NewTarget();
    q.assign(size, '.');
    std::memcpy(q.data(), root.data(), root.size());
    char* w = q.data() + root.size();
    for (size_t k = j + 2; k <= last; k += 2) {
      const size_t len = t_[k].end - t_[k].start;
      std::memcpy(w + 1, src_.data() + t_[k].start, len);  // after the '.' there
      w += 1 + len;
    }
    pending_name_ = Text(i);
    pending_target_ = q;
    return true;
  }

  // Returns the end offset of the bracket that closes the one at token i
  // (-1 if none): an open's from the match the lexer recorded (Note
  // [Brackets matched as lexed]).
  int64_t MatchingEnd(size_t i) const {
    if (IsOpen(t_[i].type)) {
      const size_t span = t_[i].span;
      return span == 0 ? -1 : static_cast<int64_t>(t_[i + span].end);
    }
    int d = 0;
    for (size_t k = i; k < t_.size(); ++k) {
      if (IsOpen(t_[k].type)) ++d;
      else if (IsClose(t_[k].type) && --d == 0) return t_[k].end;
    }
    return -1;
  }

  // A dotted chain whose first name (token i) is bound to `target`. Returns
  // the index of its last token.
  size_t Chain(size_t i, std::string_view target) {
    // The offsets of q's dots as LongestPrefix finds them (the first 15),
    // the target's found in the pass that counts its components, the
    // others where the names are written: LongestPrefix's pass over q cost
    // 157 instructions a chain on the Python files of the 20 MB GPU tree.
    size_t ends[16];
    int n = 0, target_dots = 0;
    for (size_t k = 0; k < target.size(); ++k) {
      if (target[k] != '.') continue;
      if (n < 15) ends[n++] = k;
      ++target_dots;
    }
    const int target_components = target_dots + 1;
    const int max = rules_.MaxComponents(Language::kPython);
    // The chain's names, and the size of its qualified name: the target,
    // then the names after the first while no spelling is too short for
    // them. It is then written with one resize and copies (a `+=` and an
    // `append` a name were two calls into libstdc++ each).
    size_t last = i, size = target.size(), kept = i;
    int names = 1;
    while (t_[last + 1].type == kDot && t_[last + 2].type == kName) {
      last += 2;
      ++names;
      if (target_components + names - 1 <= max) {
        size += 1 + (t_[last].end - t_[last].start);
        kept = last;
      }
    }
    // Written into a buffer kept by the scratch, grown where it is short
    // (a resize at each chain was a call into libstdc++, 68 instructions).
    std::string& buffer = scratch_.chain_q;
    if (buffer.size() < size) buffer.resize(size);
    char* const q_data = buffer.data();
    char* w = q_data;
    std::memcpy(w, target.data(), target.size());
    w += target.size();
    for (size_t k = i + 2; k <= kept; k += 2) {
      const size_t len = t_[k].end - t_[k].start;
      if (n < 15) ends[n++] = static_cast<size_t>(w - q_data);
      *w++ = '.';
      std::memcpy(w, src_.data() + t_[k].start, len);
      w += len;
    }
    ends[n++] = size;
    const std::string_view q(q_data, size);
    if (chains_ != nullptr) NoteChain(i, last, q, chains_);
    const RuleSet::Spelling* s = nullptr;
    const int m = LongestPrefixAt(q, ends, n, &s);
    if (m == 0) return last;
    const Rule& rule = rules_.rules()[s->rule];
    if (rule.kept) return last;
    int used = m - target_components + 1;
    if (used < 1) used = 1;
    const size_t end_tok = i + 2 * static_cast<size_t>(used - 1);
    if (used == names && t_[last + 1].type == kLParen) {
      Add(s->rule, RefKind::kCall, s->text, i, end_tok, MatchingEnd(last + 1));
    } else {
      Add(s->rule, RefKind::kReference, s->text, i, end_tok, -1);
    }
    return last;
  }

  // Note [Mock targets]: a test that patches a legacy symbol stops
  // intercepting the code under test once that code is migrated, so the patch
  // is a finding of its own (kind "mock"): `mock.patch("torch.cuda.X", ...)`,
  // `patch("...")`, `mocker.patch("...")`, `monkeypatch.setattr("...", v)`
  // and `delattr("...")` name the target in a string literal, which is not
  // alias-resolved (it is an import path: it starts with the root `torch`),
  // and the finding spans the literal, quotes included; `patch.object(torch.cuda,
  // "X")`, `monkeypatch.setattr(th.cuda, "X", v)`, `setattr(...)` and
  // `delattr(...)` name an object (resolved through the file's imports) and
  // an attribute, and the finding spans both, from the object's first name to
  // the end of the literal. Only a plain literal counts (no prefix, escape,
  // triple quotes or concatenation), and in the object form only a row that
  // covers the attribute (the object itself is a finding of its own).
  static bool MaybePatch(std::string_view w) {
    switch (w.size()) {
      case 5: return Is(w, "patch");
      case 6: return Is(w, "object");
      case 7: return Is(w, "setattr") || Is(w, "delattr");
      default: return false;
    }
  }

  // The content of the plain string literal at token i and the offset just
  // past its closing quote; false for any other literal.
  bool PlainString(size_t i, std::string_view* content, uint32_t* end) const {
    if (t_[i].type != kString || t_[i].end != t_[i].start + 1) return false;
    const char quote = src_[t_[i].start];
    const size_t from = t_[i].end;
    if (from + 1 < src_.size() && src_[from] == quote && src_[from + 1] == quote) return false;
    size_t k = from;
    while (k < src_.size() && src_[k] != quote) {
      const char c = src_[k];
      if (!(c == '.' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9'))) {
        return false;
      }
      ++k;
    }
    if (k >= src_.size() || k == from) return false;
    *content = src_.substr(from, k - from);
    *end = static_cast<uint32_t>(k + 1);
    const uint8_t after = t_[i + 1].type;
    return t_[i + 1].start >= *end && (after == kComma || after == kRParen);
  }

  // `callee(` at token i (Note [Mock targets]).
  void MockTarget(size_t i, std::string_view callee) {
    const bool object = Is(callee, "object");
    if (object && !(i >= 2 && t_[i - 1].type == kDot && t_[i - 2].type == kName &&
                    Is(Text(i - 2), "patch"))) {
      return;
    }
    const size_t a = i + 2;  // the first argument
    std::string_view content;
    uint32_t end = 0;
    if (!object && t_[a].type == kString) {
      if (!PlainString(a, &content, &end)) return;
      const size_t dot = content.find('.');
      if (dot == std::string_view::npos ||
          !rules_.IsRoot(Language::kPython, content.substr(0, dot))) {
        return;
      }
      AddMock(std::string(content), 0, t_[a].start, end);
      return;
    }
    if (Is(callee, "patch") || t_[a].type != kName) return;
    const std::string_view target = Lookup(Text(a));
    if (target.empty()) return;
    std::string q(target);
    size_t last = a;
    while (t_[last + 1].type == kDot && t_[last + 2].type == kName) {
      last += 2;
      q += '.';
      q.append(Text(last));
    }
    if (t_[last + 1].type != kComma || !PlainString(last + 2, &content, &end)) return;
    const int object_components = Components(q);
    q += '.';
    q.append(content);
    AddMock(q, object_components, t_[a].start, end);
  }

  void AddMock(const std::string& q, int min_components, uint32_t start, uint32_t end) {
    const RuleSet::Spelling* s = nullptr;
    const int m = LongestPrefix(q, &s);
    if (m <= min_components || rules_.rules()[s->rule].kept) return;
    out_->findings.push_back(RawFinding{s->rule, RefKind::kMock, s->text, start, end, -1});
  }

  size_t SkipStatement(size_t i) const {
    while (t_[i].type != kNewline && t_[i].type != kSemi && t_[i].type != kEnd) ++i;
    return i;
  }

  // Reads NAME(.NAME)* at i into *parts (token indices); returns the index
  // after it.
  size_t Dotted(size_t i, std::vector<size_t>* parts) const {
    parts->clear();
    if (t_[i].type != kName) return i;
    parts->push_back(i);
    while (t_[i + 1].type == kDot && t_[i + 2].type == kName) {
      i += 2;
      parts->push_back(i);
    }
    return i + 1;
  }

  // Writes the names of `parts` joined by '.' into *out, with no append calls.
  void Join(const std::vector<size_t>& parts, std::string* out) const {
    size_t size = parts.empty() ? 0 : parts.size() - 1;
    for (size_t k : parts) size += t_[k].end - t_[k].start;
    std::string& q = *out;
    q.assign(size, '.');
    char* w = q.data();
    for (size_t k = 0; k < parts.size(); ++k) {
      const size_t len = t_[parts[k]].end - t_[parts[k]].start;
      std::memcpy(w, src_.data() + t_[parts[k]].start, len);
      w += len + 1;  // past the '.' already there
    }
  }

  // `import a.b.c [as x], ...`; i is the token after `import`. Returns the
  // index of the statement's end.
  // Inlined: out of line (as GCC left it once the first search recorded
  // its binds), the full path took 1.0M more instructions on the Python
  // files of the 20 MB GPU tree.
  __attribute__((always_inline)) size_t Import(size_t i) {
    std::vector<size_t>& parts = scratch_.dotted;  // reused (Import is not reentrant)
    for (;;) {
      i = Dotted(i, &parts);
      if (parts.empty()) return SkipStatement(i);
      std::string_view alias;
      if (t_[i].type == kName && Is(Text(i), "as") && t_[i + 1].type == kName) {
        alias = Text(i + 1);
        i += 2;
      }
      const std::string_view root = Text(parts[0]);
      if (rules_.IsRoot(Language::kPython, root)) {
        std::string& q = NewTarget();
        Join(parts, &q);
        if (report_imports_) {
          const RuleSet::Spelling* s = nullptr;
          const int m = LongestPrefix(q, &s);
          if (m > 0 && !rules_.rules()[s->rule].kept) {
            Add(s->rule, RefKind::kImport, s->text, parts[0], parts[static_cast<size_t>(m) - 1],
                -1);
          }
        }
        if (!alias.empty()) {
          ImportBind(alias, q);
        } else {
          ImportBind(root, root);  // (the source's bytes)
        }
      } else {
        ImportUnbind(alias.empty() ? root : alias);
      }
      if (t_[i].type != kComma) break;
      ++i;
    }
    return SkipStatement(i);
  }

  // `from [.]*M import a [as b], ... | (...) | *`; i is the token after `from`.
  size_t FromImport(size_t i) {
    bool relative = false;
    while (t_[i].type == kDot) {
      relative = true;
      ++i;
    }
    std::vector<size_t>& module = scratch_.dotted;  // reused
    i = Dotted(i, &module);
    if (t_[i].type != kName || Text(i) != "import") return SkipStatement(i);
    ++i;
    if (t_[i].type == kLParen) ++i;
    const bool torch = !relative && !module.empty() &&
                       rules_.IsRoot(Language::kPython, Text(module[0]));
    std::string& m = scratch_.module;
    if (torch) {
      Join(module, &m);
    } else {
      m.clear();
    }
    const int m_components = static_cast<int>(module.size());
    bool module_reported = false;
    auto report_module = [&](const RuleSet::Spelling* s, int matched) {
      if (module_reported || rules_.rules()[s->rule].kept) return;
      module_reported = true;
      Add(s->rule, RefKind::kImport, s->text, module[0], module[static_cast<size_t>(matched) - 1],
          -1);
    };
    for (;;) {
      if (t_[i].type == kStar) {
        if (torch && report_imports_) {
          const RuleSet::Spelling* s = nullptr;
          const int matched = LongestPrefix(m, &s);
          if (matched > 0) report_module(s, matched);
        }
        ++i;
      } else if (t_[i].type == kName) {
        const size_t name_tok = i;
        std::string_view local = Text(i);
        ++i;
        if (t_[i].type == kName && Is(Text(i), "as") && t_[i + 1].type == kName) {
          local = Text(i + 1);
          i += 2;
        }
        if (torch) {
          // m + "." + the name, with no append calls.
          const std::string_view name = Text(name_tok);
          std::string& q = NewTarget();
          q.assign(m.size() + 1 + name.size(), '.');
          std::memcpy(q.data(), m.data(), m.size());
          std::memcpy(q.data() + m.size() + 1, name.data(), name.size());
          if (report_imports_) {
            const RuleSet::Spelling* s = nullptr;
            const int matched = LongestPrefix(q, &s);
            if (matched > m_components && s != nullptr) {  // (s is set: for -Wnull-dereference)
              if (!rules_.rules()[s->rule].kept) {
                Add(s->rule, RefKind::kImport, s->text, name_tok, name_tok, -1);
              }
            } else if (matched > 0) {
              report_module(s, matched);
            }
          }
          ImportBind(local, q);
        } else {
          ImportUnbind(local);
        }
      } else {
        break;
      }
      if (t_[i].type != kComma) break;
      ++i;
    }
    return SkipStatement(i);
  }

  const RuleSet& rules_;
  std::string_view src_;
  const TokenBuffer<Tok>& t_;
  LexOutput* out_;
  ResolverScratch& scratch_;
  std::vector<Scope>& scopes_;
  std::vector<Binding>& bindings_;

 public:
  // Forgets what Run read, for a Run over new tokens of the same buffer
  // (the fast path resolves its import lines one by one with one resolver:
  // no allocation per line).
  void Reset() {
    cur_ = 0;
    scopes_.clear();
    scopes_.push_back(Scope{-1, 0});
    bindings_.clear();
    targets_used_ = 0;
    std::fill(std::begin(bound_first_), std::end(bound_first_), false);
    pending_name_ = {};
    pending_target_ = {};
  }

  // Where the chains the literal rules ask about are recorded; null when no
  // literal rule is on (see PyLiterals).
  std::vector<ResolvedChain>* chains_ = nullptr;
  // The fast path's (Note [Fast path]): where the names bound to a target
  // are recorded, and the offsets at which any binding changed; null in the
  // full path.
  std::vector<std::string_view>* bound_names_ = nullptr;
  std::vector<uint8_t>* bound_cheap_ = nullptr;  // by bound name: CheapTarget (Note [Cheap names])
  // By bound name: the offset it was bound at (Note [Names searched from
  // their binding]).
  std::vector<uint32_t>* bound_offsets_ = nullptr;
  std::vector<uint32_t>* binding_offsets_ = nullptr;
  // False in the fast path's first search, which asks the import lines for
  // the names they bind only: their spellings are not looked up (the
  // rounds report them).
  bool report_imports_ = true;
  // The first search's: where the import statements' binds are recorded
  // (null elsewhere).
  std::vector<ImportOp>* import_log_ = nullptr;
  // The rounds': the runs of import lines to replay instead of resolving
  // them again, in the order of their tokens (null: none).
  void SetReplay(const std::vector<ImportReplay>* replay) {
    replay_ = replay;
    next_replay_ = 0;
    replay_at_ = replay->empty() ? kNoReplay : (*replay)[0].tok_begin;
  }

 private:
  // The index of the token being read: a store of the loop's index at each
  // token, where its offset was worked out at each (read only by a binding).
  uint32_t cur_ = 0;
  // The offset of the token being read (a newline's: its last byte).
  uint32_t CurOffset() const {
    const Tok& tok = t_[cur_];
    return tok.type == kNewline && tok.start > 0 ? tok.start - 1 : tok.start;
  }
  static constexpr size_t kNoReplay = ~size_t{0};
  const std::vector<ImportReplay>* replay_ = nullptr;
  size_t next_replay_ = 0;
  size_t replay_at_ = kNoReplay;  // the first token of the next run to replay

  // Bind and Unbind from an import statement. Where they are recorded (a
  // run of import statements alone: no later statement of the run looks a
  // name up), the names bound to a target are all the first search needs.
  void ImportBind(std::string_view name, std::string_view target) {
    if (import_log_ != nullptr) {
      if (!target.empty()) NoteBound(name, target, CurOffset());
      import_log_->push_back(ImportOp{CurOffset(), true, name, std::string(target)});
      return;
    }
    Bind(name, target);
  }
  void ImportUnbind(std::string_view name) {
    if (import_log_ != nullptr) {
      import_log_->push_back(ImportOp{CurOffset(), false, name, {}});
      return;
    }
    Unbind(name);
  }

  // A name bound to a target, for the fast path's searches.
  void NoteBound(std::string_view name, std::string_view target, uint32_t offset) {
    bound_names_->push_back(name);
    bound_cheap_->push_back(CheapTarget(rules_, target) ? 1 : 0);
    bound_offsets_->push_back(offset);
  }

  // Does what resolving the run at replay_at_ would do (it holds import
  // statements alone, one a line, its lines of one indent: no scope opens
  // or closes in it); returns the index of its last token (its newline).
  size_t Replay() {
    const ImportReplay& run = (*replay_)[next_replay_];
    out_->findings.insert(out_->findings.end(), run.findings, run.findings + run.finding_count);
    for (size_t k = 0; k < run.op_count; ++k) {
      const ImportOp& op = run.ops[k];
      if (op.bind) {
        bound_first_[static_cast<unsigned char>(op.name[0])] = true;
        if (bound_names_ != nullptr) {
          if (!op.target.empty()) NoteBound(op.name, op.target, op.offset);
          binding_offsets_->push_back(op.offset);
        }
        bindings_.push_back(Binding{op.name, op.target});  // (the op outlives the run)
      } else if (!Lookup(op.name).empty()) {
        if (binding_offsets_ != nullptr) binding_offsets_->push_back(op.offset);
        bindings_.push_back(Binding{op.name, {}});
      }
    }
    ++next_replay_;
    replay_at_ = next_replay_ < replay_->size() ? (*replay_)[next_replay_].tok_begin : kNoReplay;
    return run.tok_end - 1;
  }

  bool bound_first_[256] = {};  // first bytes of the names ever bound
  std::string_view pending_name_;    // see AliasAssignment
  std::string_view pending_target_;  // (a string of NewTarget's)
  size_t targets_used_ = 0;          // the strings of scratch_.targets in use
};

// ---------------------------------------------------------------------------
// Note [Literal rules]: the detectors of compat_map/literals.toml (device
// literals and idioms) run over the same tokens after the resolver, which
// hands them the chains that resolve to torch.device, autocast, GradScaler,
// torch.cuda.is_available/device_count and torch.distributed.*. A string is a
// device literal only in a device position: the device argument of those
// calls, a `device=`/`map_location=` keyword of any call, `.to(...)`, a
// comparison with a device's `.type`, or a branch of the availability idiom.
// Everything else ("cuda" in a message, a dict key, a subscript, a
// comparison with a user's value, a mock.patch target) is no finding. A
// finding inside an idiom's span is left to the idiom.

// What PyLiterals grows as it reads, kept from run to run on each thread
// (Note [Resolver scratch]: each run had allocated its stack of brackets).
struct PyLiteralsScratch {
  // An open bracket before the token Run is at that nothing has closed yet:
  // its token, the commas and whether a newline or ';' followed it at its
  // own depth.
  struct OpenBracket {
    size_t tok;
    int commas;
    bool ended;
  };
  std::vector<OpenBracket> open;
  std::vector<uint32_t> availability_first;
};

class PyLiterals {
 public:
  PyLiterals(const RuleSet& rules, std::string_view src, const TokenBuffer<Tok>& toks,
             const std::vector<ResolvedChain>& chains, LexOutput* out,
             PyLiteralsScratch* scratch)
      : rules_(rules),
        src_(src),
        t_(toks),
        chains_(chains),
        out_(out),
        open_(scratch->open),
        availability_first_(scratch->availability_first) {
    open_.clear();
    availability_first_.clear();
    for (const ResolvedChain& c : chains_) {
      if (c.kind == kChainAvailability) availability_first_.push_back(c.first);
    }
    availability_ = !availability_first_.empty();
  }

  static constexpr size_t kNoChain = ~size_t{0};
  using OpenBracket = PyLiteralsScratch::OpenBracket;

  // One pass over the tokens that looks closer only at the few that can start
  // a finding: a string whose text starts with 'c' or 'n' ("cuda", "cpu",
  // "nccl"), a torch.device chain, `.cuda`/`.is_cuda`, and an `if` that
  // starts a statement when the file asks torch whether it has a device. The
  // position of a candidate (which call's argument it is) is kept on a stack
  // of the open brackets as the pass goes (see ContextOf), so ordinary tokens
  // cost a type check and a candidate a constant.
  void Run() {
    n_ = t_.size() - kSentinels;
    // torch.device chains matter only as the value of an idiom.
    size_t next_device = availability_ ? NextDeviceChain() : kNoChain;
    // Through a raw pointer: after the calls below GCC reloaded the buffer's
    // pointer at every token.
    const Tok* const t = &t_[0];
    for (size_t k = 0; k < n_; ++k) {
      const Tok& tok = t[k];
      switch (tok.type) {
        case kString: {
          const char c = src_[tok.end];
          if (c == 'c' || c == 'n') OnValue(k);
          break;
        }
        case kName: {
          if (k == next_device) {
            if (!Covered(tok.start)) {
              const Value v = ValueAt(k);
              if (v.text != DeviceText::kOther) Idiom(k, v);
            }
            next_device = NextDeviceChain();
            break;
          }
          const uint32_t len = tok.end - tok.start;
          if (len == 4 || len == 7) {
            const char c0 = src_[tok.start];
            if ((c0 == 'c' || c0 == 'i') && k > 0 && t[k - 1].type == kDot) Method(k);
          } else if (len == 2 && tok.first && availability_ && src_[tok.start] == 'i' &&
                     src_[tok.start + 1] == 'f') {
            Statement(k);
          }
          break;
        }
        case kComma:
          if (!open_.empty()) ++open_.back().commas;
          break;
        case kNewline:
        case kSemi:
          if (!open_.empty()) open_.back().ended = true;
          break;
        case kLParen:
        case kLBrack:
        case kLBrace:
        case kFieldOpen:
          open_.push_back(OpenBracket{k, 0, false});
          break;
        case kRParen:
        case kRBrack:
        case kRBrace:
        case kFieldClose:
          if (!open_.empty()) open_.pop_back();
          break;
        default:
          break;
      }
    }
  }

  // The first token of the next torch.device chain after the cursor.
  size_t NextDeviceChain() {
    while (chain_ < chains_.size() && chains_[chain_].kind != kChainTorchDevice) ++chain_;
    return chain_ < chains_.size() ? chains_[chain_++].first : kNoChain;
  }

 private:
  enum Callee : uint8_t { kNotCall, kCall, kTo, kTorchDevice, kAutocast, kGradScaler,
                          kInitProcessGroup, kDistributed, kConfig };
  // The bracket a token is inside of, as far as the detectors care.
  struct Context {
    size_t open = 0;      // the bracket's token (valid when callee != kNotCall)
    Callee callee = kNotCall;
    size_t callee_first = 0;  // first token of the callee chain (kTorchDevice)
    int arg = 0;              // index of the argument the token is in
  };
  // A value in a device position: a string, an f"cuda:{i}" or torch.device(...).
  struct Value {
    DeviceText text = DeviceText::kOther;
    size_t next = 0;  // the token after it
    uint32_t start = 0, end = 0;
  };

  static bool IsCudaText(DeviceText t) {
    return t == DeviceText::kCuda || t == DeviceText::kCudaIndex;
  }

  std::string_view Text(size_t k) const {  // (as the resolver's Text)
    const Tok& tok = t_[k];
    return std::string_view(src_.data() + tok.start, tok.end - tok.start);
  }
  bool NameIs(size_t k, std::string_view w) const {
    return t_[k].type == kName && Text(k) == w;
  }

  // The index of the bracket that closes the one at k (n_ if none): an
  // open's from the match the lexer recorded (Note [Brackets matched as
  // lexed]).
  size_t Close(size_t k) const {
    if (k < n_ && IsOpen(t_[k].type)) {
      const size_t span = t_[k].span;
      return span == 0 ? n_ : k + span;
    }
    int d = 0;
    for (size_t j = k; j < n_; ++j) {
      if (IsOpen(t_[j].type)) {
        ++d;
      } else if (IsClose(t_[j].type) && --d == 0) {
        return j;
      }
    }
    return n_;
  }

  // The chain whose first token is k, or null.
  const ResolvedChain* ChainAt(size_t k) const {
    auto it = std::lower_bound(chains_.begin(), chains_.end(), k,
                               [](const ResolvedChain& c, size_t v) { return c.first < v; });
    return it != chains_.end() && it->first == k ? &*it : nullptr;
  }
  // The chain whose last token is k, or null.
  const ResolvedChain* ChainEndingAt(size_t k) const {
    auto it = std::upper_bound(chains_.begin(), chains_.end(), k,
                               [](size_t v, const ResolvedChain& c) { return v < c.first; });
    if (it == chains_.begin()) return nullptr;
    --it;
    return it->last == k ? &*it : nullptr;
  }
  // Whether an availability chain starts in tokens [a, b): a binary search
  // of their starts alone (skipping the other chains one by one was linear
  // in them, for every idiom tried).
  bool AvailabilityIn(size_t a, size_t b) const {
    auto it = std::lower_bound(availability_first_.begin(), availability_first_.end(), a);
    return it != availability_first_.end() && *it < b;
  }

  static bool IsNotCallee(std::string_view w) {
    switch (w.size()) {
      case 2: return Is(w, "if") || Is(w, "in") || Is(w, "or") || Is(w, "is");
      case 3: return Is(w, "and") || Is(w, "not") || Is(w, "for");
      case 4: return Is(w, "elif") || Is(w, "else") || Is(w, "with");
      case 5: return Is(w, "while") || Is(w, "yield") || Is(w, "await") || Is(w, "raise");
      case 6: return Is(w, "return") || Is(w, "assert") || Is(w, "lambda");
      default: return false;
    }
  }

  // The innermost bracket around the token Run is at (within the
  // statement: no newline token is emitted inside brackets). It is the top
  // of open_, which holds the brackets before it that no later bracket
  // closes: what reading backwards from the token and counting the depth finds, in
  // constant time (reading back from every string of a 40,000-argument call
  // was quadratic). A newline or ';' inside that bracket, outside any
  // nested one, means the token is in no bracket of its statement.
  Context ContextOf() const {
    Context c;
    if (open_.empty() || open_.back().ended) return c;
    const OpenBracket& o = open_.back();
    if (t_[o.tok].type == kLParen) FindCallee(o.tok, &c);
    c.arg = o.commas;
    return c;
  }

  // What the '(' at j calls.
  void FindCallee(size_t j, Context* c) const {
    if (j == 0) return;
    c->open = j;
    const Tok& prev = t_[j - 1];
    if (prev.type == kRParen || prev.type == kRBrack) {
      c->callee = kCall;
      return;
    }
    if (prev.type != kName || IsNotCallee(Text(j - 1)) ||
        (j >= 2 && t_[j - 2].type == kName &&
         (Is(Text(j - 2), "def") || Is(Text(j - 2), "class")))) {
      return;
    }
    c->callee = kCall;
    if (const ResolvedChain* ch = ChainEndingAt(j - 1)) {
      c->callee_first = ch->first;
      switch (ch->kind) {
        case kChainTorchDevice: c->callee = kTorchDevice; break;
        case kChainAutocast: c->callee = kAutocast; break;
        case kChainGradScaler: c->callee = kGradScaler; break;
        case kChainInitProcessGroup: c->callee = kInitProcessGroup; break;
        case kChainDistributed: c->callee = kDistributed; break;
        default: break;
      }
    } else if (j >= 2 && t_[j - 2].type == kDot && Is(Text(j - 1), "to")) {
      c->callee = kTo;
    }
    if (c->callee == kCall && IsConfigCallee(Text(j - 1))) c->callee = kConfig;
  }

  // The last dotted name of a callee that builds a container of settings
  // (dict(device="cuda"), types.SimpleNamespace(...), parser.set_defaults(...),
  // cfg.update(...)): its device= keyword is a value stored for later, not a
  // device position, and the rules that read keywords skip it.
  static bool IsConfigCallee(std::string_view w) {
    switch (w.size()) {
      case 4: return Is(w, "dict");
      case 5: return Is(w, "edict");
      case 6: return Is(w, "update");
      case 8: return Is(w, "EasyDict");
      case 9: return Is(w, "Namespace");
      case 10: return Is(w, "setdefault") || Is(w, "namedtuple");
      case 11: return Is(w, "OrderedDict") || Is(w, "defaultdict");
      case 12: return Is(w, "add_argument") || Is(w, "set_defaults");
      case 15: return Is(w, "SimpleNamespace");
      default: return false;
    }
  }

  // The value starting at token k, if it is one the rules read.
  Value ValueAt(size_t k) const {
    Value v;
    const Tok& t = t_[k];
    if (t.type == kString) {
      const size_t open_end = t.end;
      const char quote = src_[open_end - 1];
      size_t prefix_end = t.start;
      while (prefix_end < open_end && src_[prefix_end] != '"' && src_[prefix_end] != '\'') {
        ++prefix_end;
      }
      if (open_end - prefix_end != 1) return v;  // triple-quoted
      bool fmt = false;
      for (size_t p = t.start; p < prefix_end; ++p) {
        const char c = static_cast<char>(src_[p] | 0x20);
        if (c == 'b' || c == 't') return v;  // bytes, template strings
        if (c == 'f') fmt = true;
      }
      if (fmt) {
        // f"cuda:{expr}" and nothing else
        if (src_.compare(open_end, 5, "cuda:") != 0 || t_[k + 1].type != kFieldOpen ||
            t_[k + 1].start != open_end + 5) {
          return v;
        }
        const size_t close = Close(k + 1);
        if (close >= n_ || src_[t_[close].end] != quote) return v;
        v.text = DeviceText::kCudaIndex;
        v.next = close + 1;
        v.start = t.start;
        v.end = t_[close].end + 1;
        return v;
      }
      size_t q = open_end;
      while (q < open_end + 12 && q < src_.size() && src_[q] != quote && src_[q] != '\\' &&
             src_[q] != '\n') {
        ++q;
      }
      if (q >= src_.size() || src_[q] != quote) return v;
      if (t_[k + 1].type == kString) return v;  // implicit concatenation
      v.text = ClassifyDeviceText(src_.substr(open_end, q - open_end));
      v.next = k + 1;
      v.start = t.start;
      v.end = static_cast<uint32_t>(q + 1);
      return v;
    }
    if (t.type == kName) {
      const ResolvedChain* c = ChainAt(k);
      if (c == nullptr || c->kind != kChainTorchDevice || t_[c->last + 1].type != kLParen) {
        return v;
      }
      const size_t open = c->last + 1;
      const size_t close = Close(open);
      if (close >= n_) return v;
      const Value inner = ValueAt(open + 1);
      if (inner.text == DeviceText::kOther || inner.text == DeviceText::kNccl) return v;
      if (t_[inner.next].type != kRParen && t_[inner.next].type != kComma) return v;
      v.text = inner.text;
      v.next = close + 1;
      v.start = t.start;
      v.end = t_[close].end;
    }
    return v;
  }

  static bool EndsExpression(uint8_t type) {
    return type == kNewline || type == kSemi || type == kRParen || type == kComma ||
           type == kRBrack || type == kRBrace || type == kEnd || type == kColon ||
           type == kFieldClose;
  }
  static bool EndsArgument(uint8_t type) { return type == kComma || type == kRParen; }

  bool Covered(uint32_t offset) const {
    return offset >= covered_start_ && offset < covered_end_;
  }
  void Cover(uint32_t start, uint32_t end) {
    covered_start_ = start;
    covered_end_ = end;
  }

  void Add(Detector d, RefKind kind, uint32_t start, uint32_t end, int64_t call_end) {
    const int rule = rules_.DetectorRule(d);
    if (rule < 0) return;
    if (Covered(start)) return;  // inside an idiom
    out_->findings.push_back(RawFinding{rule, kind, rules_.rules()[rule].detector, start, end,
                                        call_end});
  }

  // `V1 if COND else V2` at k, one branch CUDA and the other the CPU, COND
  // asking torch whether it has a device. Returns true if found.
  bool Idiom(size_t k, const Value& v1) {
    if (!availability_ || !NameIs(v1.next, "if")) return false;
    const size_t from = v1.next + 1;
    // The `else` (or what ends the expression first) at this depth. A value
    // after an earlier one's `if` in the same bracket, before where that
    // scan stopped, stops at the same token: reuse it, so that
    // `"cuda" if "cuda" if ... else X` costs its length once, not once per
    // value (Note [Idiom scans]).
    const size_t bracket = open_.empty() ? kNoChain : open_.back().tok;
    size_t j;
    bool is_else;
    if (scan_.valid && scan_.bracket == bracket && scan_.depth == open_.size() &&
        from >= scan_.from && from <= scan_.stop) {
      j = scan_.stop;
      is_else = scan_.is_else;
    } else {
      j = from;
      is_else = false;
      for (; j < n_; ++j) {
        const uint8_t type = t_[j].type;
        if (IsOpen(type)) {
          j = Close(j);
          continue;
        }
        if (type == kName && Is(Text(j), "else")) {
          is_else = true;
          break;
        }
        if (EndsExpression(type) || (type == kName && Is(Text(j), "lambda"))) break;
      }
      scan_ = IdiomScan{true, bracket, open_.size(), from, j, is_else};
    }
    if (!is_else || j >= n_ || !AvailabilityIn(from, j)) return false;
    const Value v2 = ValueAt(j + 1);
    if (!((IsCudaText(v1.text) && v2.text == DeviceText::kCpu) ||
          (v1.text == DeviceText::kCpu && IsCudaText(v2.text)))) {
      return false;
    }
    if (!EndsExpression(t_[v2.next].type)) return false;
    uint32_t start = v1.start, end = v2.end;
    // torch.device(IDIOM): the finding is the whole call.
    if (k > 0 && t_[k - 1].type == kLParen && t_[v2.next].type == kRParen) {
      Context c;
      FindCallee(k - 1, &c);
      if (c.callee == kTorchDevice && Close(k - 1) == v2.next) {
        start = t_[c.callee_first].start;
        end = t_[v2.next].end;
      }
    }
    Add(kPyAvailability, RefKind::kIdiom, start, end, -1);
    Cover(start, end);
    return true;
  }

  void OnValue(size_t k) {
    if (Covered(t_[k].start)) return;
    const Value v = ValueAt(k);
    if (v.text == DeviceText::kOther) return;
    if (v.text != DeviceText::kNccl && Idiom(k, v)) return;
    if (v.text == DeviceText::kCpu) return;
    const bool cuda = IsCudaText(v.text);
    // x.device.type == "cuda" / "cuda" != x.device.type
    if (cuda && v.text == DeviceText::kCuda && (ComparedWithTypeBefore(k) ||
                                                ComparedWithTypeAfter(v.next))) {
      Add(kPyDeviceTypeCompare, RefKind::kLiteral, v.start, v.end, -1);
      return;
    }
    if (k < 2 || !EndsArgument(t_[v.next].type)) return;
    const uint8_t prev = t_[k - 1].type;
    std::string_view keyword;
    if (prev == kAssign && k >= 3 && t_[k - 2].type == kName &&
        (t_[k - 3].type == kLParen || t_[k - 3].type == kComma)) {
      keyword = Text(k - 2);
    } else if (!(prev == kLParen || prev == kComma)) {
      return;  // part of a larger expression
    }
    const Context o = ContextOf();
    if (o.callee == kNotCall) return;
    const bool first = keyword.empty() && o.arg == 0;
    switch (o.callee) {
      case kTorchDevice:
        if (cuda && (first || Is(keyword, "type"))) {
          const size_t close = Close(o.open);
          Add(kPyDeviceCall, RefKind::kCall, t_[o.callee_first].start, t_[o.open - 1].end,
              close < n_ ? static_cast<int64_t>(t_[close].end) : int64_t{-1});
        }
        return;
      case kTo:
        if (cuda && (first || Is(keyword, "device"))) {
          Add(kPyToCall, RefKind::kLiteral, v.start, v.end, -1);
        }
        return;
      case kAutocast:
      case kGradScaler:
        if (cuda && (first || Is(keyword, "device_type") || Is(keyword, "device"))) {
          Add(kPyAmpDevice, RefKind::kLiteral, v.start, v.end, -1);
        }
        return;
      case kInitProcessGroup:
      case kDistributed:
        if (v.text == DeviceText::kNccl &&
            (Is(keyword, "backend") || (first && o.callee == kInitProcessGroup))) {
          Add(kPyNcclBackend, RefKind::kLiteral, v.start, v.end, -1);
          return;
        }
        break;
      case kConfig:
        return;  // a setting's value (IsConfigCallee)
      default:
        break;
    }
    if (cuda && (Is(keyword, "device") || Is(keyword, "map_location"))) {
      Add(kPyDeviceKeyword, RefKind::kLiteral, v.start, v.end, -1);
    }
  }

  // `...device.type ==` or `...).type ==` just before the string at k.
  bool ComparedWithTypeBefore(size_t k) const {
    if (k < 4 || t_[k - 1].type != kOther) return false;
    const std::string_view op = Text(k - 1);
    if (op != "==" && op != "!=") return false;
    return DeviceTypeAttribute(k - 2);
  }
  // `"cuda" == x.device.type`: the chain after the operator ends in such a `.type`.
  bool ComparedWithTypeAfter(size_t k) const {
    if (t_[k].type != kOther) return false;
    const std::string_view op = Text(k);
    if (op != "==" && op != "!=") return false;
    size_t j = k + 1;
    if (t_[j].type != kName) return false;
    // NAME(.NAME | (...) | [...])*: torch.zeros(2).device.type, xs[0].device.type
    for (;;) {
      const uint8_t next = t_[j + 1].type;
      if (next == kDot && t_[j + 2].type == kName) {
        j += 2;
      } else if (next == kLParen || next == kLBrack) {
        const size_t close = Close(j + 1);
        if (close >= n_) return false;
        j = close;
      } else {
        break;
      }
    }
    return t_[j].type == kName && DeviceTypeAttribute(j);
  }
  // Token k is the `type` of `<device>.type`, where <device> is a name
  // containing "device" (x.device, device, self.device) or a call's `)`.
  bool DeviceTypeAttribute(size_t k) const {
    if (k < 2 || !NameIs(k, "type") || t_[k - 1].type != kDot) return false;
    const Tok& base = t_[k - 2];
    if (base.type == kRParen) return true;
    if (base.type != kName) return false;
    const std::string_view b = Text(k - 2);
    return b.find("device") != std::string_view::npos || Is(b, "dev");
  }

  // `.cuda(...)` and `.is_cuda` at token k (a name after a '.').
  void Method(size_t k) {
    const Tok& tok = t_[k];
    const std::string_view w = Text(k);
    if (Is(w, "cuda") && t_[k + 1].type == kLParen) {
      const size_t close = Close(k + 1);
      Add(kPyCudaMethod, RefKind::kCall, tok.start, tok.end,
          close < n_ ? static_cast<int64_t>(t_[close].end) : int64_t{-1});
    } else if (Is(w, "is_cuda") && t_[k + 1].type != kLParen) {
      Add(kPyIsCuda, RefKind::kReference, tok.start, tok.end, -1);
    }
  }

  // One `TARGET = VALUE` statement from token k; returns the token after the
  // value (a newline) or 0, and the target's text and the value.
  size_t Assignment(size_t k, std::string_view* target, Value* v) const {
    if (t_[k].type != kName) return 0;
    size_t j = k;
    while (t_[j + 1].type == kDot && t_[j + 2].type == kName) j += 2;
    if (t_[j + 1].type != kAssign) return 0;
    *target = src_.substr(t_[k].start, t_[j].end - t_[k].start);
    *v = ValueAt(j + 2);
    if (v->text == DeviceText::kOther || v->text == DeviceText::kNccl) return 0;
    if (t_[v->next].type != kNewline) return 0;
    return v->next;
  }

  // The body of `if`/`else` whose ':' is at token c: one assignment, on the
  // same line or indented on the next. Returns the newline after it or 0.
  size_t Body(size_t c, int indent, std::string_view* target, Value* v) const {
    size_t j = c + 1;
    if (t_[j].type == kNewline) {
      ++j;
      if (!t_[j].first || t_[j].indent <= indent) return 0;
    }
    return Assignment(j, target, v);
  }

  // if COND:\n  T = CUDA\nelse:\n  T = CPU  (either order), COND asking torch.
  void Statement(size_t k) {
    const int indent = t_[k].indent;
    size_t colon = k + 1;
    for (; colon < n_; ++colon) {
      const uint8_t type = t_[colon].type;
      if (IsOpen(type)) {
        colon = Close(colon);
        continue;
      }
      if (type == kColon) break;
      if (type == kNewline || type == kSemi) return;
    }
    if (colon >= n_ || !AvailabilityIn(k + 1, colon)) return;
    std::string_view t1, t2;
    Value v1, v2;
    const size_t e1 = Body(colon, indent, &t1, &v1);
    if (e1 == 0) return;
    const size_t el = e1 + 1;
    if (!(t_[el].first && t_[el].indent == indent && NameIs(el, "else") &&
          t_[el + 1].type == kColon)) {
      return;
    }
    const size_t e2 = Body(el + 1, indent, &t2, &v2);
    if (e2 == 0 || t1 != t2) return;
    if (!((IsCudaText(v1.text) && v2.text == DeviceText::kCpu) ||
          (v1.text == DeviceText::kCpu && IsCudaText(v2.text)))) {
      return;
    }
    const Tok& after = t_[e2 + 1];
    if (after.type != kEnd && !(after.first && after.indent <= indent)) return;
    Add(kPyAvailabilityStatement, RefKind::kIdiom, t_[k].start, v2.end, -1);
    Cover(t_[k].start, v2.end);
  }

  const RuleSet& rules_;
  std::string_view src_;
  const TokenBuffer<Tok>& t_;
  const std::vector<ResolvedChain>& chains_;
  LexOutput* out_;
  size_t n_ = 0;
  std::vector<OpenBracket>& open_;  // see ContextOf
  size_t chain_ = 0;  // the next chain NextDeviceChain looks at
  bool availability_ = false;  // some chain asks torch whether it has a device
  std::vector<uint32_t>& availability_first_;  // the first tokens of those chains
  // Note [Idiom scans]: the last scan of Idiom for its `else`: the innermost
  // bracket (kNoChain: none) and the depth it ran at, where it started and
  // the token it stopped at (an `else` or not). Every token between `from`
  // and `stop` at that depth leads the scan to `stop`.
  struct IdiomScan {
    bool valid;
    size_t bracket, depth, from, stop;
    bool is_else;
  };
  IdiomScan scan_{false, 0, 0, 0, 0, false};
  uint32_t covered_start_ = 0, covered_end_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------
// Note [Needles as words]: a line's needle marked it where it held the
// bytes anywhere, and real GPU code is full of names that hold a needle
// inside a word (`cuda_graph`, `get_cuda_rng_tracker`, `nccl_ub`: in
// Megatron-LM 9,175 of its Python lines hold a needle, 4,846 as a whole
// word). None of those is a finding's: a spelling's component is a whole
// identifier in the chain that matches it (the chain is built of the file's
// identifier tokens), a literal rule's word (`cuda`, `is_cuda`, `nccl`) is
// a whole identifier or stands alone in its string ("cuda", "cuda:0",
// f"cuda:{i}", "torch.cuda.set_device": a quote, ':' or '.' beside it), and
// an alias is searched for as a word already. So the first search asks for
// the rules' words as words (RuleSet::FastPathWords, deduplicated, not
// pruned by containment: `cuda` as a word does not cover `is_cuda`), and
// only a rule's own needles (FastPathPlain) anywhere.

// Note [Fast path]: most lines of a file cannot hold a finding, and the
// scanner need not lex them. A finding's logical line holds one of the
// fast-path needles of the rules (RuleSet::FastPathNeedles: a component of
// the spelling it matches, or its detector's string), or the first name of
// a chain bound to a target (an alias: `from torch.cuda import
// current_device as cd` makes `cd` one), or the keyword `import`. What a line
// that holds none of them does to the resolver is nothing, with two
// exceptions: a `def`/`class` pushes a scope in which a later import binds,
// and a line of smaller indent pops it. So the fast path
//   1. runs a skeleton pass over the file (SkeletonPass): it finds the
//      logical lines (a vectorised scan, 64 bytes a step classified by
//      nibble, for the bytes that can end one or open a string, bracket,
//      comment or continuation; one loop walks a block's special bytes from
//      its mask, the brackets and newlines by a table and the others out of
//      line, Note [Skeleton loop]; each string is ended as the full lexer's
//      own code ends it, an f-string by that code unless its fields are
//      plain, Note [Plain f-strings]),
//      with their indents (their nearest enclosing line, the previous one of
//      a smaller indent, is found on demand by Parents, for the lines that
//      enclose a binding), and gives up on anything the full lexer would
//      fail on or that it does not model (a byte that is no Python, a
//      mismatched bracket, a string prefix after a number);
//   2. marks the lines that hold a needle (NeedleSearch, one search per
//      needle set, a hit skipping the rest of its line; a hit in dead text,
//      which the skeleton records as it passes it, marks nothing: a comment,
//      or a string literal no rule reads, one that is triple-quoted, bytes,
//      or has a byte in its body that no device string ("cuda:0") and no
//      mock target ("torch.cuda.x") holds; an f-string is never dead, its
//      fields are code, and a line whose needles are all in dead text has
//      the tokens of a line without any), then lexes, resolves
//      and runs the literal rules over those lines alone, each run of lines
//      lexed by the full lexer, with a marker token where lines were left
//      out (a line start whose indent is the smallest of those left out, so
//      scopes pop as they would, and no detector sees two lines as
//      adjacent that are not);
//   3. adds what that pass shows must be lexed too: the lines holding a name
//      it saw bound, the enclosing lines of each line where a binding
//      changed (the `def` whose scope holds it), and the four lines after
//      an `if` that asks torch for a device (the statement form of the
//      availability idiom spans them); and repeats until nothing is added.
// The findings are then those of the full path (tests/cpp/scan_test.cc and
// tests/python/scan/test_scan_fast_path.py check it on generated trees, the
// fixtures and adversarial inputs). A file the skeleton gives up on, or
// whose rules allow no needle list, takes the full path.
//
// Its costs, on the Python files of the 20 MB generated GPU tree
// (corpus-20mb-1-python: 14.0 MB, 234k lines; callgrind over scan_native
// --jobs 1, the whole process): 8.12 instructions a byte in all (114.0M),
// of which the skeleton 2.26 (its loop with the classification 1.75, Note
// [Skeleton loop]; the rest the strings and comments it passes), the needle
// searches 1.04 (a match in dead text sends them on from the end of its
// span; dead text is 8% of the bytes, 27k spans, none of 256 bytes or
// more, so searching only the live text would not pay), the resolver 1.30,
// the lexer 1.21 and the literal rules 0.49 over the lines that are lexed
// (the import lines are lexed and resolved once, by the first search, Note
// [Import lines lexed once]), and the rest 1.83: the bookkeeping of the
// marked lines (the first search's loop, LexMarked, the walks to enclosing
// lines), the driver's checks and line numbers (0.13 counting newlines),
// the walk and start-up (the searches' builds 0.01 since Note [Searches
// kept by their names]). The skeleton is the largest single part, but
// even at nothing it would leave 5.9; the rest is spread over work per
// line, per marked line and per token, with no one hot spot (docs/scan.md,
// "Fast path costs": figures from an earlier, larger count).

namespace {

// A line on Parents' stack of enclosing lines: its indent and index.
struct OpenLine {
  uint16_t indent;
  int32_t index;
};

uint16_t IndentBetween(const char* s, size_t line_start, size_t at) {
  unsigned col = 0;
  for (size_t i = line_start; i < at; ++i) {
    const char c = s[i];
    if (c == '\t') col = (col / 8 + 1) * 8;
    else if (c == '\f') col = 0;
    else ++col;
  }
  return static_cast<uint16_t>(col > 0xFFFF ? 0xFFFF : col);
}

// The bytes the skeleton stops at in code: control bytes (newlines among
// them), ! " # $ % & ' ( ), ?, [ \ ], `, { | } ~ and DEL. Classified by
// nibble (NibbleClass): kSpecial.lo[b & 15] & kSpecial.hi[b >> 4] is not 0.
// (The brackets ( ) [ ] { } have bits 0x40 and 0x80 of their own, which no
// classifier reads apart: the skeleton's loop tells the special bytes apart
// by kStopCode.)

constexpr NibbleClass MakeSpecialTables() {
  NibbleClass t{};
  t.hi[0] = t.hi[1] = 1;
  t.hi[2] = 2 | 0x40;
  t.hi[3] = 4;
  t.hi[5] = 8 | 0x80;
  t.hi[6] = 16;
  t.hi[7] = 32 | 0x80;
  for (int l = 0; l < 16; ++l) {
    uint8_t m = 1;
    if (l >= 1 && l <= 9) m |= 2;
    if (l == 15) m |= 4;
    if (l >= 11 && l <= 13) m |= 8;
    if (l == 0) m |= 16;
    if (l >= 11) m |= 32;
    if (l == 8 || l == 9) m |= 0x40;    // ( )
    if (l == 11 || l == 13) m |= 0x80;  // [ ] { }
    t.lo[l] = m;
  }
  t.Finish();
  return t;
}

constexpr NibbleClass kSpecial = MakeSpecialTables();

// What the skeleton's loop does at a special byte (Note [Skeleton loop]): an
// opening bracket's code is 1 '(', 2 '[', 3 '{', a closing one's that with
// 0x80 added, a '\n''s kNewlineCode; any other special byte's is 0 (the rare
// stops: SkeletonStop, or the end of the input at the padding's NUL).
constexpr uint8_t kNewlineCode = 0x40;

struct StopCodes {
  uint8_t code[256];
};

constexpr StopCodes MakeStopCodes() {
  StopCodes t{};
  t.code[static_cast<int>('(')] = 1;
  t.code[static_cast<int>('[')] = 2;
  t.code[static_cast<int>('{')] = 3;
  t.code[static_cast<int>(')')] = 0x81;
  t.code[static_cast<int>(']')] = 0x82;
  t.code[static_cast<int>('}')] = 0x83;
  t.code[static_cast<int>('\n')] = kNewlineCode;
  return t;
}

constexpr StopCodes kStopCode = MakeStopCodes();

// The bytes that start a token where a line's spaces end: any but a space,
// tab, form feed, newline or other control byte, '#' and '\\' (the padding's
// NUL among the control bytes, so a line start at n is not one).
struct StartsToken {
  bool yes[256];
};

constexpr StartsToken MakeStartsToken() {
  StartsToken t{};
  for (int c = 0x21; c < 256; ++c) t.yes[c] = c != '#' && c != '\\';
  return t;
}

constexpr StartsToken kStartsToken = MakeStartsToken();

// The special bytes of s[p, p + 64) (bit k: s[p + k]). Reads s[p, p + 64),
// which the caller keeps inside the padding; bytes at or past n are special
// (the padding's NUL is, and the caller stops at n).
uint64_t ClassifyScalar(const unsigned char* s, size_t p, size_t n) {
  uint64_t m = 0;
  for (size_t k = 0; k < 64; ++k) {
    if (p + k >= n) {
      m |= ~uint64_t{0} << k;
      break;
    }
    m |= static_cast<uint64_t>(kSpecial.byte[s[p + k]] != 0) << k;
  }
  return m;
}

#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
// kSpecial's tables and masks as the AVX2 clone of the skeleton's loop keeps
// them, built once a file (Note [Skeleton loop]): ClassifyAvx2 built them at
// every block (ten instructions of the 45), since the loop's rare calls
// clobber the vector registers and GCC did not hoist them.
//
// The loop's byte tables (kStopCode, kStartsToken) are copied there too: in
// the loop's frame, a lookup addresses them from the stack pointer, where
// GCC, short of registers, made the address of a global table again at
// each special byte (a `lea` a byte: 0.8M instructions on the Python files
// of the 20 MB GPU tree).
struct SpecialTablesAvx2 {
  __m256i lo, hi, nib;
  __m256i top;     // 0x7F in every byte (ClassifyWith)
  __m128i spaces;  // LeadingSpaces' (GCC made it at each line: 3 instructions)
  StopCodes stop;
  StartsToken starts;
};

__attribute__((target("avx2"))) inline SpecialTablesAvx2 MakeSpecialTablesAvx2() {
  return SpecialTablesAvx2{
      _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kSpecial.lo))),
      _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kSpecial.hi))),
      _mm256_set1_epi8(0x0F), _mm256_set1_epi8(0x7F), _mm_set1_epi8(' '), kStopCode,
      kStartsToken};
}

constexpr bool NoHighByteIsSpecial() {
  for (int h = 8; h < 16; ++h) {
    if (kSpecial.hi[h] != 0) return false;
  }
  return true;
}

// The special bytes of s[0, 64) (ClassifyScalar's), from the kept tables.
// The low nibble's lookup takes the byte as it is: a byte with its top bit
// set looks up 0 (vpshufb), as its high nibble does (no byte of 0x80 or
// more is special), so the mask that clears the top bit is not needed.
__attribute__((target("avx2"))) inline uint64_t ClassifyWith(
    const SpecialTablesAvx2& t, const unsigned char* s) {
  static_assert(NoHighByteIsSpecial(), "the low nibble's lookup relies on it");
  // The nibble mask and 0x7F from memory, whose contents the caller hid
  // from GCC (SkeletonLoopAvx2): GCC built the constants again at each
  // block, three instructions each, where a load folds into the AND or ADD.
  // (Hidden here, by an asm on a copy, the mask was copied on the stack at
  // each block.)
  const __m256i nib = t.nib;
  const __m256i top = t.top;
  uint64_t special = 0;
  for (int h = 0; h < 2; ++h) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32 * h));
    const __m256i m = _mm256_and_si256(
        _mm256_shuffle_epi8(t.lo, v),
        _mm256_shuffle_epi8(t.hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib)));
    // A class byte not 0 has its top bit set once 0x7F is added with
    // saturation, which movemask reads: no compare with zero and
    // complement of the mask.
    special |= static_cast<uint64_t>(static_cast<uint32_t>(
                   _mm256_movemask_epi8(_mm256_adds_epu8(m, top))))
               << (32 * h);
  }
  return special;
}
#endif

bool HaveAvx2() {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

// How deep the skeleton's stack of open brackets goes, as the full lexer's
// limit allows the fast path.
constexpr size_t kMaxBrackets = 200;

// Past the newline at p (\n, \r\n or \r).
size_t SkipNl(const char* s, size_t p, size_t n) {
  if (s[p] == '\r' && p + 1 < n && s[p + 1] == '\n') return p + 2;
  return p + 1;
}

// The end of the comment at p: its newline, or n.
size_t CommentEnd(const char* s, size_t p, size_t n, bool has_cr) {
  if (!has_cr) {
    const void* nl = std::memchr(s + p, '\n', n - p);
    return nl ? static_cast<size_t>(static_cast<const char*>(nl) - s) : n;
  }
  while (p < n && s[p] != '\n' && s[p] != '\r') ++p;
  return p;
}

// The first byte from q that stops a run of a string literal's text: its
// quote, a backslash, '\n', '\r' or the padding's NUL, and with kBraces an
// f-string's '{' and '}' (`stop`: the same bytes as a table, for a build
// without SSE2). 16 bytes a step: s[q, q + 16) is in the input or its
// padding while q <= n, and the padding's NUL ends the search there.
template <bool kBraces>
inline size_t StringStop(const char* s, size_t q, char quote, const bool* stop) {
#if defined(__SSE2__)
  (void)stop;
  const __m128i vq = _mm_set1_epi8(quote), bs = _mm_set1_epi8('\\');
  const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
  const __m128i nul = _mm_setzero_si128();
  for (;;) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + q));
    __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, vq), _mm_cmpeq_epi8(v, bs)),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)),
                     _mm_cmpeq_epi8(v, nul)));
    if (kBraces) {
      hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('{')),
                                           _mm_cmpeq_epi8(v, _mm_set1_epi8('}'))));
    }
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (m != 0) return q + static_cast<size_t>(__builtin_ctz(m));
    q += 16;
  }
#else
  (void)quote;
  while (!stop[static_cast<unsigned char>(s[q])]) ++q;
  return q;
#endif
}

// Past the closing quote of the string literal (not an f-string) whose
// body starts at q, quoted by `quote`: where Lexer::StringBody ends it; 0
// where the lexer fails on it (unterminated). 16 bytes a step with SSE2;
// the padding's NUL stops the search at n.
// Note [Docstrings in the skeleton]: real modules are a seventh docstrings
// (Megatron-LM's Python files: 14% of their bytes in triple-quoted strings,
// their lines short), and a newline stopped the scan of one at every line,
// where only its quote and a backslash can end or escape anything: a
// triple-quoted string's text is passed 32 bytes a step (AVX2) to its
// quote, a backslash or the padding's NUL alone.
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
// The first quote, backslash or NUL from q: 32 bytes a step while they lie
// in the input and its padding (s[q, q + 32) while q + 16 <= n), then 16.
__attribute__((target("avx2"))) size_t TripleStop(const char* s, size_t q, size_t n, char quote) {
  const __m256i vq = _mm256_set1_epi8(quote), bs = _mm256_set1_epi8('\\');
  const __m256i nul = _mm256_setzero_si256();
  for (; q + 16 <= n; q += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + q));
    const __m256i hit = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, vq),
                                                        _mm256_cmpeq_epi8(v, bs)),
                                        _mm256_cmpeq_epi8(v, nul));
    const unsigned m = static_cast<unsigned>(_mm256_movemask_epi8(hit));
    if (m != 0) return q + static_cast<size_t>(__builtin_ctz(m));
  }
  const __m128i vq1 = _mm_set1_epi8(quote), bs1 = _mm_set1_epi8('\\');
  for (;; q += 16) {  // (q <= n: the padding's NUL ends it)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + q));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, vq1), _mm_cmpeq_epi8(v, bs1)),
                                     _mm_cmpeq_epi8(v, _mm_setzero_si128()));
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (m != 0) return q + static_cast<size_t>(__builtin_ctz(m));
  }
}
#endif

size_t PlainStringEnd(const char* s, size_t n, size_t q, char quote, bool triple) {
  const bool* stop = kStringStop[quote == '"' ? 1 : 0];
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
  if (triple && HaveAvx2()) {
    // (s[q, q + 32) is in the input or its padding while q <= n: the
    // padding's NUL ends the search at n.)
    for (;;) {
      q = TripleStop(s, q, n, quote);
      if (q >= n) return 0;
      if (s[q] == quote) {
        if (q + 2 < n && s[q + 1] == quote && s[q + 2] == quote) return q + 3;
        ++q;
      } else {  // a backslash: it escapes the next byte, a newline (\r\n) included
        if (q + 1 >= n) return 0;
        q += s[q + 1] == '\r' && q + 2 < n && s[q + 2] == '\n' ? 3 : 2;
      }
    }
  }
#endif
  for (;;) {
    q = StringStop<false>(s, q, quote, stop);
    if (q >= n) return 0;
    const char c = s[q];
    if (c == quote) {
      if (!triple) return q + 1;
      if (q + 2 < n && s[q + 1] == quote && s[q + 2] == quote) return q + 3;
      ++q;
    } else if (c == '\n' || c == '\r') {
      if (!triple) return 0;
      q += c == '\r' && q + 1 < n && s[q + 1] == '\n' ? 2 : 1;
    } else {  // a backslash: it escapes the next byte, a newline (\r\n) included
      if (q + 1 >= n) return 0;
      q += s[q + 1] == '\r' && q + 2 < n && s[q + 2] == '\n' ? 3 : 2;
    }
  }
}

// Note [Plain f-strings]: the skeleton must end an f-string where the full
// lexer does and give up where it fails, and the lexer's own code (String,
// Field, LexCode in a field) cost about 840 instructions an f-string on the
// Python files of the 20 MB GPU tree (4.9k of them, 4.1M in all), most of it
// emitting the fields' tokens into scratch. Most f-strings there are one
// quote's, with fields of names, attributes and numbers and an optional
// conversion and format spec (f"loss {x.y:.3f} on {dev}"). On such a body
// the lexer cannot fail and its end is found by a scan: a field's
// expression of ASCII letters, digits, '_', '.' and spaces is lexed by
// LexCode to the first byte outside them, where it returns at '}', ':' or
// '!' (not ":=", "!="; there are no brackets to nest); then a conversion of
// identifier bytes and spaces or tabs, a format spec of any byte but '{',
// '}', the quote, '\\' and newlines, and the '}'. PlainFStringEnd follows
// exactly that and hands anything else (a backslash, a newline, a nested
// field, a string, brackets or operators in a field, '=', a NUL, a triple
// quote) back to the lexer's code, which the skeleton then runs as before.

// The bytes of a plain field's expression: ASCII letters, digits, '_', '.'
// and ' '.
struct FieldExprBytes {
  bool yes[256];
};

constexpr FieldExprBytes MakeFieldExprBytes() {
  FieldExprBytes t{};
  for (int c = 0; c < 128; ++c) {
    t.yes[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == ' ';
  }
  return t;
}

constexpr FieldExprBytes kFieldExpr = MakeFieldExprBytes();

// Past the closing quote of the f-string of one quote (not triple) whose
// body starts at q, where its body is plain (Note [Plain f-strings]); 0
// where the lexer's code must end it. The padding's NUL stops each scan.
size_t PlainFStringEnd(const char* s, size_t q, char quote) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  const bool* stop = kStringStop[(quote == '"' ? 1 : 0) + 2];
  for (;;) {
    q = StringStop<true>(s, q, quote, stop);  // the literal text
    char c = s[q];
    if (c == quote) return q + 1;
    if (c != '{' && c != '}') return 0;  // a backslash, a newline, a NUL
    if (s[q + 1] == c) {  // {{ or }}
      q += 2;
      continue;
    }
    ++q;
    if (c == '}') continue;  // a single '}': the lexer passes it
    while (kFieldExpr.yes[u[q]]) ++q;  // the field's expression
    c = s[q];
    if (c == '!') {  // a conversion
      if (s[q + 1] == '=') return 0;
      ++q;
      while (u[q] < 0x80 && IsIdentChar(u[q])) ++q;
      while (s[q] == ' ' || s[q] == '\t') ++q;
      c = s[q];
    }
    if (c == ':') {  // a format spec
      if (s[q + 1] == '=') return 0;
      ++q;
      while (!stop[u[q]]) ++q;
      c = s[q];
    }
    if (c != '}') return 0;
    ++q;
  }
}

// Whether the string literal src[start, after) (its opening quote at
// `quote`, not an f-string) is one no rule reads: triple-quoted, bytes, or
// with a byte in its body that no device string ("cuda:0") or mock target
// ("torch.cuda.x") holds (Note [Fast path], dead text).
// The bytes a device string or a mock target may hold: ASCII identifier
// bytes, '.' and ':' (one table lookup a byte, where the test of each
// cost 5 instructions).
struct LiveStringBytes {
  bool yes[256];
};

constexpr LiveStringBytes MakeLiveStringBytes() {
  LiveStringBytes t{};
  for (int c = 0; c < 128; ++c) {
    t.yes[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == ':';
  }
  return t;
}

constexpr LiveStringBytes kLiveStringBytes = MakeLiveStringBytes();

bool DeadString(const char* s, size_t quote, size_t after, bool triple, bool bytes) {
  if (triple || bytes) return true;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  for (size_t k = quote + 1; k + 1 < after; ++k) {
    if (!kLiveStringBytes.yes[u[k]]) return true;
  }
  return false;
}

// The live string bytes of kLiveStringBytes by nibble (NibbleClass): '.'
// (bit 1), digits and ':' (2), letters (4: 0x41-0x4F and 0x61-0x6F; 8:
// 0x50-0x5A and 0x70-0x7A) and '_' (16).
constexpr NibbleClass MakeLiveTables() {
  NibbleClass t{};
  t.hi[2] = 1;
  t.hi[3] = 2;
  t.hi[4] = t.hi[6] = 4;
  t.hi[5] = 8 | 16;
  t.hi[7] = 8;
  for (int l = 0; l < 16; ++l) {
    uint8_t m = 0;
    if (l == 14) m |= 1;
    if (l <= 10) m |= 2 | 8;
    if (l >= 1) m |= 4;
    if (l == 15) m |= 16;
    t.lo[l] = m;
  }
  t.Finish();
  return t;
}

constexpr NibbleClass kLiveTables = MakeLiveTables();

constexpr bool LiveTablesAreLiveStringBytes() {
  for (int b = 0; b < 256; ++b) {
    if (kLiveTables.byte[b] != kLiveStringBytes.yes[b]) return false;
  }
  return true;
}
static_assert(LiveTablesAreLiveStringBytes(), "kLiveTables must classify as kLiveStringBytes");

// Whether a byte of u[q, e) is no live string byte (DeadString's test of a
// plain string's body), 16 bytes a step with AVX2's tables: u[q, q + 16) is
// in the input or its padding while q < e <= n.
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
__attribute__((target("avx2"))) inline bool DeadBodyAvx2(const unsigned char* u, size_t q,
                                                         size_t e) {
  const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(kLiveTables.lo));
  const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(kLiveTables.hi));
  const __m128i nib = _mm_set1_epi8(0x0F);
  for (; q < e; q += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u + q));
    // (A byte from 0x80 looks up 0 in `hi`: its high nibble is 8 or more.)
    const __m128i live =
        _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(v, nib)),
                      _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(v, 4), nib)));
    uint32_t dead =
        static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(live, _mm_setzero_si128())));
    if (e - q < 16) dead &= (1u << (e - q)) - 1;
    if (dead != 0) return true;
  }
  return false;
}
#endif

template <bool kAvx2>
__attribute__((always_inline)) inline bool DeadBody(const unsigned char* u, size_t q, size_t e) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
  if constexpr (kAvx2) return DeadBodyAvx2(u, q, e);
#endif
  for (; q < e; ++q) {
    if (!kLiveStringBytes.yes[u[q]]) return true;
  }
  return false;
}

// The skeleton's dead text (Note [Fast path]): [start, end) pairs in order,
// written through a raw pointer (the skeleton's loop pushes them), the
// vector grown by doubling and cut to what was written at the end.
struct DeadSpans {
  std::vector<uint32_t>* vec;
  uint32_t* at;
  uint32_t* end;
  explicit DeadSpans(std::vector<uint32_t>* v) : vec(v) {
    if (v->size() < 64) v->resize(64);
    at = v->data();
    end = at + v->size();
  }
  void Push(size_t a, size_t b) {
    if (at == end) Grow();
    at[0] = static_cast<uint32_t>(a);
    at[1] = static_cast<uint32_t>(b);
    at += 2;
  }
  __attribute__((noinline)) void Grow() {
    const size_t used = static_cast<size_t>(at - vec->data());
    vec->resize(2 * vec->size());
    at = vec->data() + used;
    end = vec->data() + vec->size();
  }
  void Finish() { vec->resize(static_cast<size_t>(at - vec->data())); }
};

// The skeleton's state that its rare stops (SkeletonStop) read and write.
struct SkeletonState {
  const char* s;
  size_t n, begin;
  bool has_cr;
  Lexer* strings;
  TokenBuffer<Tok>* scratch;
  LexOutput* scratch_out;
  DeadSpans* dead;
};

// The skeleton at a special byte in code other than a bracket or a '\n' (a
// string, a comment, a continuation, '\r', ...) at p: returns the position
// past what it holds, or 0 where the fast path must not be taken (returned,
// not written through a pointer, so that the skeleton's loop keeps p in a
// register). Out of line, so that the loop keeps its state in registers.
__attribute__((noinline)) size_t SkeletonStop(const SkeletonState& st, size_t p) {
  const char* s = st.s;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  const size_t n = st.n, begin = st.begin;
  const char c = s[p];
  switch (c) {
    case '\n':
    case '\r':
      p = SkipNl(s, p, n);
      break;
    case '#': {
      const size_t hash = p;
      p = CommentEnd(s, p, n, st.has_cr);
      st.dead->Push(hash, p);
      break;
    }
    case '\\':
      if (s[p + 1] != '\n' && s[p + 1] != '\r') return 0;
      p = SkipNl(s, p + 1, n);
      break;
    case '"':
    case '\'': {
      size_t id = p;
      while (id > begin && IsIdentChar(u[id - 1])) --id;
      bool raw = false, fmt = false, bytes = false;
      size_t start = p;
      if (p - id >= 1 && p - id <= 2 && IsStringPrefix(s + id, p - id, &raw, &fmt, &bytes)) {
        // A prefix, unless the letters end a number (1.f"", 1e+f""):
        // the full lexer's business.
        if (id > begin && (s[id - 1] == '.' || s[id - 1] == '+' || s[id - 1] == '-')) {
          return 0;
        }
        start = id;
      } else {
        raw = fmt = false;
      }
      size_t after;
      const bool triple = p + 2 < n && s[p + 1] == c && s[p + 2] == c;
      if (fmt && !triple && (after = PlainFStringEnd(s, p + 1, c)) != 0) {
        // a plain f-string: ended as the lexer would (Note [Plain f-strings])
      } else if (fmt) {  // the lexer's own code, for the fields
        st.scratch->clear();
        if (!st.strings->LexStringAt(start, p, raw, fmt, &after)) return 0;
        if (!st.scratch_out->suppressions.empty()) st.scratch_out->suppressions.clear();
        if (!st.scratch_out->noqa.empty()) st.scratch_out->noqa.clear();
      } else {
        after = PlainStringEnd(s, n, p + (triple ? 3 : 1), c, triple);
        if (after == 0) return 0;  // unterminated: the full path reports it
      }
      if (!fmt && DeadString(s, p, after, triple, bytes)) st.dead->Push(start, after);
      p = after;
      break;
    }
    case '!':
      if (s[p + 1] != '=') return 0;
      p += 2;
      break;
    case '\t':
    case '\f':
    case '%':
    case '&':
    case '|':
    case '~':
      ++p;
      break;
    default:
      return 0;  // no Python: the full lexer reports it
  }
  return p;
}

// A line's start where its spaces are not followed by a token (a tab or form
// feed, a comment, a continuation, a blank line): the position past what it
// holds, and its first token and indent (kNoToken and 0xFFFF for none); fail
// where the fast path must not be taken. Out of line and returned by value,
// so that the skeleton's loop keeps its state in registers.
struct LineStart {
  size_t p;
  uint32_t first;
  uint16_t indent;
  bool fail;
};

__attribute__((noinline)) LineStart LineStartRare(const SkeletonState& st, size_t line_start,
                                                  size_t p) {
  const char* s = st.s;
  const size_t n = st.n;
  for (;;) {  // at the start of a physical line, at the first non-space
    bool plain = true;  // spaces only: the indent is their count
    if (s[p] == '\t' || s[p] == '\f') {
      while (s[p] == ' ' || s[p] == '\t' || s[p] == '\f') plain &= s[p++] == ' ';
    }
    const char c = s[p];
    if (c == '#') {  // a comment line
      const size_t hash = p;
      p = CommentEnd(s, p, n, st.has_cr);
      st.dead->Push(hash, p);
      if (p < n) p = SkipNl(s, p, n);
    } else if (c == '\\') {
      if (s[p + 1] != '\n' && s[p + 1] != '\r') return LineStart{0, kNoToken, 0xFFFF, true};
      p = SkipNl(s, p + 1, n);
      line_start = p;
      while (s[p] == ' ') ++p;
      if (kStartsToken.yes[static_cast<unsigned char>(s[p])]) {
        return LineStart{p, static_cast<uint32_t>(p),
                         static_cast<uint16_t>(std::min<size_t>(p - line_start, 0xFFFF)), false};
      }
      continue;
    } else if (p < n && c != '\n' && c != '\r') {
      const uint16_t indent = plain && p - line_start < 0xFFFF
                                  ? static_cast<uint16_t>(p - line_start)
                                  : IndentBetween(s, line_start, p);
      return LineStart{p, static_cast<uint32_t>(p), indent, false};
    } else if (p < n) {  // a blank line
      p = SkipNl(s, p, n);
    }
    return LineStart{p, kNoToken, 0xFFFF, false};
  }
}

// The index of the lowest set bit of bits (not 0). The AVX2 clone's is one
// tzcnt: GCC's, tuned for any x86, clears its destination first (an `xor`
// at each special byte, against a false dependency of some CPUs).
template <bool kAvx2>
__attribute__((always_inline)) inline size_t LowestBit(uint64_t bits) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
  if constexpr (kAvx2) {
    uint64_t index;
    __asm__("tzcnt %1, %0" : "=r"(index) : "r"(bits) : "cc");
    return static_cast<size_t>(index);
  }
#endif
  return static_cast<unsigned>(__builtin_ctzll(bits));
}

// How many of s[p, p + 16) are spaces before the first byte that is not
// one (16 where all are): s[p, p + 16) is readable while p <= n, and the
// padding's NUL is no space.
template <bool kAvx2, class Tables>
__attribute__((always_inline)) inline size_t LeadingSpaces(const char* s, size_t p,
                                                           const Tables& tables) {
#if defined(__SSE2__)
  __m128i spaces;
  if constexpr (kAvx2) {
    spaces = tables.spaces;
  } else {
    (void)tables;
    spaces = _mm_set1_epi8(' ');
  }
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + p));
  // Bits 16 and up set: the index is 16 where all 16 bytes are spaces.
  const uint64_t other = ~static_cast<uint64_t>(
      static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, spaces))));
  return LowestBit<kAvx2>(other);
#else
  (void)tables;
  size_t k = 0;
  while (k < 16 && s[p + k] == ' ') ++k;
  return k;
#endif
}

// The first byte at or after p that is not a space, 16 bytes at a time
// (the padding's NUL stops it). An indent of 8 to 15 spaces, common in
// Python, takes one step, where words of 8 bytes took two.
template <bool kAvx2, class Tables>
__attribute__((always_inline)) inline size_t FirstNonSpace(const char* s, size_t p,
                                                           const Tables& tables) {
  for (;;) {
    const size_t k = LeadingSpaces<kAvx2>(s, p, tables);
    if (k < 16) return p + k;
    p += 16;
  }
}

// The loop's byte tables: the AVX2 clone's copies (SpecialTablesAvx2).
template <bool kAvx2, class Tables>
__attribute__((always_inline)) inline const StopCodes& StopCodesOf(const Tables& tables) {
  if constexpr (kAvx2) {
    return tables.stop;
  } else {
    (void)tables;
    return kStopCode;
  }
}

template <bool kAvx2, class Tables>
__attribute__((always_inline)) inline const StartsToken& StartsTokenOf(const Tables& tables) {
  if constexpr (kAvx2) {
    return tables.starts;
  } else {
    (void)tables;
    return kStartsToken;
  }
}

// Note [Comments and strings in the skeleton's loop]: on real trees a
// seventh of a module's bytes are comments and strings of one quote
// (Megatron-LM's Python files: 50,612 rare stops, 45,882 of them strings
// and 2,539 comments after code, and 22,438 comment lines), and each was a
// call out of the loop (SkeletonStop, LineStartRare: registers saved and
// restored, a switch, an SSE2 scan of the string set up afresh, its body
// tested a byte at a time for DeadString, memchr for a comment's newline;
// about 220 instructions a string, 120 a comment line). The loop now ends
// them itself from its block's mask (NextSpecial): a comment at its first
// '\n' or '\r' (which the loop then takes as it takes any newline), a
// string of one quote without a prefix at its quote, a backslash passing
// the byte after it (two for "\r\n") and a newline or the input's end
// failing it, as PlainStringEnd does; its body is dead text where a special
// byte lay in it (none is a live string byte) or DeadBody finds one no
// device string holds (16 bytes a step). Prefixed strings (f-strings,
// r'', b''), triple quotes, continuations and the other rare bytes still
// take SkeletonStop. Megatron-LM: 132.91M to 129.01M instructions (the
// skeleton 33.8M to 29.8M), DeepSpeed 89.37M to 87.71M.

// The next special byte of the skeleton's loop from its block's mask
// (`bits`, the special bytes of s[base, base + 64) not passed yet), the
// blocks after classified as needed: its offset, or n or more at the end of
// the input (the scalar classifier marks the bytes from n).
template <bool kAvx2, class Tables>
__attribute__((always_inline)) inline size_t NextSpecial(const unsigned char* u, size_t n,
                                                         size_t& base, uint64_t& bits,
                                                         const Tables& tables) {
  while (bits == 0) {
    const size_t q = base + 64;
    if constexpr (kAvx2) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
      if (q + 48 <= n) {  // (as in the loop: s[q, q + 64) in the input and its padding)
        base = q;
        bits = ClassifyWith(tables, u + q);
        continue;
      }
#endif
    } else {
      (void)tables;
    }
    if (q >= n) return n;
    base = q;
    bits = ClassifyScalar(u, q, n);
  }
  const size_t at = base + LowestBit<kAvx2>(bits);
  bits &= bits - 1;
  return at;
}

// The special bytes of the loop's block from p on (those before passed):
// past the block, the next NextSpecial classifies the block at p.
__attribute__((always_inline)) inline void PassTo(size_t p, size_t& base, uint64_t& bits) {
  if (p - base >= 64) {
    base = p - 64;
    bits = 0;
  } else {
    bits &= ~uint64_t{0} << (p - base);
  }
}

// The skeleton's loop (step 1 of Note [Fast path]), for one classifier:
// kAvx2 classifies with ClassifyWith and the tables its AVX2 clone built.
//
// Note [Skeleton loop]: the loop keeps all of its state in locals (the
// classified block's base and the special bytes of it not passed yet, the
// bracket stack's top, the regions' cursor), not in a cursor object and a
// stack struct, so that GCC keeps them in registers; its AVX2 clone inlines
// the classification, from tables built once a file (a call there clobbered
// the vector and caller-saved registers, and the tables were built again at
// every block). One loop walks the special bytes of a block in order from
// its one mask, each looked up in kStopCode: an opening bracket is pushed, a
// closing one matched, a newline at depth 0 ends the logical line, and
// where the next line starts as most do (spaces, then a token or a blank
// line's '\n') the loop writes the line's end and begins the next region
// without leaving; the block after is classified when the mask is empty.
// What would spill the state is kept out of line: the rare stops in code
// (SkeletonStop: prefixed and triple-quoted strings, continuations, '\r',
// tabs, operators that are special; comments and the other strings since
// Note [Comments and strings in the skeleton's loop]) and the rare line
// starts (LineStartRare: a tab or form feed, a continuation), which return
// what they find by value;
// after a rare stop the mask's bits before its end are cleared, or the
// block at its end classified. On the Python files of the 20 MB GPU tree
// it takes 24.5M instructions: about 26 a block for 202k blocks (20 of
// them the classification), 9 a special byte for 835k (289k opening and
// 289k closing brackets, 228k newlines), and 8 more an opening bracket, 5
// a closing one, about 26 a line begun in the loop. (30.4M with 33 a block,
// 11 a special byte and 20 a line before its tables were copied into its
// frame, SpecialTablesAvx2, it took the lowest bit without GCC's `xor`,
// classified with a saturating add and counted a line's spaces 16 at a
// time; 35.3M when it stopped at each newline and special, matching the
// brackets before it from a second mask, and recomputed the masks from the
// stop at each.) Tried and not kept: the rare stops coded above the newline
// (an opening bracket sorted by one branch; GCC compared twice, +0.02M),
// and the block kept as an address (one add a special byte less; GCC
// spilled, +0.2M). What the masks
// do not give: the depths at the newlines without a step per bracket. A
// block whose special bytes are only parentheses and newlines, where depths
// could come from popcounts of an open and a close mask, is 42% of this
// tree's blocks (32% of its brackets, 45% of its newlines), and the masks
// (parentheses, odd bytes, newlines) would cost about 16 instructions a
// block: about 3.2M more for about 3.7M less, not worth the code
// (docs/scan.md, "Fast path costs").
template <bool kAvx2, class Tables>
__attribute__((always_inline)) inline bool SkeletonLoop(std::string_view src, size_t begin,
                                                        const SkeletonState& st,
                                                        std::vector<Region>* regions,
                                                        const Tables& tables) {
  const char* s = src.data();
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  const size_t n = src.size();
  const StopCodes& stop_code = StopCodesOf<kAvx2>(tables);
  const StartsToken& starts_token = StartsTokenOf<kAvx2>(tables);
  uint8_t slots[kMaxBrackets + 1];
  slots[0] = 0xFF;
  size_t top = 0;
  size_t base = ~size_t{0} / 2;  // far from any p: the first stop classifies
  uint64_t bits = 0;             // the block's special bytes not passed yet
  // The regions are written through a raw pointer, grown by doubling (a
  // push_back would reload and store the vector's end).
  if (regions->size() < 64) regions->resize(64);
  Region* out = regions->data();
  Region* out_end = out + regions->size();
  size_t p = begin;
  while (p < n) {
    if (out == out_end) {
      const size_t count = regions->size();
      regions->resize(2 * count);
      out = regions->data() + count;
      out_end = regions->data() + regions->size();
    }
    const size_t start = p;
    uint32_t first = kNoToken;
    uint16_t indent = 0xFFFF;  // a blank line's: not smaller than any (LexMarked)
    p = FirstNonSpace<kAvx2>(s, p, tables);
    if (starts_token.yes[u[p]]) {  // the common case: spaces, then a token
      first = static_cast<uint32_t>(p);
      indent = static_cast<uint16_t>(std::min<size_t>(p - start, 0xFFFF));
    } else if (u[p] == '#') {
      // A comment line (spaces before it): to its newline from the block's
      // mask (Note [Comments and strings in the skeleton's loop]); the
      // line is a region without a token, as a blank one.
      PassTo(p + 1, base, bits);
      size_t e;
      do {
        e = NextSpecial<kAvx2>(u, n, base, bits, tables);
      } while (e < n && u[e] != '\n' && u[e] != '\r');
      if (e > n) e = n;
      st.dead->Push(p, e);
      p = e < n ? SkipNl(s, e, n) : n;
    } else {
      const LineStart ls = LineStartRare(st, start, p);
      if (ls.fail) return false;
      p = ls.p;
      first = ls.first;
      indent = ls.indent;
    }
    // All of the region but its end, written now so that none of it is kept
    // in a register through the loop to the line's end.
    out->start = static_cast<uint32_t>(start);
    out->first = first;
    out->indent = indent;
    out->parent = kParentUnknown;
    if (first != kNoToken) {
      // The special bytes at or after p (Note [Skeleton loop]); past the
      // block, the loop's head classifies the block at p.
      if (p - base >= 64) {
        base = p - 64;
        bits = 0;
      } else {
        bits &= ~uint64_t{0} << (p - base);
      }
      for (;;) {  // to the newline that ends the logical line
        if (bits == 0) {  // the next block (what lies before it is passed)
          p = base + 64;
          if constexpr (kAvx2) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
            // s[p, p + 64) lies in the input and its 16 bytes of padding
            // while p + 48 <= n; past that the scalar classifier stops at n.
            // (Asked first: one test a block where most are inside.)
            if (p + 48 <= n) {
              base = p;
              bits = ClassifyWith(tables, u + p);
              continue;
            }
#endif
          }
          if (p >= n) {
            p = n;
            break;
          }
          base = p;
          if constexpr (kAvx2) {
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
            bits = ClassifyScalar(u, p, n);
#endif
          } else {
            (void)tables;
            bits = ClassifyScalar(u, p, n);
          }
          continue;
        }
        const size_t at = base + LowestBit<kAvx2>(bits);
        bits &= bits - 1;
        const uint8_t code = stop_code.code[u[at]];
        if (code > kNewlineCode) {  // a closing bracket: slots[0] matches none
          if (slots[top] != (code & 0x7F)) return false;
          --top;
          continue;
        }
        if (code == kNewlineCode) {
          if (top != 0) continue;
          // The logical line ends. Where the next one starts as most do
          // (spaces, then a token), or is blank (spaces, then '\n'), its
          // region is begun here, without leaving the loop (a blank line's
          // region is ended by its '\n', which comes next); else the outer
          // loop takes the line start. (The bytes up to its token are
          // spaces, no special byte among them; at n the padding's NUL
          // starts no token.)
          p = at + 1;
          if (out + 1 == out_end) break;
          size_t q = p + LeadingSpaces<kAvx2>(s, p, tables);
          if (q - p == 16) {  // a deep indent (under 16 spaces, no test of its size)
            q = FirstNonSpace<kAvx2>(s, q, tables);
            if (q - p >= 0xFFFF) break;  // the outer loop's
          }
          uint32_t next_first;
          uint16_t next_indent;
          if (starts_token.yes[u[q]]) {
            next_first = static_cast<uint32_t>(q);
            next_indent = static_cast<uint16_t>(q - p);
          } else if (u[q] == '\n') {
            next_first = kNoToken;
            next_indent = 0xFFFF;
          } else {
            break;
          }
          out->end = static_cast<uint32_t>(p);
          ++out;
          out->start = static_cast<uint32_t>(p);
          out->first = next_first;
          out->indent = next_indent;
          out->parent = kParentUnknown;
          continue;
        }
        if (code != 0) {  // an opening bracket
          if (top == kMaxBrackets) return false;
          slots[++top] = code;
          continue;
        }
        // The rare stops: strings, comments, continuations, '\r', the end.
        p = at;
        if (p >= n) break;
        // Note [Comments and strings in the skeleton's loop].
        const unsigned char c = u[p];
        if (c == '#') {  // a comment: to its newline, which the loop takes next
          size_t e;
          do {
            e = NextSpecial<kAvx2>(u, n, base, bits, tables);
          } while (e < n && u[e] != '\n' && u[e] != '\r');
          if (e >= n) {
            st.dead->Push(p, n);
            p = n;
            break;
          }
          st.dead->Push(p, e);
          bits |= uint64_t{1} << (e - base);
          continue;
        }
        if ((c == '"' || c == '\'') && (p == begin || !IsIdentChar(u[p - 1])) &&
            (u[p + 1] != c || u[p + 2] != c)) {
          // A string of one quote without a prefix: to its closing quote.
          // (A triple quote's p + 2 < n: the padding's NUL is no quote.)
          bool dead = false;  // a special byte in its body: no live byte
          size_t e;
          for (;;) {
            e = NextSpecial<kAvx2>(u, n, base, bits, tables);
            if (e >= n) return false;  // unterminated: the full path reports it
            const unsigned char b = u[e];
            if (b == c) break;
            if (b == '\n' || b == '\r') return false;
            dead = true;
            if (b == '\\') {  // it escapes the next byte, a newline (\r\n) included
              if (e + 1 >= n) return false;
              PassTo(u[e + 1] == '\r' && e + 2 < n && u[e + 2] == '\n' ? e + 3 : e + 2, base, bits);
            }
          }
          if (dead || DeadBody<kAvx2>(u, p + 1, e)) st.dead->Push(p, e + 1);
          continue;
        }
        // (The byte read again: kept from the code's lookup, it held a
        // register through the loop.)
        const char* again = s;
        __asm__("" : "+r"(again));
        const bool newline = again[p] == '\r';
        p = SkeletonStop(st, p);
        if (p == 0) return false;
        if (newline && top == 0) break;
        if (p - base >= 64) {  // the head classifies the block at p
          base = p - 64;
          bits = 0;
        } else {
          bits &= ~uint64_t{0} << (p - base);
        }
      }
      if (p >= n && top != 0) return false;
    }
    out->end = static_cast<uint32_t>(p < n ? p : n);
    ++out;
  }
  regions->resize(static_cast<size_t>(out - regions->data()));
  return top == 0;
}

__attribute__((noinline)) bool SkeletonLoopScalar(std::string_view src, size_t begin,
                                                  const SkeletonState& st,
                                                  std::vector<Region>* regions) {
  return SkeletonLoop<false>(src, begin, st, regions, 0);
}

#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
__attribute__((noinline, target("avx2,bmi"))) bool SkeletonLoopAvx2(
    std::string_view src, size_t begin, const SkeletonState& st, std::vector<Region>* regions) {
  SpecialTablesAvx2 tables = MakeSpecialTablesAvx2();
  __asm__("" : "+m"(tables));  // its contents unknown to GCC: see ClassifyWith
  return SkeletonLoop<true>(src, begin, st, regions, tables);
}
#endif

std::atomic<int> skeleton_scalar{0};  // SetSkeletonScalarForTesting

// Step 1 of Note [Fast path]. Returns false where the fast path must not
// be taken. Out of line (it costs the same inlined), so that a profile shows
// its share. `has_cr`: whether src holds a '\r' (ScanSource's text check
// found it).
__attribute__((noinline)) bool SkeletonPass(std::string_view src, size_t begin, bool has_cr,
                                             Lexer* strings, TokenBuffer<Tok>* scratch,
                                             LexOutput* scratch_out, std::vector<Region>* regions,
                                             std::vector<uint32_t>* dead) {
  const char* s = src.data();
  const size_t n = src.size();
  DeadSpans spans(dead);
  const SkeletonState st{s, n, begin, has_cr, strings, scratch, scratch_out, &spans};
  bool ok;
#if defined(ANYDEV_SCAN_NIBBLE_AVX2)
  if (HaveAvx2() && skeleton_scalar.load(std::memory_order_relaxed) == 0) {
    ok = SkeletonLoopAvx2(src, begin, st, regions);
  } else {
    ok = SkeletonLoopScalar(src, begin, st, regions);
  }
#else
  ok = SkeletonLoopScalar(src, begin, st, regions);
#endif
  spans.Finish();
  return ok;
}

// The regions' parents (their nearest earlier line with a token and a
// smaller indent; -1 where none), found on demand and kept in the regions:
// only the lines that enclose a binding are asked for theirs, a few of a
// file's (kept by the skeleton for every line, the stack of enclosing lines
// cost it 20 instructions a line, and as much in a pass of its own).
std::atomic<int> parent_walk_budget{4};  // lines passed per line (SetParentWalkBudgetForTesting)

class Parents {
 public:
  // `open` and `same` are scratch, kept per thread by the caller.
  Parents(std::vector<Region>* regions, std::vector<OpenLine>* open, std::vector<Region*>* same)
      : regions_(regions), open_(open), same_(*same) {
    const int per_line = parent_walk_budget.load(std::memory_order_relaxed);
    budget_ = per_line == 0 ? 0 : static_cast<size_t>(per_line) * regions->size() + 64;
  }

  // Returns region r's parent. From r back, a line is passed where its
  // indent is not smaller, by a jump to its parent where that is known, and
  // a passed line of r's own indent has r's parent. A walk back can pass
  // many lines, and lines of decreasing indents are passed by every walk
  // from below them; so once the walks have passed four times as many lines
  // as the file has, every parent is set in one pass (Link): linear.
  int32_t Of(size_t r) {
    Region* const rs = regions_->data();
    if (rs[r].parent != kParentUnknown) return rs[r].parent;
    const uint16_t indent = rs[r].indent;
    int32_t at = static_cast<int32_t>(r) - 1;
    size_t steps = 0;
    same_.clear();
    while (at >= 0) {
      // The deeper lines whose parents are not known (blank lines among
      // them), most of those a walk passes, in a loop of their own, as far
      // as the budget allows (19 instructions a line passed in the loop
      // below, which asks every line everything).
      const size_t left = budget_ - steps;
      const int32_t stop = left > static_cast<size_t>(at) ? -1 : at - static_cast<int32_t>(left);
      int32_t k = at;
      while (k > stop && rs[k].indent > indent && rs[k].parent == kParentUnknown) --k;
      steps += static_cast<size_t>(at - k);
      at = k;
      if (at < 0) break;
      Region& e = rs[at];
      if (++steps > budget_) {
        Link();
        return rs[r].parent;
      }
      // A blank line's indent is 0xFFFF and its parent unknown: it is
      // passed as a line of a larger indent is.
      if (e.indent < indent) {
        break;
      } else if (e.parent != kParentUnknown) {
        at = e.parent;
      } else {
        if (e.indent == indent && e.first != kNoToken) same_.push_back(&e);
        --at;
      }
    }
    budget_ -= steps;
    rs[r].parent = at;
    for (Region* e : same_) e->parent = at;
    return at;
  }

 private:
  // Sets every region's parent, from a stack of the enclosing lines (those
  // with a token whose indents ascend).
  void Link() {
    if (open_->size() < 64) open_->resize(64);
    OpenLine* parents = open_->data();
    size_t top = 0, cap = open_->size();
    Region* const rs = regions_->data();
    const size_t count = regions_->size();
    for (size_t i = 0; i < count; ++i) {
      if (rs[i].first == kNoToken) continue;
      const uint16_t indent = rs[i].indent;
      while (top > 0 && parents[top - 1].indent >= indent) --top;
      rs[i].parent = top > 0 ? parents[top - 1].index : -1;
      if (top == cap) {
        open_->resize(2 * cap);
        parents = open_->data();
        cap = open_->size();
      }
      parents[top++] = OpenLine{indent, static_cast<int32_t>(i)};
    }
    budget_ = ~size_t{0};
  }

  std::vector<Region>* regions_;
  std::vector<OpenLine>* open_;
  size_t budget_;  // lines the walks may still pass
  std::vector<Region*>& same_;  // the lines of the asking one's indent a walk passed
};

// The region holding offset `off`.
size_t RegionOf(const std::vector<Region>& regions, uint32_t off) {
  auto it = std::upper_bound(regions.begin(), regions.end(), off,
                             [](uint32_t v, const Region& r) { return v < r.start; });
  return it == regions.begin() ? 0 : static_cast<size_t>(it - regions.begin() - 1);
}

// The region holding offset `at`, from region r on (at is at or past r's
// start: the matches ascend). The last region's start is asked first, so
// that the walk needs no test for the end. The next four regions are asked
// in turn, then it gallops (steps of 8, 16, ...) and halves: a hit of the
// first search lies about eleven regions on from the last one on the
// Python files of the 20 MB GPU tree, where a walk cost 2.0M instructions.
size_t RegionFrom(const std::vector<Region>& regions, size_t r, size_t at) {
  const Region* const rs = regions.data();
  const size_t last = regions.size() - 1;
  if (at >= rs[last].start) return last;
  for (int k = 0; k < 4; ++k) {
    if (rs[r + 1].start > at) return r;
    ++r;
  }
  // rs[r].start <= at < rs[last].start: the region is in [r, last).
  size_t lo = r, hi = r + 8;
  for (size_t step = 8; hi < last && rs[hi].start <= at; step *= 2) {
    lo = hi;
    hi += step;
  }
  if (hi > last) hi = last;
  while (hi - lo > 1) {  // rs[lo].start <= at < rs[hi].start
    const size_t mid = lo + (hi - lo) / 2;
    if (rs[mid].start <= at) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Note [Names searched from their binding]: a name means nothing before
// its binding (the resolver reads the tokens in order; the first search
// relies on it already, searching for the names an import binds from that
// import on). The rounds searched for each name newly bound to a target
// over the whole file; they search from the start of the line of its
// earliest binding the round saw (the earliest of the names of one search:
// one search a round). A name searched for already is searched for again
// where a round finds it bound above the line its search began at: an
// assignment above the import that bound it first (`x = torch.cuda` above
// `from torch import cuda as x`, where the uses between were never lexed:
// the fast path missed `x.synchronize()` there, which the full path finds).
// Each name keeps that line (FastScratch::names_from; an import run's
// first line for the names its run binds, its lines being lexed). A name no
// longer cheap is searched for over the whole file again, as before.
// Measured (callgrind, scan_native --jobs 1): Megatron-LM 127.75M to
// 126.91M instructions, DeepSpeed 72.56M to 72.17M; findings identical on
// the 13 dev-set trees, the generated trees and tests/ (scan_native --dump,
// fast and full). Test: NamesSearchedFromTheirBinding (scan_fast_path_test.cc).

// Marks the regions that hold a match of `search`; returns how many were
// not marked before.
// Whether the match at `at` lies in dead text (a comment, or a string no
// rule reads): `spans` holds [start, end) pairs in order, *cursor the first
// that may hold `at` (matches ascend). Every needle is an identifier, so a
// match that starts in such a span ends in it (before its closing quote or
// newline).
bool InDeadText(const std::vector<uint32_t>& spans, size_t* cursor, size_t at) {
  size_t c = *cursor;
  while (c < spans.size() && spans[c + 1] <= at) c += 2;
  *cursor = c;
  return c < spans.size() && spans[c] <= at;
}

size_t MarkHits(const NeedleSearch& search, std::string_view src, size_t begin, size_t from,
                const std::vector<Region>& regions, const std::vector<uint32_t>& dead,
                const std::vector<std::string_view>& cheap, std::vector<uint8_t>* marked) {
  const size_t n = src.size();
  size_t r = 0, added = 0, span = 0;
  for (size_t at = search.Next(src.data(), begin, from, n); at < n;) {
    if (InDeadText(dead, &span, at)) {  // on from the span's end
      at = search.Next(src.data(), begin, dead[span + 1], n);
      continue;
    }
    if (!cheap.empty() && CheapHit(src, begin, at, cheap)) {  // Note [Cheap names]
      at = search.Next(src.data(), begin, at + 1, n);
      continue;
    }
    r = RegionFrom(regions, r, at);
    if (!(*marked)[r]) {
      (*marked)[r] = 1;
      ++added;
    }
    at = search.Next(src.data(), begin, regions[r].end > at ? regions[r].end : at + 1, n);
  }
  return added;
}

// The rules' needles and `import`, searched for by the fast path's first
// pass: built once per thread for the needles it was built for (every file
// of a scan asks for the same), and copied. It holds views of its own copy
// of the needles, not of the rules'.
//
// Note [Searches kept by their names]: the names a file's imports bind are
// added to a copy of that search, round by round, and the rounds search for
// the names the resolver bound anew with a search of their own; each was
// built for every file (577 builds, 1.3M instructions, on the Python files
// of the 20 MB GPU tree, and a 4 KB copy of the first search for each of
// its files, 0.22M). The files of a tree bind the same few names: a search
// built is kept, keyed by the names added in each round and the rounds'
// bounds (the same Adds and Builds from the same search make the same
// tables), and the file searches with it where it can, copying nothing.
// A kept search holds views of its own copy of the names it added (and of
// those of the searches it was copied from, kept too); kMaxKept bounds the
// memory (a new search past it is the file's own, as before).
struct KeptSearch {
  explicit KeptSearch(const NeedleSearch& from) : search(from) {}  // (not zeroed first)
  std::vector<std::string> names;  // its views' bytes (reserved: never move)
  NeedleSearch search;
};

struct FirstSearch {
  static constexpr size_t kMaxKept = 256;
  std::vector<std::string> needles, plain;  // the rules' words and own needles
  NeedleSearch search;
  bool built = false, ok = false;
  // The kept searches, reserved for kMaxKept when the first is made, so
  // that none moves (and none is allocated on its own: 4 KB aligned), and
  // by their keys.
  std::vector<KeptSearch> searches;
  std::unordered_map<std::string, const NeedleSearch*> kept;
  std::string key;       // the file's key so far
  NeedleSearch own;      // a search past kMaxKept
  // The search the key names: `from` with `names` added (as whole words)
  // and built; null when one cannot be added and `strict` (the caller
  // takes the slow path). `from` stays valid while the kept searches do (or
  // is `own`).
  // `cheap`, by name: added as cheap (Note [Cheap names]); the key says so.
  const NeedleSearch* Extend(const NeedleSearch& from, const std::string_view* names,
                             const uint8_t* cheap, size_t count, bool strict) {
    auto it = kept.find(key);
    if (it != kept.end()) return it->second;
    if (searches.size() >= kMaxKept) {
      NeedleSearch next = from;
      for (size_t k = 0; k < count; ++k) {
        if (!next.Add(names[k], true, cheap[k] != 0) && strict) return nullptr;
      }
      next.Build();
      own = next;
      return &own;
    }
    if (searches.capacity() < kMaxKept) searches.reserve(kMaxKept);
    KeptSearch& entry = searches.emplace_back(from);
    entry.names.reserve(count);
    for (size_t k = 0; k < count; ++k) {
      entry.names.emplace_back(names[k]);
      if (!entry.search.Add(entry.names.back(), true, cheap[k] != 0) && strict) {
        searches.pop_back();
        return nullptr;
      }
    }
    entry.search.Build();
    kept.emplace(key, &entry.search);
    return &entry.search;
  }
};

// Note [Import lines lexed once]: the first search lexes and resolves the
// lines it finds holding `import`, for the names they bind (searched for
// from there on), and the rounds lexed and resolved the same lines again:
// 7.5M instructions on the Python files of the 20 MB GPU tree (4,967 lines,
// about 1,500 each), where the lines were taken one by one. Now
//  - a run of import lines (those after the matched one whose first
//    `import` lies outside dead text, so the lines the search would have
//    marked one by one, with the blank and comment lines between) is lexed
//    by one lexer and resolved by one resolver run (1,471 runs on that
//    tree), with one search build and one restart after it;
//  - its tokens are kept (FastScratch::import_toks), and LexMarked copies
//    them where its run of marked lines reaches them, lexing the bytes
//    around only: from a logical line's start the lexer gives the same
//    tokens alone or in a longer run, since each line ends at depth 0. A
//    run whose comments noted a suppression or `noqa` is not kept: the
//    rounds' output must note them, so they lex it again;
//  - where the run holds import statements alone, one a line, its lines of
//    one indent (ImportStatementsAlone: the resolver does nothing there
//    but what Import and FromImport do, and no scope opens or closes), the
//    first search's resolver records what they do (their findings, and
//    their binds and unbinds in order: ImportOp) instead of binding, and
//    the rounds replay it (Resolver::Replay) where they would resolve the
//    run again; an unbind is asked of the round's bindings, as Unbind asks;
//  - elsewhere the first search's resolver does not look up the spellings
//    of what the lines import (Resolver::report_imports_): only the
//    findings need them, and the rounds find them.
// A run resolved as one binds the names its lines bind one by one: an
// import's target comes from its module's text and the rules' roots, never
// from an earlier binding. (The import lines' 7.5M, and the rounds' lexing
// and resolving of them again, to the run's lexing 2.2M, now the only one,
// and the first search's resolver 3.6M; the rounds copy the tokens and
// replay the records. tests/cpp/scan_fast_path_test.cc, RunsOfImportLines.)
//
// A run of import lines the first search lexed: its first and last regions
// and its tokens, [begin, end) of FastScratch::import_toks.
struct LexedLine {
  uint32_t region, last, begin, end;
  // Where the rounds replay its resolution: its ops and findings, ranges
  // of FastScratch::import_ops and import_findings.
  bool replay;
  uint32_t ops_begin, ops_end, findings_begin, findings_end;
};

// The names an import line is asked for (ImportMatters): by first byte, a
// bit for each length (63: longer) that one of them has, and the names.
struct ImportNames {
  uint64_t bits[256];
  std::vector<std::string_view> names;
  void Reset() {
    std::memset(bits, 0, sizeof bits);
    names.clear();
  }
  void Add(std::string_view name) {
    if (name.empty()) return;
    bits[static_cast<unsigned char>(name[0])] |= uint64_t{1} << std::min<size_t>(name.size(), 63);
    names.push_back(name);
  }
};

struct FastScratch {
  FirstSearch first;
  std::vector<LexedLine> lexed;  // in the order of their regions
  std::vector<Tok> import_toks;
  std::vector<ImportOp> import_ops;
  std::vector<RawFinding> import_findings;
  std::vector<ImportReplay> replay;  // a round's, from LexMarked
  std::vector<Region> regions;
  std::vector<uint32_t> dead;  // dead text: [start, end) pairs, in order
  std::vector<OpenLine> open;
  std::vector<Region*> same;  // Parents' scratch
  std::vector<uint8_t> marked;  // by region: 1 when it must be lexed
  std::vector<std::string_view> names, bound;
  std::vector<uint8_t> bound_cheap;         // by entry of `bound`
  std::vector<uint32_t> bound_offsets;      // by entry of `bound`: where it was bound
  // By entry of `names`, `fresh`: the offset a search for it began at (Note
  // [Names searched from their binding]).
  std::vector<uint32_t> names_from, fresh_from;
  ImportNames import_names;                 // Note [Import lines that bind nothing]
  std::vector<std::string_view> cheap, fresh;  // the names searched as cheap (Note [Cheap names])
  std::vector<uint8_t> names_cheap, fresh_cheap;  // by entry of `names`, `fresh`: cheap
  std::vector<uint32_t> binding_offsets;
  std::vector<ResolvedChain> chains;
  TokenBuffer<Tok> scratch_toks;
  ResolverScratch resolver;  // the first search's and the rounds' (one at a time)
  PyLiteralsScratch literals;
  LexOutput first_pass;  // the first search's
};

// Lexes the marked regions into `toks` (Note [Fast path], step 2). Returns
// false if the lexer fails (the skeleton would have given up first).
// `marked` has eight entries more than `regions`, set (a sentinel, and the
// rest of a load of eight from it).
bool LexMarked(std::string_view src, const std::vector<Region>& regions,
               const std::vector<uint8_t>& marked, const FastScratch& fs,
               std::vector<ImportReplay>* replay, TokenBuffer<Tok>* toks, LexOutput* out) {
  const std::vector<LexedLine>& lexed = fs.lexed;
  const std::vector<Tok>& lexed_toks = fs.import_toks;
  toks->clear();
  replay->clear();
  bool gap = false;
  uint16_t gap_indent = 0xFFFF;
  uint32_t gap_at = 0;
  const size_t count = regions.size();
  // Through raw pointers: a store to a token may alias the vectors' own
  // pointers, which the compiler would then reload at every region.
  const Region* const rs = regions.data();
  const uint8_t* const ms = marked.data();
  // The import lines already lexed (all marked): copied, not lexed again.
  const LexedLine* next = lexed.data();
  const LexedLine* const lexed_end = next + lexed.size();
  const Tok* const kept = lexed_toks.data();
  for (size_t i = 0; i < count;) {
    if (!ms[i]) {  // the lines left out, up to the next marked one
      if (!gap) {  // a gap starts at a line with a token
        while (rs[i].first == kNoToken) {
          if (++i == count || ms[i]) break;
        }
        if (i == count || ms[i]) continue;
        gap = true;
        gap_at = rs[i].start;
      }
      // To the next marked line, or the one past the last (marked): eight
      // a step while none of the eight is marked (one load asks), where a
      // line a step cost 6.5 instructions (1.5M on the Python files of the
      // 20 MB GPU tree, whose lines are most of them left out). `marked`
      // has seven more entries, set, past its sentinel, for that load.
      uint16_t least = gap_indent;  // a blank line's indent is 0xFFFF
      for (;;) {
        uint64_t eight;
        std::memcpy(&eight, ms + i, 8);
        if (eight != 0) break;
        uint16_t a = std::min(rs[i].indent, rs[i + 1].indent);
        uint16_t b = std::min(rs[i + 2].indent, rs[i + 3].indent);
        const uint16_t c = std::min(rs[i + 4].indent, rs[i + 5].indent);
        const uint16_t d = std::min(rs[i + 6].indent, rs[i + 7].indent);
        a = std::min(a, b);
        b = std::min(c, d);
        least = std::min(least, std::min(a, b));
        i += 8;
      }
      for (; !ms[i]; ++i) {
        if (rs[i].indent < least) least = rs[i].indent;
      }
      gap_indent = least;
      continue;
    }
    const Region& r = rs[i];
    if (r.first == kNoToken) {
      ++i;
      continue;
    }
    if (gap) {
      // Markers: a line start of the smallest indent left out. Four before
      // the first line lexed, so that no detector reads back past index 0.
      const int copies = toks->empty() ? static_cast<int>(kSentinels) : 1;
      for (int k = 0; k < copies; ++k) {
        *toks->Add() = Tok{gap_at, gap_at, gap_indent, kNewline, true, 0};
      }
      gap = false;
      gap_indent = 0xFFFF;
    }
    // A run: marked regions with nothing but blank lines between them.
    size_t j = i + 1, last = i;
    while (j < count && (ms[j] || rs[j].first == kNoToken)) {
      if (ms[j]) last = j;
      ++j;
    }
    // The run's bytes are lexed as one, except its import lines already
    // lexed, whose tokens are copied: lexed from a line's start, the lexer
    // gives the same tokens alone or in a run (the line ends at depth 0).
    size_t from = r.start;
    const Region* from_line = &r;
    while (next != lexed_end && next->region < i) ++next;
    for (; next != lexed_end && next->region <= last; ++next) {
      const uint32_t start = rs[next->region].start;
      if (start > from) {
        Lexer(src, from, toks, out, start, from_line).Run();
        if (out->has_error) return false;
      }
      const uint32_t tok_begin = static_cast<uint32_t>(toks->size());
      toks->Append(kept + next->begin, next->end - next->begin);
      if (next->replay) {
        replay->push_back(ImportReplay{tok_begin, static_cast<uint32_t>(toks->size()),
                                       fs.import_ops.data() + next->ops_begin,
                                       next->ops_end - next->ops_begin,
                                       fs.import_findings.data() + next->findings_begin,
                                       next->findings_end - next->findings_begin});
      }
      from = rs[next->last].end;
      from_line = rs + next->last + 1;
    }
    if (from < rs[last].end) {
      Lexer(src, from, toks, out, rs[last].end, from_line).Run();
      if (out->has_error) return false;
    }
    i = last + 1;
  }
  if (gap) *toks->Add() = Tok{gap_at, gap_at, gap_indent, kNewline, true, 0};
  for (size_t k = 0; k < kSentinels; ++k) {
    *toks->Add() = Tok{static_cast<uint32_t>(src.size()), static_cast<uint32_t>(src.size()), 0,
                       kEnd, false, 0};
  }
  return true;
}

// Whether the token is an `if` that starts a line.
bool IsLineIf(const Tok& tok, std::string_view src) {
  return tok.first && tok.type == kName && tok.end - tok.start == 2 && src[tok.start] == 'i' &&
         src[tok.start + 1] == 'f';
}

// Where the line holds the word `import` first at or after `from` (in the
// line); kNoImport where it does not. Called for every line with a match of
// the first search, from the match (an `import` before it lies in dead
// text, or the search would have found it first: such a line holds no
// import statement, and an alias its assignment binds is found by the
// rounds, Note [Fast path] step 3), most of which hold no `import`: the
// pairs "im" are found 16 positions at a time (SSE2), and only they are
// checked, where `find` called `memchr` for each `i` of the line. The
// loads read at most 11 bytes past the line's last possible start of the
// word, which the padding covers (kPadding).
constexpr size_t kNoImport = ~size_t{0};

size_t ImportAt(std::string_view src, const Region& region, size_t from) {
  const char* const s = src.data();
  const size_t start = from;
  if (region.end < start + 6) return kNoImport;
  const size_t last = region.end - 6;  // the last offset the word can start at
  const auto word_at = [&](size_t at) {
    return std::memcmp(s + at + 2, "port", 4) == 0 &&
           (at == region.start || !IsIdentChar(static_cast<unsigned char>(s[at - 1]))) &&
           !IsIdentChar(static_cast<unsigned char>(s[at + 6]));
  };
#if defined(__SSE2__)
  const __m128i ci = _mm_set1_epi8('i'), cm = _mm_set1_epi8('m');
  for (size_t p = start; p <= last; p += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + p + 1));
    uint32_t mask = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, ci), _mm_cmpeq_epi8(b, cm))));
    if (last - p < 15) mask &= (2u << (last - p)) - 1;
    for (; mask != 0; mask &= mask - 1) {
      const size_t at = p + static_cast<size_t>(__builtin_ctz(mask));
      if (word_at(at)) return at;
    }
  }
#else
  for (size_t at = start; at <= last; ++at) {
    if (s[at] == 'i' && s[at + 1] == 'm' && word_at(at)) return at;
  }
#endif
  return kNoImport;
}

// Note [Import lines that bind nothing]: the first search lexed and
// resolved every line with the keyword `import`, for the names it binds;
// real modules start with runs of them (26 lines a 1000 in Megatron-LM's
// Python files, 9,242 of its import lines lexed, 0.5 MB), nearly all of
// other packages than torch. An import binds a name to a target only where
// its module (or dotted name) starts with a root of the spellings (`torch`);
// any other binds its names to nothing, which matters only where a name was
// bound to a target, and such a name is a needle of the search. So an
// import line is lexed only where one of its names, anywhere in its logical
// line, is a root, a rule's word or a name bound so far (or it holds a
// rule's own needle). Names are compared one by one: a search over the
// line cost about 1,100 instructions a line in its kernel's entries.
bool ImportMatters(const RuleSet& rules, const ImportNames& asked, std::string_view src,
                   const Region& region) {
  const char* s = src.data();
  for (const std::string& p : rules.FastPathPlain(Language::kPython)) {
    if (src.substr(region.start, region.end - region.start).find(p) != std::string_view::npos) {
      return true;
    }
  }
  // Its names (in its comments and strings too: a needle there marked the
  // line before), each asked of the roots, the rules' words and the names
  // bound so far (ImportNames): the search's needles but `import`.
  for (size_t k = region.start; k < region.end;) {
    const unsigned char c = static_cast<unsigned char>(s[k]);
    if (!IsIdentStart(c)) {
      ++k;
      continue;
    }
    size_t e = k + 1;
    while (IsIdentChar(static_cast<unsigned char>(s[e]))) ++e;
    const size_t size = e - k;
    if (asked.bits[c] >> std::min<size_t>(size, 63) & 1) {
      for (std::string_view w : asked.names) {
        if (w.size() == size && std::memcmp(w.data(), s + k, size) == 0) return true;
      }
    }
    k = e;
  }
  return false;
}

// Whether the tokens of a run of import lines (`one`, no sentinels yet)
// are import statements alone, one a line, the lines of one indent: the
// resolver does nothing there but what Import and FromImport do, and no
// scope opens or closes (Note [Import lines lexed once]).
bool ImportStatementsAlone(std::string_view src, const TokenBuffer<Tok>& one) {
  const size_t n = one.size();
  if (n == 0) return false;
  const Tok* const t = &one[0];
  const uint16_t indent = t[0].indent;
  for (size_t k = 0; k < n; ++k) {
    if (t[k].type == kSemi) return false;
    if (!t[k].first) continue;
    if (t[k].type != kName || t[k].indent != indent) return false;
    const std::string_view w = src.substr(t[k].start, t[k].end - t[k].start);
    if (!Is(w, "import") && !Is(w, "from")) return false;
  }
  return t[0].first;
}

// What Python's tokenize makes of the file's indents, for its `# noqa`
// comments (Note [noqa directives] in scan_source.cc): out->odd_indent where
// an indent holds a byte other than ' ' (a tab, a form feed) or a line's
// first token follows a backslash and a newline, else out->indent_error at
// the start of the first line whose dedent matches no enclosing indent
// (tokenize raises IndentationError there). `next(&floor, &first)` gives
// each logical line with a token in order: its first token's offset, and an
// offset at or before the start of that token's physical line; false after
// the last. (The same answer from the skeleton's lines and from the tokens.)
template <typename Next>
void PythonIndents(std::string_view src, Next next, LexOutput* out) {
  std::vector<uint32_t> open{0};
  size_t floor, first;
  while (next(&floor, &first)) {
    size_t k = first;
    while (k > floor && src[k - 1] == ' ') --k;
    if (k > floor) {
      if (src[k - 1] != '\n' && src[k - 1] != '\r') {
        out->odd_indent = true;
        return;
      }
      size_t j = k - 1;
      if (src[j] == '\n' && j > floor && src[j - 1] == '\r') --j;
      if (j > floor && src[j - 1] == '\\') {
        out->odd_indent = true;
        return;
      }
    }
    const uint32_t indent = static_cast<uint32_t>(first - k);
    if (indent > open.back()) {
      open.push_back(indent);
    } else if (indent < open.back()) {
      if (std::find(open.begin(), open.end(), indent) == open.end()) {
        out->indent_error = static_cast<uint32_t>(k);
        return;
      }
      while (open.back() > indent) open.pop_back();
    }
  }
}

// PythonIndents over the skeleton's lines.
void IndentsOfRegions(std::string_view src, const std::vector<Region>& regions, LexOutput* out) {
  size_t r = 0;
  PythonIndents(
      src,
      [&](size_t* floor, size_t* first) {
        while (r < regions.size() && regions[r].first == kNoToken) ++r;
        if (r == regions.size()) return false;
        *floor = regions[r].start;
        *first = regions[r].first;
        ++r;
        return true;
      },
      out);
}

// PythonIndents over the full lexer's tokens (`begin`: past a BOM).
void IndentsOfTokens(std::string_view src, size_t begin, const TokenBuffer<Tok>& toks,
                     LexOutput* out) {
  size_t i = 0;
  const size_t n = toks.size();
  PythonIndents(
      src,
      [&](size_t* floor, size_t* first) {
        while (i < n && !(toks[i].first && toks[i].type != kEnd)) ++i;
        if (i == n) return false;
        *floor = begin;
        *first = toks[i].start;
        ++i;
        return true;
      },
      out);
}

// The fast path (Note [Fast path]). Returns false, having written nothing
// to `out`, when the file must take the full path.
bool ScanPythonFast(const RuleSet& rules, std::string_view src, size_t begin, bool has_cr,
                    LexOutput* out, TokenBuffer<Tok>* toks, FastScratch* scratch) {
  if (rules.FastPathNeedles(Language::kPython) == nullptr) return false;
  // Note [Needles as words]
  const std::vector<std::string>& words = rules.FastPathWords(Language::kPython);
  const std::vector<std::string>& plain = rules.FastPathPlain(Language::kPython);
  FastScratch& fs = *scratch;
  LexOutput scratch_out;
  {
    Lexer strings(src, begin, &fs.scratch_toks, &scratch_out);
    if (!SkeletonPass(src, begin, has_cr, &strings, &fs.scratch_toks, &scratch_out, &fs.regions,
                      &fs.dead)) {
      return false;
    }
  }
  // Matches in dead text are skipped only where every needle is an
  // identifier (see InDeadText); a rule's own needle need not be.
  for (const std::vector<std::string>* list : {&words, &plain}) {
    for (const std::string& needle : *list) {
      for (char c : needle) {
        if (!IsIdentChar(static_cast<unsigned char>(c))) fs.dead.clear();
      }
    }
  }
  const std::vector<Region>& regions = fs.regions;
  Parents parents(&fs.regions, &fs.open, &fs.same);
  // One more, marked: LexMarked's walk over the lines left out stops there
  // (and seven more for its loads of eight).
  fs.marked.assign(regions.size() + 8, 1);
  std::memset(fs.marked.data(), 0, regions.size());
  fs.names.clear();
  fs.names_from.clear();
  // One pass over the file for the needles and the names the file binds:
  // a line with `import` is lexed and resolved on its own as soon as it is
  // found, and the names it binds are searched for from there on (a name
  // before its binding resolves to nothing). What this first guess misses
  // (an alias bound by an assignment), the rounds below add.
  {
    FirstSearch& first = fs.first;
    if (!first.built || first.needles != words || first.plain != plain) {
      first.needles = words;
      first.plain = plain;
      first.kept.clear();
      first.searches.clear();
      first.search = NeedleSearch();
      first.ok = true;
      for (const std::string& needle : first.needles) {
        first.ok = first.ok && !needle.empty() && first.search.Add(needle, true);
      }
      for (const std::string& needle : first.plain) {
        first.ok = first.ok && first.search.Add(needle, false);
      }
      first.ok = first.ok && first.search.Add("import", true);
      if (first.ok) first.search.Build();
      first.built = true;
    }
    if (!first.ok) return false;
    const NeedleSearch* search = &first.search;
    first.key.assign(1, '\2');  // (the rounds' keys start with '\3')
    const size_t n = src.size();
    size_t r = 0, span = 0;
    TokenBuffer<Tok>& one = fs.scratch_toks;  // an import line's tokens
    // The import lines' output (their findings replayed by the rounds),
    // kept with its buffers from file to file.
    LexOutput& pass = fs.first_pass;
    pass.findings.clear();
    pass.suppressions.clear();
    pass.noqa_comment = false;
    pass.noqa.clear();
    pass.has_error = false;
    pass.error_offset = 0;
    pass.error.clear();
    Resolver resolver(rules, src, one, &pass, &fs.resolver);
    resolver.bound_names_ = &fs.bound;
    resolver.bound_cheap_ = &fs.bound_cheap;
    resolver.bound_offsets_ = &fs.bound_offsets;
    resolver.binding_offsets_ = &fs.binding_offsets;
    fs.cheap.clear();
    fs.names_cheap.clear();
    fs.import_names.Reset();
    for (std::string_view root : rules.Roots(Language::kPython)) fs.import_names.Add(root);
    for (const std::string& w : words) fs.import_names.Add(w);
    fs.lexed.clear();
    fs.import_toks.clear();
    fs.import_ops.clear();
    fs.import_findings.clear();
    for (size_t at = search->Next(src.data(), begin, begin, n); at < n;) {
      if (InDeadText(fs.dead, &span, at)) {
        // On from the span's end: a match that starts in it ends in it.
        at = search->Next(src.data(), begin, fs.dead[span + 1], n);
        continue;
      }
      if (!fs.cheap.empty() && CheapHit(src, begin, at, fs.cheap)) {  // Note [Cheap names]
        at = search->Next(src.data(), begin, at + 1, n);
        continue;
      }
      r = RegionFrom(regions, r, at);
      const Region& region = regions[r];
      size_t resume = region.end > at ? region.end : at + 1;
      const bool import_line = region.first != kNoToken && ImportAt(src, region, at) != kNoImport;
      if (import_line && !ImportMatters(rules, fs.import_names, src, region)) {
        at = search->Next(src.data(), begin, resume, n);  // Note [Import lines that bind nothing]
        continue;
      }
      fs.marked[r] = 1;
      if (import_line) {
        // The import lines that follow it (blank and comment lines between)
        // are lexed and resolved with it, as one run (Note [Import lines
        // lexed once]): those whose first `import` the search would find,
        // outside dead text, and that may bind (Note [Import lines that
        // bind nothing]), so that the lines marked are the same.
        const size_t block = r;
        for (size_t j = r + 1; j < regions.size(); ++j) {
          if (regions[j].first == kNoToken) continue;
          const size_t word = ImportAt(src, regions[j], regions[j].start);
          size_t cursor = span;
          if (word == kNoImport || InDeadText(fs.dead, &cursor, word)) break;
          if (!ImportMatters(rules, fs.import_names, src, regions[j])) break;
          fs.marked[j] = 1;
          r = j;
        }
        const uint32_t end = regions[r].end;
        resume = end;
        one.clear();
        Lexer(src, region.start, &one, &pass, end, &region).Run();
        if (pass.has_error) return false;
        // Kept for the rounds where its comments (if any) noted nothing: a
        // run whose lexing changed the output is lexed again there. Its
        // resolution is replayed there where it holds import statements
        // alone, one a line, of one indent.
        const bool kept = pass.suppressions.empty() && !pass.noqa_comment;
        const bool replay = kept && ImportStatementsAlone(src, one);
        if (kept) {
          const uint32_t at_tok = static_cast<uint32_t>(fs.import_toks.size());
          fs.import_toks.insert(fs.import_toks.end(), &one[0], &one[0] + one.size());
          fs.lexed.push_back(LexedLine{static_cast<uint32_t>(block), static_cast<uint32_t>(r),
                                       at_tok, static_cast<uint32_t>(fs.import_toks.size()),
                                       replay, 0, 0, 0, 0});
        }
        pass.noqa_comment = false;
        pass.noqa.clear();
        for (size_t k = 0; k < kSentinels; ++k) {
          *one.Add() = Tok{end, end, 0, kEnd, false, 0};
        }
        fs.bound.clear();
        fs.bound_cheap.clear();
        fs.bound_offsets.clear();
        fs.binding_offsets.clear();
        resolver.Reset();
        resolver.report_imports_ = replay;
        resolver.import_log_ = replay ? &fs.import_ops : nullptr;
        const size_t ops_begin = fs.import_ops.size();
        resolver.Run();
        if (replay) {
          LexedLine& line = fs.lexed.back();
          line.ops_begin = static_cast<uint32_t>(ops_begin);
          line.ops_end = static_cast<uint32_t>(fs.import_ops.size());
          line.findings_begin = static_cast<uint32_t>(fs.import_findings.size());
          fs.import_findings.insert(fs.import_findings.end(), pass.findings.begin(),
                                    pass.findings.end());
          line.findings_end = static_cast<uint32_t>(fs.import_findings.size());
        }
        pass.findings.clear();  // what it found is found again below, or replayed
        pass.suppressions.clear();
        const size_t had = fs.names.size();
        bool flipped = false;
        for (size_t k = 0; k < fs.bound.size(); ++k) {
          const std::string_view name = fs.bound[k];
          const bool cheap_now = fs.bound_cheap[k] && CheapName(rules, name);
          const auto cheap = std::find(fs.cheap.begin(), fs.cheap.end(), name);
          if (std::find(fs.names.begin(), fs.names.end(), name) != fs.names.end()) {
            // Bound to a target with a word: every match from here on.
            if (!cheap_now && cheap != fs.cheap.end()) {
              fs.cheap.erase(cheap);
              const size_t index = static_cast<size_t>(
                  std::find(fs.names.begin(), fs.names.end(), name) - fs.names.begin());
              fs.names_cheap[index] = 0;
              flipped = true;
            }
            continue;
          }
          if (fs.names.size() >= static_cast<size_t>(NeedleSearch::kMax) / 2) return false;
          fs.names.push_back(name);
          fs.names_cheap.push_back(cheap_now ? 1 : 0);
          // Searched from the run's end on, and the run's lines are lexed:
          // as if searched from its start (Note [Names searched from their
          // binding]).
          fs.names_from.push_back(regions[block].start);
          fs.import_names.Add(name);
          if (cheap_now) fs.cheap.push_back(name);
          if (cheap_now) first.key.push_back('\4');
          first.key.append(name);
          first.key.push_back('\0');
        }
        if (flipped) {
          // A cheap name is one no more: the search of every name, again.
          first.key.assign(1, '\5');
          for (size_t k = 0; k < fs.names.size(); ++k) {
            if (fs.names_cheap[k]) first.key.push_back('\4');
            first.key.append(fs.names[k]);
            first.key.push_back('\0');
          }
          search = first.Extend(first.search, fs.names.data(), fs.names_cheap.data(),
                                fs.names.size(), true);
          if (search == nullptr) return false;
        } else if (fs.names.size() > had) {  // Note [Searches kept by their names]
          first.key.push_back('\1');
          search = first.Extend(*search, fs.names.data() + had, fs.names_cheap.data() + had,
                                fs.names.size() - had, true);
          if (search == nullptr) return false;
        }
        if (!fs.bound.empty()) {  // their enclosing lines
          for (size_t k = block; k <= r; ++k) {
            if (regions[k].first == kNoToken) continue;
            for (int32_t e = static_cast<int32_t>(k);
                 e >= 0 && fs.marked[static_cast<size_t>(e)] != 2;
                 e = parents.Of(static_cast<size_t>(e))) {
              fs.marked[static_cast<size_t>(e)] = 2;
            }
          }
        }
      }
      at = search->Next(src.data(), begin, resume, n);
    }
  }
  const bool literals = rules.HasDetectors(Language::kPython);
  // One output for every round, emptied at each, and room for the findings
  // of most files from the start: a fresh one at each round grew its
  // findings one reallocation at a time.
  LexOutput pass;
  pass.findings.reserve(32);
  for (int round = 0;; ++round) {
    if (round == 64) return false;  // does not settle: cannot happen, but be safe
    if (round > 0) {
      pass.findings.clear();
      pass.suppressions.clear();
      pass.noqa_comment = false;
      pass.noqa.clear();
      pass.has_error = false;
      pass.error_offset = 0;
      pass.error.clear();
    }
    if (!LexMarked(src, regions, fs.marked, fs, &fs.replay, toks, &pass)) return false;
    fs.bound.clear();
    fs.bound_cheap.clear();
    fs.bound_offsets.clear();
    fs.binding_offsets.clear();
    fs.chains.clear();
    {
      Resolver resolver(rules, src, *toks, &pass, &fs.resolver);
      resolver.chains_ = &fs.chains;
      resolver.bound_names_ = &fs.bound;
      resolver.bound_cheap_ = &fs.bound_cheap;
      resolver.bound_offsets_ = &fs.bound_offsets;
      resolver.binding_offsets_ = &fs.binding_offsets;
      if (!fs.replay.empty()) resolver.SetReplay(&fs.replay);
      resolver.Run();
    }
    bool more = false;
    // Names bound to a target: their lines. (The search is built only where
    // there are new ones: its tables are zeroed when it is made, 3.5 KB.)
    // The names new to the search, and those no longer cheap (Note [Cheap
    // names]: bound in this round to a target with a word), searched for
    // over the whole file.
    fs.fresh.clear();
    fs.fresh_cheap.clear();
    fs.fresh_from.clear();
    // A name to search for (again) from `from`, cheap or not.
    const auto search_for = [&fs](std::string_view b, uint8_t cheap, uint32_t from) {
      const auto f = std::find(fs.fresh.begin(), fs.fresh.end(), b);
      if (f == fs.fresh.end()) {
        fs.fresh.push_back(b);
        fs.fresh_cheap.push_back(cheap);
        fs.fresh_from.push_back(from);
      } else {
        const size_t i = static_cast<size_t>(f - fs.fresh.begin());
        fs.fresh_cheap[i] = fs.fresh_cheap[i] && cheap;
        fs.fresh_from[i] = std::min(fs.fresh_from[i], from);
      }
    };
    for (size_t k = 0; k < fs.bound.size(); ++k) {
      const std::string_view b = fs.bound[k];
      const bool cheap_now = fs.bound_cheap[k] && CheapName(rules, b);
      // Note [Names searched from their binding]: from its line's start.
      const uint32_t from = regions[RegionOf(regions, fs.bound_offsets[k])].start;
      const auto cheap = std::find(fs.cheap.begin(), fs.cheap.end(), b);
      const auto known = std::find(fs.names.begin(), fs.names.end(), b);
      if (known != fs.names.end()) {
        const size_t index = static_cast<size_t>(known - fs.names.begin());
        if (!cheap_now && cheap != fs.cheap.end()) {  // over the whole file
          fs.cheap.erase(cheap);
          fs.names_cheap[index] = 0;
          fs.names_from[index] = static_cast<uint32_t>(begin);
          search_for(b, 0, static_cast<uint32_t>(begin));
        } else if (from < fs.names_from[index]) {  // bound before its search began
          fs.names_from[index] = from;
          search_for(b, fs.names_cheap[index], from);
        }
        continue;
      }
      if (fs.names.size() >= static_cast<size_t>(NeedleSearch::kMax)) return false;
      fs.names.push_back(b);
      fs.names_cheap.push_back(cheap_now ? 1 : 0);
      fs.names_from.push_back(from);
      search_for(b, cheap_now ? 1 : 0, from);
      if (cheap_now) fs.cheap.push_back(b);
    }
    if (!fs.fresh.empty()) {  // Note [Searches kept by their names]
      FirstSearch& first = fs.first;
      first.key.assign(1, '\3');
      for (size_t k = 0; k < fs.fresh.size(); ++k) {
        if (fs.fresh_cheap[k]) first.key.push_back('\4');
        first.key.append(fs.fresh[k]);
        first.key.push_back('\0');
      }
      static const NeedleSearch empty = [] {
        NeedleSearch none;
        return none;
      }();
      const NeedleSearch* names =
          first.Extend(empty, fs.fresh.data(), fs.fresh_cheap.data(), fs.fresh.size(), false);
      if (names == nullptr) return false;
      const size_t from = *std::min_element(fs.fresh_from.begin(), fs.fresh_from.end());
      if (MarkHits(*names, src, begin, from, regions, fs.dead, fs.cheap, &fs.marked) != 0) {
        more = true;
      }
    }
    // The enclosing lines of a binding (2: marked, and its enclosing lines
    // too). Its region is found from the last binding's on (the resolver
    // binds in the order of the tokens), where a binary search over every
    // region took 100 instructions for each.
    size_t last_region = 0;
    for (uint32_t off : fs.binding_offsets) {
      last_region = off >= regions[last_region].start ? RegionFrom(regions, last_region, off)
                                                      : RegionOf(regions, off);
      for (int32_t r = static_cast<int32_t>(last_region);
           r >= 0 && fs.marked[static_cast<size_t>(r)] != 2;
           r = parents.Of(static_cast<size_t>(r))) {
        if (!fs.marked[static_cast<size_t>(r)]) more = true;
        fs.marked[static_cast<size_t>(r)] = 2;
      }
    }
    // The lines after an `if` that asks torch for a device: found from the
    // chains that ask (few), each walked back to its line's start, where a
    // pass over every token had asked each line's first whether it was such
    // an `if`. An `if` counts when no newline lies between it and the chain.
    //
    // Note [One walk back a line]
    // Each walk stops where the one before it started (`walked`): the tokens
    // between that chain's line start and its first token were looked at
    // then, and each `if` there marked its lines. So a line of N checks
    // (`a() or b() or ...`, a generated guard) costs one walk of the line,
    // where a walk from every chain to the line's start cost N times the
    // line (20,000 checks: 1.58 s). Chains out of order walk to the start.
    if (literals) {
      const Tok* const tk = &(*toks)[0];
      size_t walked = 0;  // the last walk started at token walked - 1 (0: none)
      for (const ResolvedChain& c : fs.chains) {
        if (c.kind != kChainAvailability) continue;
        const size_t floor = walked <= c.first ? walked : 0;
        walked = std::max(walked, size_t{c.first} + 1);
        for (size_t k = size_t{c.first} + 1; k-- > floor;) {
          if (tk[k].type == kNewline || tk[k].type == kEnd) break;
          if (!IsLineIf(tk[k], src)) continue;
          size_t r = RegionOf(regions, tk[k].start);
          for (int lines = 0; lines < 4 && ++r < regions.size();) {
            if (regions[r].first == kNoToken) continue;
            ++lines;
            if (!fs.marked[r]) {
              fs.marked[r] = 1;
              more = true;
            }
          }
        }
      }
    }
    if (more) continue;
    if (literals) PyLiterals(rules, src, *toks, fs.chains, &pass, &fs.literals).Run();
    *out = std::move(pass);
    if (!out->noqa.empty()) IndentsOfRegions(src, regions, out);
    return true;
  }
}

void ScanPythonFull(const RuleSet& rules, std::string_view src, size_t begin, LexOutput* out,
                    TokenBuffer<Tok>* toks_ptr, ResolverScratch* resolver_scratch,
                    PyLiteralsScratch* literals_scratch) {
  TokenBuffer<Tok>& toks = *toks_ptr;
  toks.clear();
  Lexer(src, begin, &toks, out).Run();
  if (!out->noqa.empty()) IndentsOfTokens(src, begin, toks, out);
  // Sentinels: the resolver looks up to three tokens ahead.
  for (size_t k = 0; k < kSentinels; ++k) {
    *toks.Add() = Tok{static_cast<uint32_t>(src.size()), static_cast<uint32_t>(src.size()), 0,
                      kEnd, false, 0};
  }
  if (rules.HasDetectors(Language::kPython)) {
    std::vector<ResolvedChain> chains;
    Resolver resolver(rules, src, toks, out, resolver_scratch);
    resolver.chains_ = &chains;
    resolver.Run();
    PyLiterals(rules, src, toks, chains, out, literals_scratch).Run();
  } else {
    Resolver(rules, src, toks, out, resolver_scratch).Run();
  }
}

}  // namespace

void SetSkeletonScalarForTesting(bool scalar) {
  skeleton_scalar.store(scalar ? 1 : 0, std::memory_order_relaxed);
}

void SetParentWalkBudgetForTesting(int per_line) {
  parent_walk_budget.store(per_line < 0 ? 4 : per_line, std::memory_order_relaxed);
}

void FStringEndsForTesting(std::string_view src, size_t start, size_t quote, size_t* plain,
                           size_t* lexed) {
  std::string padded(src);
  padded.append(kPadding, '\0');
  const std::string_view text(padded.data(), src.size());
  const char q = text[quote];
  const bool triple = quote + 2 < text.size() && text[quote + 1] == q && text[quote + 2] == q;
  *plain = triple ? 0 : PlainFStringEnd(text.data(), quote + 1, q);
  bool raw = false, fmt = false, bytes = false;
  IsStringPrefix(text.data() + start, quote - start, &raw, &fmt, &bytes);
  TokenBuffer<Tok> toks;
  LexOutput out;
  Lexer lexer(text, start, &toks, &out);
  size_t after = 0;
  *lexed = lexer.LexStringAt(start, quote, raw, fmt, &after) ? after : 0;
}

void LexPythonComments(std::string_view src, size_t begin, LexOutput* out) {
  TokenBuffer<Tok> toks;
  Lexer(src, begin, &toks, out).Run();
  if (!out->noqa.empty()) IndentsOfTokens(src, begin, toks, out);
}

void ScanPython(const RuleSet& rules, std::string_view src, size_t begin, bool has_cr,
                LexOutput* out) {
  struct Scratch {  // Note [Thread-local scratch] in internal.h
    TokenBuffer<Tok> toks;
    FastScratch fast;
  };
  Scratch& scratch = ThreadScratch<Scratch>();
  TokenBuffer<Tok>& toks = scratch.toks;
  if (FastPathEnabled() && ScanPythonFast(rules, src, begin, has_cr, out, &toks, &scratch.fast)) {
    CountFastPathFile();
  } else {
    ScanPythonFull(rules, src, begin, out, &toks, &scratch.fast.resolver,
                   &scratch.fast.literals);
  }
  toks.Trim(size_t{1} << 22);  // do not hoard what a huge file took
}

}  // namespace anydev::scan::internal
