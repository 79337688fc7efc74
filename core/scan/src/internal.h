// Internal to core/scan: what the two lexers share with the driver.
#ifndef ANYDEV_SCAN_INTERNAL_H_
#define ANYDEV_SCAN_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/scan.h"

namespace anydev::scan::internal {

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

// Everything one lexer run produces for one file. A lexer stops at its first
// error; findings at or after `error_offset` are dropped by the caller.
struct LexOutput {
  std::vector<RawFinding> findings;
  std::vector<Suppression> suppressions;
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

// Lexes and resolves `src[begin, end)` (begin skips a BOM).
void ScanPython(const RuleSet& rules, std::string_view src, size_t begin, LexOutput* out);
void ScanCpp(const RuleSet& rules, std::string_view src, size_t begin, LexOutput* out);

// Records the marker if the comment `text` (starting at `offset`) holds one.
void NoteComment(std::string_view text, uint32_t offset, LexOutput* out);

// The lexers read past the end of their input: `src` must be followed by
// kPadding zero bytes (which the input itself never contains: a file with a
// NUL byte is not lexed). ScanPadded is ScanSource for such a buffer.
constexpr size_t kPadding = 16;
FileResult ScanPadded(const RuleSet& rules, Language language, std::string_view src);

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
