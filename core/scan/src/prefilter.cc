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
#include <unordered_set>
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
  // Duplicates first (a spelling per rule gives thousands of copies of a
  // handful of strings), keeping the first of each, in order: the
  // containment test below is then quadratic in the distinct ones only.
  std::vector<std::string> distinct;
  {
    std::unordered_set<std::string_view> seen;
    for (const std::string& n : needles) {  // (views of `needles`, which stays)
      if (seen.insert(n).second) distinct.push_back(n);
    }
  }
  for (size_t i = 0; i < distinct.size(); ++i) {
    bool redundant = false;
    for (size_t j = 0; j < distinct.size() && !redundant; ++j) {
      if (i != j) redundant = distinct[i].find(distinct[j]) != std::string::npos;
    }
    if (!redundant) needles_.push_back(distinct[i]);
  }
  min_len_ = needles_.empty() ? 0 : SIZE_MAX;
  max_len_ = 0;
  for (const std::string& n : needles_) {
    min_len_ = std::min(min_len_, n.size());
    max_len_ = std::max(max_len_, n.size());
  }
  // Note [Prefilter by the needle kernel]: FoundIn compares each 16 bytes
  // with each needle's first and last byte (about 2.2 instructions a byte
  // for the four Python needles, 45.0M of the 258.7M of scan_native on
  // Megatron-LM, where most files hold no needle and are read whole). The
  // fast paths' NeedleSearch classifies 32 bytes a step for all the needles
  // at once: ScanPadded asks it, its text being padded.
  if (needles_.empty() || needles_.size() > static_cast<size_t>(NeedleSearch::kMax)) return;
  auto owned = std::make_shared<const std::vector<std::string>>(needles_);
  auto search = std::make_shared<NeedleSearch>();
  for (const std::string& n : *owned) {
    if (!search->Add(n, false)) return;
  }
  search->Build();
  search_needles_ = std::move(owned);
  search_ = std::move(search);
}

void NeedleSet::SearchAsWords(const std::vector<std::string>& words,
                              const std::vector<std::string>& plain) {
  if (always_ || words.size() + plain.size() > static_cast<size_t>(NeedleSearch::kMax)) return;
  auto owned = std::make_shared<std::vector<std::string>>(words);
  owned->insert(owned->end(), plain.begin(), plain.end());
  auto search = std::make_shared<NeedleSearch>();
  for (size_t k = 0; k < owned->size(); ++k) {
    const std::string& n = (*owned)[k];
    if (n.empty() || !search->Add(n, k < words.size())) return;
  }
  search->Build();
  search_needles_ = std::move(owned);
  search_ = std::move(search);
}

bool NeedleSet::FoundInPadded(const char* p, size_t n) const {
  if (search_ == nullptr) return FoundIn(p, n);
  return search_->Next(p, 0, 0, n) < n;
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

// ---------------------------------------------------------------------------
// NeedleSearch: every match of a few needles (Note [Fast path] in
// python_scan.cc), Teddy-style. Each needle goes to one of 8 buckets; four
// 16-entry tables map the low and high nibble of a byte to the buckets whose
// needles can have that byte first (lo0/hi0) or second (lo1/hi1), and six
// the third (lo2/hi2), so one shuffle per nibble and table classifies 32
// bytes at once, and a position is a candidate when some bucket bit
// survives the three bytes (Note [Needle kernel]). Only candidates are
// compared whole.

#include <array>
#include <atomic>
#include <cstdlib>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ANYDEV_SCAN_HAVE_AVX2_KERNEL 1
#include <immintrin.h>
#endif

namespace anydev::scan::internal {

namespace {

// The buckets the needles that are no short whole word may take (Note
// [Buckets for whole words]).
constexpr int kPlainBuckets = 6;

// A rough frequency of each byte in source code, to pick the pair of a
// needle that is rarest (few candidates to verify).
constexpr int kLetters[26] = {75, 18, 40, 40, 110, 25, 20, 30, 70, 2,  10, 45, 30,
                              65, 65, 30, 2,  70, 70, 80, 35, 10, 10, 12, 15, 2};
constexpr int ByteFrequency(unsigned char c) {
  if (c >= 'a' && c <= 'z') return kLetters[c - 'a'];
  if (c >= 'A' && c <= 'Z') return 6;
  if (c >= '0' && c <= '9') return 10;
  switch (c) {
    case ' ': return 150;
    case '_': return 40;
    case '.': return 30;
    case '(': case ')': case ',': case '=': case '\n': return 25;
    default: return 8;
  }
}

constexpr std::array<uint16_t, 256> MakeFrequencies() {
  std::array<uint16_t, 256> f{};
  for (int c = 0; c < 256; ++c) f[c] = static_cast<uint16_t>(ByteFrequency(static_cast<unsigned char>(c)));
  return f;
}
constexpr std::array<uint16_t, 256> kFrequency = MakeFrequencies();

constexpr uint32_t SumOfFrequencies() {
  uint32_t sum = 0;
  for (uint16_t f : kFrequency) sum += f;
  return sum;
}

// Byte c (-1: any byte) let through where a bucket's nibbles are *lo and
// *hi, which admit `admitted` (their bytes' summed ByteFrequency): adds its
// nibbles, and returns what they admit then (Note [Buckets for whole
// words]).
inline uint32_t AdmitByte(int c, uint16_t* lo, uint16_t* hi, uint32_t admitted) {
  if (c < 0) {
    *lo = *hi = 0xFFFF;
    return SumOfFrequencies();
  }
  const unsigned l = static_cast<unsigned>(c) & 15, h = static_cast<unsigned>(c) >> 4;
  const bool new_l = (*lo >> l & 1) == 0, new_h = (*hi >> h & 1) == 0;
  // The bytes new: the low nibble's with each high one there, the high
  // nibble's with each low one, and c itself where both are new.
  if (new_l) {
    for (unsigned x = *hi; x != 0; x &= x - 1) admitted += kFrequency[__builtin_ctz(x) << 4 | l];
  }
  if (new_h) {
    for (unsigned x = *lo; x != 0; x &= x - 1) admitted += kFrequency[h << 4 | __builtin_ctz(x)];
  }
  if (new_l && new_h) admitted += kFrequency[c];
  *lo = static_cast<uint16_t>(*lo | 1u << l);
  *hi = static_cast<uint16_t>(*hi | 1u << h);
  return admitted;
}

// The identifier tables of Note [Word boundaries]: one class bit per
// distinct set of low nibbles that make an identifier byte with some high
// nibble (5 today; with more than 8 the tables stay empty: no filtering).
struct IdentTables {
  uint8_t lo[16] = {}, hi[16] = {};
};

IdentTables MakeIdentTables() {
  IdentTables t;
  uint16_t sets[8] = {};
  int classes = 0;
  for (int h = 0; h < 16; ++h) {
    uint16_t set = 0;
    for (int l = 0; l < 16; ++l) {
      if (IsIdentChar(static_cast<unsigned char>(h << 4 | l))) set |= static_cast<uint16_t>(1u << l);
    }
    if (set == 0) continue;
    int c = 0;
    while (c < classes && sets[c] != set) ++c;
    if (c == classes) {
      if (classes == 8) return IdentTables{};
      sets[classes++] = set;
    }
    t.hi[h] |= static_cast<uint8_t>(1u << c);
    for (int l = 0; l < 16; ++l) {
      if (set >> l & 1) t.lo[l] |= static_cast<uint8_t>(1u << c);
    }
  }
  return t;
}

}  // namespace

bool NeedleSearch::Add(std::string_view needle, bool word, bool cheap) {
  if (needle.empty() || count_ == kMax) return false;
  cheap = cheap && word;
  for (int k = 0; k < count_; ++k) {
    if (needles_[k].text == needle) {
      if (needles_[k].word && !word) {
        needles_[k].word = false;  // the weaker test serves both
        rebuild_ = true;           // its bucket may change: Build starts over
      }
      needles_[k].cheap = needles_[k].cheap && cheap && needles_[k].word;  // (no table changes)
      return true;
    }
  }
  // The rarest three bytes; a needle that holds a newline keeps offset 0, so that
  // a match never starts in a line before the one its fingerprint is in.
  // (Per file in the Python fast path, which adds the names each import
  // binds: the frequencies from kFrequency, the fingerprint and the head
  // copied whole.)
  const size_t len = needle.size();
  const unsigned char* const u = reinterpret_cast<const unsigned char*>(needle.data());
  uint8_t off = 0;
  if (len > 3) {
    bool newline = false;
    for (size_t k = 0; k < len; ++k) newline = newline || u[k] == '\n' || u[k] == '\r';
    uint32_t best = UINT32_MAX;
    for (size_t k = 0; !newline && k + 2 < len && k < 255; ++k) {
      const uint32_t score = uint32_t{kFrequency[u[k]]} * kFrequency[u[k + 1]] * kFrequency[u[k + 2]];
      if (score < best) {
        best = score;
        off = static_cast<uint8_t>(k);
      }
    }
  }
  Needle& n = needles_[count_++];
  n = Needle{needle, word, cheap, off, 0, 0, 0, 0};
  // The bytes a load of 4 at the fingerprint, of 8 at the start, holds.
  const size_t fp_len = std::min<size_t>(3, len - off), head_len = std::min<size_t>(8, len);
  std::memcpy(&n.fp, u + off, fp_len);
  n.fp_mask = (uint32_t{1} << (8 * fp_len)) - 1;
  std::memcpy(&n.head, u, head_len);
  n.head_mask = head_len == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * head_len)) - 1;
  return true;
}

// Note [Word boundaries]: a short alias such as `th` or `cd` is a whole-word
// needle that occurs inside many ordinary words (`with`, `the`, `method`), so
// most of its candidates fail the word test. Needles that are whole words of
// at most 3 bytes (their fingerprint starts at their first byte) go to
// buckets of their own, one length per bucket; where the classification
// finds candidates, the identifier bytes of the block (one more pair of
// nibble lookups on the bytes already split, exact by construction from
// IsIdentChar) drop the candidates of those buckets that have an identifier
// byte before them or right after their last byte. Verify still checks
// every candidate whole; the masks only spare it the ones that must fail.
//
// Note [Buckets for whole words]: the other needles take at most six of the
// eight buckets (kPlainBuckets), so that the short whole words the Python
// fast path adds after them (a file's `import torch as th`) find a bucket of
// their own left: where the other needles had taken every bucket, `th`
// shared one with, say, `xpu`, which then admitted `x` or `t`, then `p` or
// `h`, then any byte, and as the bucket was mixed the word filter could not
// drop the candidates of `the`, `ad...` and the like. Past six, a needle
// shares the bucket where it adds the fewest candidates: the product over
// the three fingerprint bytes of what the bucket's nibble tables admit,
// each byte weighed by ByteFrequency, grows least (nibbles_ and admitted_,
// kept as the tables are filled). Measured (callgrind, scan_native --jobs 1
// on the 20 MB GPU tree, nearly all of it the Python files' searches):
// NeedleSearch::Next 23.40M to 20.51M, Build 0.48M to 1.30M, the whole
// scan 172.64M to 170.53M; the emptiest such bucket rather than the
// cheapest, 21.40M and 0.54M; five buckets or seven, 20.59M or 21.68M
// (each with the first cost, computed at each choice); frequencies kept
// for every bucket, not only those of class 0, 0.4M more in Build. Which
// bucket a needle takes changes only which candidates Verify sees, never
// a match.
//
// A needle's bucket and bits depend only on the needles before it, so a
// Build after more Adds goes on from the first needle not built (the fast
// path's first search adds the names each import binds, and builds again),
// unless an Add weakened a needle built already (its class may change).
void NeedleSearch::Build() {
  if (rebuild_ || built_ == 0) {
    for (int t = 0; t < 16; ++t) lo0_[t] = hi0_[t] = lo1_[t] = hi1_[t] = lo2_[t] = hi2_[t] = 0;
    for (int b = 0; b < 8; ++b) {
      bucket_size_[b] = 0;
      bucket_class_[b] = -1;
    }
    std::memset(nibbles_, 0, sizeof(nibbles_));
    std::memset(admitted_, 0, sizeof(admitted_));
    static const IdentTables ident = MakeIdentTables();
    std::memcpy(ident_lo_, ident.lo, 16);
    std::memcpy(ident_hi_, ident.hi, 16);
    built_ = 0;
    rebuild_ = false;
    raw_ = true;
  }
  int plain = 0;  // the buckets of class 0
  for (int b = 0; b < 8; ++b) plain += bucket_class_[b] == 0;
  for (int k = built_; k < count_; ++k) {
    // Note [Raw low nibbles].
    const size_t len = needles_[k].text.size();
    raw_ = raw_ && (len >= 3 || (len == 2 && needles_[k].word));
    for (size_t q = 0; q < 3 && needles_[k].off + q < len; ++q) {
      raw_ = raw_ && static_cast<unsigned char>(needles_[k].text[needles_[k].off + q]) < 0x80;
    }
    const std::string_view n = needles_[k].text.substr(needles_[k].off);
    const int cls = needles_[k].word && needles_[k].off == 0 && n.size() <= 3
                        ? static_cast<int>(n.size())
                        : 0;
    // Fingerprint byte q, or -1 (any byte) past the needle's end.
    const auto byte = [&n](size_t q) {
      return n.size() > q ? static_cast<int>(static_cast<unsigned char>(n[q])) : -1;
    };
    // A needle shares the bucket of one with the same first fingerprint
    // byte and class (the nibble tables then admit only the second bytes'
    // mix), else takes an empty bucket (of the first six, for class 0:
    // Note [Buckets for whole words]), else the bucket of class 0 where it
    // adds the fewest candidates, or the emptiest of its class, else the
    // emptiest (which then holds a mix: no word filtering there).
    int b = -1;
    for (int j = 0; j < k && b < 0; ++j) {
      if (needles_[j].text[needles_[j].off] == n[0] &&
          bucket_class_[bucket_of_[j]] == cls) {
        b = bucket_of_[j];
      }
    }
    for (int c = 0; c < 8 && b < 0; ++c) {
      if (bucket_class_[c] < 0 && (cls != 0 || plain < kPlainBuckets)) b = c;
    }
    if (b < 0 && cls == 0) {
      uint64_t least = 0;
      for (int c = 0; c < 8; ++c) {
        if (bucket_class_[c] != 0) continue;
        uint64_t before = 1, after = 1;
        for (size_t q = 0; q < 3; ++q) {
          uint16_t lo = nibbles_[q][0][c], hi = nibbles_[q][1][c];
          before *= admitted_[q][c];
          after *= AdmitByte(byte(q), &lo, &hi, admitted_[q][c]);
        }
        if (b < 0 || after - before < least) {
          b = c;
          least = after - before;
        }
      }
    }
    for (int c = 0; c < 8 && b < 0; ++c) {
      if (bucket_class_[c] < 0) b = c;
    }
    for (int c = 0; c < 8 && b < 0; ++c) {
      if (bucket_class_[c] == cls && (b < 0 || bucket_size_[c] < bucket_size_[b])) b = c;
    }
    if (b < 0) {
      b = 0;
      for (int c = 1; c < 8; ++c) {
        if (bucket_size_[c] < bucket_size_[b]) b = c;
      }
    }
    if (bucket_class_[b] < 0) {
      bucket_class_[b] = static_cast<int8_t>(cls);
      plain += cls == 0;
    } else if (bucket_class_[b] != cls) {
      plain -= bucket_class_[b] == 0;
      bucket_class_[b] = 4;
    }
    bucket_of_[k] = static_cast<uint8_t>(b);
    bucket_[b][bucket_size_[b]++] = static_cast<uint8_t>(k);
    const uint8_t bit = static_cast<uint8_t>(1u << b);
    // Its three fingerprint bytes; any byte past its end.
    uint8_t* lo[3] = {lo0_, lo1_, lo2_};
    uint8_t* hi[3] = {hi0_, hi1_, hi2_};
    for (size_t q = 0; q < 3; ++q) {
      const int c = byte(q);
      if (bucket_class_[b] == 0) {  // (only theirs are asked)
        admitted_[q][b] = AdmitByte(c, &nibbles_[q][0][b], &nibbles_[q][1][b], admitted_[q][b]);
      }
      if (c >= 0) {
        lo[q][c & 15] |= bit;
        hi[q][c >> 4] |= bit;
      } else {
        for (int t = 0; t < 16; ++t) {
          lo[q][t] |= bit;
          hi[q][t] |= bit;
        }
      }
    }
  }
  built_ = count_;
  for (int q = 0; q < 3; ++q) word_bits_[q] = 0;
  for (int b = 0; b < 8; ++b) {
    if (bucket_class_[b] >= 1 && bucket_class_[b] <= 3) {
      word_bits_[bucket_class_[b] - 1] |= static_cast<uint8_t>(1u << b);
    }
  }
  words_ = static_cast<uint8_t>(word_bits_[0] | word_bits_[1] | word_bits_[2]);
  std::memset(other_, static_cast<uint8_t>(~words_), sizeof(other_));
  for (int q = 0; q < 3; ++q) std::memset(word_v_[q], word_bits_[q], sizeof(word_v_[q]));
#if defined(ANYDEV_SCAN_HAVE_AVX2_KERNEL)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  avx2_ = avx2;
#endif
  ChooseKernel();
}

// Inline, and without a call (the bytes past the first 8 compared in a
// loop, not by memcmp): the AVX2 loop calls it, and a call there would
// clobber every vector register (Note [Needle kernel]).
// Note [Cheap names] in python_scan.cc: where a cheap name's match binds
// nothing and starts no alias, as CheapHit there reads it, for the cases
// that need no more than its neighbours on its line: it is passed over in
// the search, with no return (CheapHit asks the rest).
//
// Note [Cheap names at a line's start and after '=']: of the 13,963 matches
// of `torch` the search returned to CheapHit on Megatron-LM's Python files
// (each a return, a call and a restart of the kernel: about 370
// instructions), 10,137 were `x = torch.a(...)` and 2,912 a line that starts
// `torch.a`; both bind nothing (no alias: the chain after '=' does not end
// the statement; a name followed by '.' is no target), so they are passed
// here too. A line's start is one where no continuation ('\\' before the
// newline) joins it to the line before: CheapHit walks back over those.
inline bool CheapSkip(const unsigned char* u, size_t begin, size_t pos, size_t len) {
  const auto space = [](unsigned char b) { return b == ' ' || b == '\t' || b == '\f'; };
  size_t j = pos;
  while (j > begin && space(u[j - 1])) --j;
  unsigned char prev = '\n';
  if (j > begin) {
    prev = u[j - 1];
    if (prev == '.') return true;  // an attribute
    if (prev == '\n' || prev == '\r') {
      size_t q = j - 1;  // the newline: \n, \r\n or \r
      if (prev == '\n' && q > begin && u[q - 1] == '\r') --q;
      if (q > begin && u[q - 1] == '\\') return false;  // a continuation: CheapHit's
      prev = '\n';
    }
  }
  size_t k = pos + len;
  while (space(u[k])) ++k;
  if (prev == '=') {
    // `x = name.a.b` ending its statement is an alias (CheapHit's test; the
    // padding's NUL ends every run).
    size_t e = k;
    while (u[e] == '.') {
      ++e;
      while (space(u[e])) ++e;
      if (!IsIdentStart(u[e])) break;
      while (IsIdentChar(u[e])) ++e;
      while (space(u[e])) ++e;
    }
    const unsigned char after = u[e];
    if (after == '\n' || after == '\r' || after == ';' || after == '#' || after == '\0' ||
        after == '\\') {
      return false;
    }
    return u[k] == '.';
  }
  if (u[k] == '.') return true;
  if (prev == '\n') return false;
  if (u[k] == '=' && u[k + 1] != '=') return false;
  if (prev == '(' || prev == ',' || prev == '*' || prev == ';' || IsIdentChar(prev)) return false;
  return true;
}

__attribute__((always_inline)) inline size_t NeedleSearch::Verify(const char* p, size_t begin,
                                                                  size_t from, size_t at,
                                                                  size_t end,
                                                                  unsigned buckets) const {
  size_t found = SIZE_MAX;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  // p[at, at + 4) is readable: at < end, and the padding follows end.
  uint32_t here;
  std::memcpy(&here, p + at, 4);
  for (; buckets != 0; buckets &= buckets - 1) {
    const int b = __builtin_ctz(buckets);
    for (int i = 0; i < bucket_size_[b]; ++i) {
      const Needle& n = needles_[bucket_[b][i]];
      if ((here & n.fp_mask) != n.fp) continue;
      const size_t pos = at - n.off;
      const size_t len = n.text.size();
      if (at < from + n.off || pos >= found || pos + len > end) continue;
      if (n.word && ((pos > begin && IsIdentChar(u[pos - 1])) || IsIdentChar(u[pos + len]))) {
        continue;
      }
      if (n.cheap && CheapSkip(u, begin, pos, len)) continue;
      if (len > 3) {
        // p[pos, pos + 8) is readable: pos + len <= end.
        uint64_t head;
        std::memcpy(&head, p + pos, 8);
        if ((head & n.head_mask) != n.head) continue;
        size_t k = 8;
        while (k < len && p[pos + k] == n.text[k]) ++k;
        if (k < len) continue;
      }
      found = pos;
    }
  }
  return found;
}

size_t NeedleSearch::NextScalar(const char* p, size_t begin, size_t from, size_t i,
                                size_t end) const {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  for (; i < end; ++i) {
    const unsigned b = static_cast<unsigned>(lo0_[u[i] & 15] & hi0_[u[i] >> 4] &
                                             lo1_[u[i + 1] & 15] & hi1_[u[i + 1] >> 4] &
                                             lo2_[u[i + 2] & 15] & hi2_[u[i + 2] >> 4]);
    if (b == 0) continue;
    const size_t pos = Verify(p, begin, from, i, end, b);
    if (pos != SIZE_MAX) return pos;
  }
  return end;
}

#if defined(ANYDEV_SCAN_HAVE_AVX2_KERNEL)
namespace {

// The 32 bytes of x one byte position later, the bytes before them from
// `prev` (the block before): byte j of the result is byte j - k of the 64
// bytes prev:x (k = 1 or 2).
template <int k>
__attribute__((target("avx2"))) inline __m256i ShiftIn(__m256i prev, __m256i x) {
  return _mm256_alignr_epi8(x, _mm256_permute2x128_si256(prev, x, 0x21), 16 - k);
}

// A 16-byte table in both lanes.
__attribute__((target("avx2"))) inline __m256i Table(const uint8_t* t) {
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
}

// Bit j: byte j of v is not zero.
__attribute__((target("avx2"))) inline uint32_t NonZero(__m256i v) {
  return ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256())));
}

// Bit j: byte j of v is zero.
__attribute__((target("avx2"))) inline uint32_t Zero(__m256i v) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256())));
}

alignas(32) constexpr uint8_t kNibbles[32] = {
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15};

struct Classes {
  __m256i lo0, hi0, lo1, hi1, lo2, hi2;
  const uint8_t* nib;  // kNibbles, read where used (a register fewer)
};

// The candidates of the 32 bytes at s (Note [Needle kernel]) are the bits
// of the result and *t2 together (vptest ANDs them: one vpand fewer a
// block); *prev0 and *prev1 become the block's own classes.
template <bool kRaw>
__attribute__((target("avx2"))) inline __m256i Candidates(const Classes& k, const char* s,
                                                          __m256i* prev0, __m256i* prev1,
                                                          __m256i* t2) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
  const __m256i nib = _mm256_load_si256(reinterpret_cast<const __m256i*>(k.nib));
  const __m256i vlo = kRaw ? v : _mm256_and_si256(v, nib);  // Note [Raw low nibbles]
  const __m256i vhi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
  const __m256i t0 = _mm256_and_si256(_mm256_shuffle_epi8(k.lo0, vlo), _mm256_shuffle_epi8(k.hi0, vhi));
  const __m256i t1 = _mm256_and_si256(_mm256_shuffle_epi8(k.lo1, vlo), _mm256_shuffle_epi8(k.hi1, vhi));
  *t2 = _mm256_and_si256(_mm256_shuffle_epi8(k.lo2, vlo), _mm256_shuffle_epi8(k.hi2, vhi));
  const __m256i c = _mm256_and_si256(ShiftIn<2>(*prev0, t0), ShiftIn<1>(*prev1, t1));
  *prev0 = t0;
  *prev1 = t1;
  return c;
}

// A 32-byte constant of the object, loaded where it is used.
__attribute__((target("avx2"))) inline __m256i Vector(const uint8_t* v) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
}

}  // namespace

// Note [Needle kernel]: one load per 32 bytes. The three fingerprint bytes'
// classes (t0, t1, t2) are taken at the same positions and aligned by
// shifting t0 by two bytes and t1 by one (the bytes shifted in are the
// block before's: ShiftIn), so bit j of a block at i says that p[i + j - 2,
// i + j + 1) can be a fingerprint: the candidate at = i + j - 2, in order of
// at, as the scalar loop meets them. One vptest per block says whether
// there is any candidate; only then are the masks made. The first block's
// "block before" is zero, so no candidate starts before `from`. Nothing in
// the loop calls a function (Verify is inlined and calls nothing): a call
// clobbers every vector register, and the compiler then keeps the tables on
// the stack and loads them at each block; the loop is written out for four
// blocks a round (each tested on its own), which spares the register copies
// of the classes carried from block to block; a block with a candidate is
// loaded again for its identifier bytes, as keeping it made GCC store it at
// every block. The order of candidates is the order of `at`, not of the
// start of their needles: where a needle can begin inside another's
// occurrence before that one's fingerprint (the needles "namespace",
// fingerprint "pac", and "ames", "ame"), the one whose fingerprint comes
// first is the match reported, as before this kernel (none of the scanners'
// needle sets can: their needles are identifier bytes and the short ones
// whole words). Measured (callgrind, scan_native --jobs 1 on the 20 MB GPU
// corpus of bench_vs_rg.py, NeedleSearch::Next inclusive): its C++ files
// 8.98M instructions before (three loads and three nibble splits a block, a
// movemask each, the tables spilled around the call to Verify), 8.22M with
// one load, one test and no call, 7.86M with the block loaded again, 7.13M
// with two blocks a round; its Python files 30.3M, 27.3M, 26.8M, 25.6M.
// What did not pay: two blocks a round with one test for both (the first
// block holds the hit on this corpus: 8.45M, 29.3M against 8.22M, 27.3M),
// the block loop in a function of its own (the call per candidate block:
// 7.67M but 35.2M), two fingerprint bytes instead of three (the three
// chosen are not the rarest pair: 21.0M, 39.9M).
// Later (the same measure; C/C++ files 7.13M, Python files 21.66M before):
// the loop walking a pointer against limits made once (p and end had been
// kept on the stack: 50 instructions each 64 bytes, 42 after), vptest(c,
// t2) doing the last AND (made only for a block with a candidate), the
// word filter reading its identifier bits from p[i - 3, i + 29) and its
// masks from the object rather than building them: 6.24M, 19.30M; the
// filter's start-of-text case behind a branch and its kept mask as one
// complement: 6.18M, 18.76M; Note [Raw low nibbles]: 6.00M, 18.40M; four
// blocks a round, the 0x0F mask read from memory (for want of registers
// GCC made it again with movabs/vmovq/vpbroadcastq at each round): 5.84M,
// 17.98M; the kernel chosen by Build (Next's one switch): 5.82M, 17.92M. Dropped: Verify walking copies of the needles laid out bucket by
// bucket (no index to follow): Next 0.22M fewer on the Python files, but
// Build and the fast path's per-file copy of the search 0.24M more.
//
// Note [Raw low nibbles]: vpshufb reads the low four bits of each index
// byte, and gives 0 where its top bit is set, so the low-nibble lookups may
// take the bytes themselves (no vpand with 0x0F: 19 instructions a block
// instead of 20) where a byte >= 0x80 must have no bucket bit anyway: where
// no needle has such a byte among its three fingerprint bytes, and the only
// classes that admit any byte ("any byte past its end", Build) are the
// third of whole-word needles of 2 bytes, where that byte is the one after
// the word, and a byte >= 0x80 is an identifier byte (IsIdentChar), so no
// match can have it there. A needle of 1 byte (its third byte is not next
// to it) or of 2 not a whole word, or a fingerprint byte >= 0x80, and Build
// clears raw_. Measured (as in Note [Needle kernel]): C/C++ files 6.18M ->
// 6.00M, Python files 18.76M -> 18.40M (all their searches raw).
template <bool kRaw, bool kWords2>
__attribute__((target("avx2"))) size_t NeedleSearch::NextAvx2(const char* p, size_t begin,
                                                                size_t from, size_t end) const {
  // (kNibbles hidden from GCC, which would make the constant in a register
  // at each round of the block loop.)
  const uint8_t* nibbles = kNibbles;
  __asm__("" : "+r"(nibbles));
  const Classes k{Table(lo0_), Table(hi0_), Table(lo1_), Table(hi1_), Table(lo2_), Table(hi2_),
                  nibbles};
  const unsigned words = words_;
  // Bit j: p[j] is an identifier byte, for the 32 bytes at p.
  const auto ident_bits = [this, nibbles](const char* at) __attribute__((target("avx2"))) {
    __asm__("" : "+r"(at));
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    const __m256i nib = Vector(nibbles);
    return NonZero(_mm256_and_si256(
        _mm256_shuffle_epi8(Table(ident_lo_), _mm256_and_si256(v, nib)),
        _mm256_shuffle_epi8(Table(ident_hi_), _mm256_and_si256(_mm256_srli_epi16(v, 4), nib))));
  };
  __m256i prev0 = _mm256_setzero_si256(), prev1 = _mm256_setzero_si256();
  // Reads s[0, 32): within the padding while s + 16 <= p + end. `four`,
  // `two` and `last` are the last blocks that leave room for four, two and
  // one.
  // (As addresses: p + end - 48 may lie before p.)
  const char* s = p + from;
  const uintptr_t last = reinterpret_cast<uintptr_t>(p) + end - 16;
  const uintptr_t two = last - 32, four = last - 96;
  for (;; s += 32) {
    // The next block with a candidate: four a round while they are there,
    // each tested on its own (the round written out spares the copies of
    // prev0 and prev1 from one block to the next).
    __m256i c, t2;
    for (;;) {
      if (reinterpret_cast<uintptr_t>(s) <= four) {
        c = Candidates<kRaw>(k, s, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) break;
        c = Candidates<kRaw>(k, s + 32, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) {
          s += 32;
          break;
        }
        c = Candidates<kRaw>(k, s + 64, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) {
          s += 64;
          break;
        }
        c = Candidates<kRaw>(k, s + 96, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) {
          s += 96;
          break;
        }
        s += 128;
      } else if (reinterpret_cast<uintptr_t>(s) <= two) {
        c = Candidates<kRaw>(k, s, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) break;
        c = Candidates<kRaw>(k, s + 32, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) {
          s += 32;
          break;
        }
        s += 64;
      } else if (reinterpret_cast<uintptr_t>(s) <= last) {
        c = Candidates<kRaw>(k, s, &prev0, &prev1, &t2);
        if (!_mm256_testz_si256(c, t2)) break;
        s += 32;
      } else {
        // The blocks covered the candidates before s - 2.
        const size_t i = static_cast<size_t>(s - p);
        return NextScalar(p, begin, from, i > from + 2 ? i - 2 : from, end);
      }
    }
    c = _mm256_and_si256(c, t2);
    const size_t i = static_cast<size_t>(s - p);
    unsigned mask;
    if (!kWords2 && words == 0) {
      mask = NonZero(c);
    } else {
      // Note [Word boundaries]: bit j of id is set when p[i + j - 3] is an
      // identifier byte (what lies before `begin` counts as none, as no
      // byte is there: the block is then read from `begin` and shifted).
      // (The block loaded again: kept from the loop above, GCC copies it
      // to the stack at every block.)
      unsigned id;
      if (__builtin_expect(i >= begin + 3, 1)) {
        id = ident_bits(s - 3);
      } else {
        id = ident_bits(p + begin) << (begin + 3 - i);
      }
      // The candidate of bit j starts at i + j - 2: an identifier byte
      // before it (p[i + j - 3], bit j of id), and after a needle of length
      // q + 1 there (p[i + j - 1 + q], bit j + q + 2; past the block:
      // taken as none). Kept: a candidate of the other buckets, or of a
      // word bucket with neither; with Z(x) the bytes of x that are zero,
      // the complement of Z(c & other) & AND_q (Z(c & word_q) | bad_q).
      unsigned dropped = Zero(_mm256_and_si256(c, Vector(other_)));
      if (kWords2) {  // (the Python fast path's: 0.43M fewer on the 20 MB GPU tree)
        dropped &= Zero(_mm256_and_si256(c, Vector(word_v_[1]))) | id | id >> 3;
      } else {
        for (int q = 0; q < 3; ++q) {
          if (word_bits_[q] == 0) continue;
          dropped &= Zero(_mm256_and_si256(c, Vector(word_v_[q]))) | id | id >> (q + 2);
        }
      }
      mask = ~dropped;
      if (mask == 0) continue;
    }
    uint8_t bytes[32];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(bytes), c);
    for (; mask != 0; mask &= mask - 1) {
      const unsigned j = static_cast<unsigned>(__builtin_ctz(mask));
      const size_t at = i + j - 2;  // (j >= 2 in the first block: prev0 is zero there)
      if (at >= end) return end;
      const size_t pos = Verify(p, begin, from, at, end, bytes[j]);
      if (pos != SIZE_MAX) return pos;
    }
  }
}
#else
template <bool kRaw, bool kWords2>
size_t NeedleSearch::NextAvx2(const char* p, size_t begin, size_t from, size_t end) const {
  return NextScalar(p, begin, from, from, end);
}
#endif

// (Here, after NextAvx2's definition: its address taken before it, GCC
// instantiates it without its target attribute.)
void NeedleSearch::ChooseKernel() {
  const bool words2 = word_bits_[1] != 0 && word_bits_[0] == 0 && word_bits_[2] == 0;
  kernel_ = count_ == 0 ? &NeedleSearch::NextNone
            : !avx2_    ? &NeedleSearch::NextScalarFrom
            : !raw_     ? &NeedleSearch::NextAvx2<false>
            : words2    ? &NeedleSearch::NextAvx2<true, true>
                        : &NeedleSearch::NextAvx2<true>;
}

size_t NeedleSearch::Next(const char* p, size_t begin, size_t from, size_t end) const {
  if (from >= end) return end;
  return (this->*kernel_)(p, begin, from, end);
}

namespace {
std::atomic<int> fast_path_mode{-1};
}  // namespace

bool FastPathEnabled() {
  const int mode = fast_path_mode.load(std::memory_order_relaxed);
  if (mode >= 0) return mode != 0;
  static const bool from_env = [] {
    const char* v = std::getenv("ANYDEV_SCAN_FULL_LEXER");
    return !(v != nullptr && *v != '\0' && std::string_view(v) != "0");
  }();
  return from_env;
}

void SetFastPathForTesting(int mode) { fast_path_mode.store(mode, std::memory_order_relaxed); }

namespace {
std::atomic<uint64_t> fast_path_files{0};
}  // namespace

uint64_t FastPathFilesForTesting() { return fast_path_files.load(std::memory_order_relaxed); }
void CountFastPathFile() { fast_path_files.fetch_add(1, std::memory_order_relaxed); }

}  // namespace anydev::scan::internal
