// RuleSet: the spellings of the rules, indexed for exact lookup of qualified
// names, their first components and their namespace prefixes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "anydev/scan.h"
#include "literal_rules.h"
#include "internal.h"

namespace anydev::scan {

namespace {

std::string_view Separator(Language language) {
  return language == Language::kPython ? "." : "::";
}

int CountComponents(std::string_view s, std::string_view sep) {
  int n = 1;
  for (size_t p = s.find(sep); p != std::string_view::npos; p = s.find(sep, p + sep.size())) ++n;
  return n;
}

}  // namespace

// Note [Rule tables]: the scanners ask the RuleSet about every qualified
// name they resolve (Find, for each of its prefixes, longest first), every
// root of an import (IsRoot) and more: about 35,000 questions on the 20 MB
// GPU tree, where std::unordered_map<std::string_view, ...> cost 3M
// instructions (libstdc++'s murmur hash of the whole key, 86 a call, then a
// chain of nodes and a memcmp). A key here is its length and two 8-byte
// words, its first and its last eight bytes (fewer: the first and last four,
// or three single bytes, so that the words and the length tell keys of up to
// 16 bytes apart); the words hash it and compare it, and only the middle of a
// longer key is compared, eight bytes at a time. The tables are open-addressed
// (linear probing, at most a quarter full) and built once, with the RuleSet:
// the questions cost 2.0M now.
class ViewTable {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  ViewTable() : slots_(16) {}

  // Adds `key` (whose bytes must outlive the table) with `value` unless it
  // is there; returns the value the key has.
  uint32_t Insert(std::string_view key, uint32_t value) {
    if (4 * (count_ + 1) > slots_.size()) Grow();  // at most a quarter full: short probes
    Slot probe;
    Words(key.data(), key.size(), &probe.head, &probe.tail);
    probe.data = key.data();
    probe.size = static_cast<uint32_t>(key.size());
    probe.value = value;
    for (size_t i = Home(probe.head, probe.tail, key.size());; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kAbsent) {
        s = probe;
        ++count_;
        return value;
      }
      if (Same(s, key.data(), key.size(), probe.head, probe.tail)) return s.value;
    }
  }

  // The value of `key`, or kAbsent. (Out of line: inlined, its registers
  // made every caller save and restore five, where most return before it.)
  [[gnu::noinline]] uint32_t Get(std::string_view key) const {
    const char* const p = key.data();
    const size_t n = key.size();
    uint64_t head, tail;
    Words(p, n, &head, &tail);
    for (size_t i = Home(head, tail, n);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      // (An empty slot has no key's words: one with the empty key's ends
      // the probe as an empty slot would, and answers kAbsent.)
      if (Same(s, p, n, head, tail) || s.value == kAbsent) return s.value;
    }
  }

  bool Contains(std::string_view key) const { return Get(key) != kAbsent; }

 private:
  struct Slot {
    uint64_t head = 0, tail = 0;
    const char* data = nullptr;
    uint32_t size = 0;
    uint32_t value = kAbsent;  // kAbsent: an empty slot
  };

  static void Words(const char* p, size_t n, uint64_t* head, uint64_t* tail) {
    if (n >= 8) {
      std::memcpy(head, p, 8);
      std::memcpy(tail, p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      *head = a;
      *tail = b;
    } else {
      *head = n == 0 ? 0
                     : static_cast<unsigned char>(p[0]) |
                           static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
                           static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
      *tail = 0;
    }
  }

  // (Keys of 4 GiB are not asked about: a file that large is not scanned.)
  static bool Same(const Slot& s, const char* p, size_t n, uint64_t head, uint64_t tail) {
    if (s.size != n || s.head != head || s.tail != tail) return false;
    // The bytes between the words, eight at a time (the last eight are
    // `tail`): most spellings are 17 to 40 bytes, a memcmp call's worth.
    for (size_t i = 8; i + 8 < n; i += 8) {
      uint64_t x, y;
      std::memcpy(&x, s.data + i, 8);
      std::memcpy(&y, p + i, 8);
      if (x != y) return false;
    }
    return true;
  }

  size_t Home(uint64_t head, uint64_t tail, size_t n) const {
    const uint64_t h = (head ^ (tail << 31 | tail >> 33) ^ n) * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(h >> shift_);
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    shift_ = 64 - __builtin_ctzll(slots_.size());
    for (const Slot& s : old) {
      if (s.value == kAbsent) continue;
      size_t i = Home(s.head, s.tail, s.size);
      while (slots_[i].value != kAbsent) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
  size_t mask_ = 15;
  int shift_ = 60;
};

struct RuleSet::Index {
  struct PerLanguage {
    std::vector<Spelling> spelling_list;  // what `spellings` numbers
    ViewTable spellings;
    ViewTable roots;
    uint64_t root_bytes[256] = {};  // as last_bytes, for the roots' first bytes
    std::vector<std::string_view> root_list;  // the roots, once each (views of rules_)
    ViewTable namespaces;  // the value: the namespace's index in followers
    // By namespace: the components that follow it in the spellings.
    std::vector<std::vector<std::string_view>> followers;
    ViewTable components;
    // A quick filter before hashing, by first byte and length.
    uint32_t first_bytes[256] = {};  // bit min(len, 31) for each component's length
    // Find's: by a spelling's last byte, bit min(len, 63) for its length. Most
    // of what Find is asked (every prefix of a chain, longest first) is no
    // spelling, and this answers most of those without hashing.
    uint64_t last_bytes[256] = {};
    internal::NeedleSet needles;

    // Find past its filter (out of line: Find's filter, which answers most
    // calls, then needs no frame, and this is its tail call).
    [[gnu::noinline]] const Spelling* FindSpelling(std::string_view qualified) const {
      const uint32_t k = spellings.Get(qualified);
      return k == ViewTable::kAbsent ? nullptr : &spelling_list[k];
    }
  };
  PerLanguage lang[2];
  // Literal rules: the rule of each detector (-1: none), and per language
  // whether any is present and the needles they need.
  int detector_rule[internal::kDetectorCount];
  bool has_detectors[2] = {false, false};
  std::vector<std::string> needles[2];
  // The fast path's needles (BuildNeedles), and whether it may run.
  std::vector<std::string> fast_needles[2];
  bool fast_path[2] = {false, false};
  // The same as whole words and as the rules' own needles (FastPathWords).
  std::vector<std::string> fast_words[2], fast_plain[2];
};

RuleSet::RuleSet(std::vector<Rule> rules) : rules_(std::move(rules)), index_(new Index) {
  IndexDetectors();
  // By language, the namespaces and followers paired so far (numbered).
  ViewTable followed[2];
  uint32_t pairs = 0;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    Index::PerLanguage& li = index_->lang[static_cast<int>(r.language)];
    const std::string_view sep = Separator(r.language);
    for (const std::string& s : r.spellings) {
      const std::string_view text = s;  // owned by rules_, which never moves again
      const int n = CountComponents(text, sep);
      if (li.spellings.Insert(text, static_cast<uint32_t>(li.spelling_list.size())) ==
          li.spelling_list.size()) {
        li.spelling_list.push_back(Spelling{static_cast<int>(i), text, n});
      }
      if (!text.empty()) {
        li.last_bytes[static_cast<unsigned char>(text.back())] |=
            uint64_t{1} << (text.size() < 63 ? text.size() : 63);
      }
      int& max = max_components_[static_cast<int>(r.language)];
      max = std::max(max, n);
      const std::string_view root = text.substr(0, text.find(sep));
      if (li.roots.Insert(root, static_cast<uint32_t>(li.root_list.size())) ==
          li.root_list.size()) {
        li.root_list.push_back(root);
      }
      if (!root.empty()) {
        li.root_bytes[static_cast<unsigned char>(root[0])] |=
            uint64_t{1} << (root.size() < 63 ? root.size() : 63);
      }
      for (size_t b = 0;;) {
        const size_t e = text.find(sep, b);
        const std::string_view comp = text.substr(b, e == std::string_view::npos ? e : e - b);
        li.components.Insert(comp, 0);
        if (!comp.empty()) {
          li.first_bytes[static_cast<unsigned char>(comp[0])] |=
              1u << (comp.size() < 31 ? comp.size() : 31);
        }
        if (e == std::string_view::npos) break;
        b = e + sep.size();
      }
      for (size_t p = text.find(sep); p != std::string_view::npos;
           p = text.find(sep, p + sep.size())) {
        // (A view into rules_, as the spellings are.)
        const uint32_t ns = li.namespaces.Insert(text.substr(0, p),
                                                 static_cast<uint32_t>(li.followers.size()));
        if (ns == li.followers.size()) li.followers.emplace_back();
        std::string_view next = text.substr(p + sep.size());
        next = next.substr(0, next.find(sep));
        // (The spelling up to `next` names the pair: a namespace has
        // hundreds of followers, too many to look through for each.)
        if (!next.empty() &&
            followed[static_cast<int>(r.language)].Insert(
                text.substr(0, p + sep.size() + next.size()), pairs) == pairs) {
          li.followers[ns].push_back(next);
          ++pairs;
        }
      }
    }
  }
  BuildNeedles();
}

// Note [Needles]: for each spelling of a rule that can report (not kept)
// and has no needles of its own, the component of it that the most such
// spellings share, ties going to the longer (the rarer in source) one; its
// first component only when it has no other.
void RuleSet::BuildNeedles() {
  for (int l = 0; l < 2; ++l) {
    const Language language = static_cast<Language>(l);
    const std::string_view sep = Separator(language);
    std::vector<std::string_view> comps;  // one spelling's, reused
    auto components = [&](std::string_view text) {
      comps.clear();
      for (size_t b = 0;;) {
        const size_t e = text.find(sep, b);
        comps.push_back(text.substr(b, e == std::string_view::npos ? e : e - b));
        if (e == std::string_view::npos) break;
        b = e + sep.size();
      }
    };
    // By component: how many spellings have it (`count`, numbered by `shared`).
    ViewTable shared;
    std::vector<int> count;
    auto shared_by = [&](std::string_view c) {
      const uint32_t k = shared.Get(c);
      return k == ViewTable::kAbsent ? 0 : count[k];
    };
    for (const Rule& r : rules_) {
      if (r.language != language || r.kept || !r.needles.empty()) continue;
      for (const std::string& s : r.spellings) {
        components(s);
        std::sort(comps.begin(), comps.end());
        comps.erase(std::unique(comps.begin(), comps.end()), comps.end());
        for (std::string_view c : comps) {
          const uint32_t k = shared.Insert(c, static_cast<uint32_t>(count.size()));
          if (k == count.size()) count.push_back(0);
          ++count[k];
        }
      }
    }
    std::vector<std::string> needles;
    // The fast path's (Note [Fast path] in python_scan.cc): a spelling's
    // component is in the line of each finding of it, where a rule's own
    // needles are only somewhere in the file; so both.
    std::vector<std::string> fast;
    // (Deduplicated as added, in order; no containment: `cuda` as a word
    // does not cover `is_cuda` as one.)
    std::vector<std::string>& words = index_->fast_words[l];
    std::vector<std::string>& plain = index_->fast_plain[l];
    const auto add_once = [](std::vector<std::string>* to, std::string_view n) {
      if (std::find(to->begin(), to->end(), n) == to->end()) to->emplace_back(n);
    };
    for (const Rule& r : rules_) {
      if (r.language != language || r.kept) continue;
      if (!r.needles.empty()) {
        needles.insert(needles.end(), r.needles.begin(), r.needles.end());
        fast.insert(fast.end(), r.needles.begin(), r.needles.end());
        for (const std::string& n : r.needles) add_once(&plain, n);
      }
      if (!r.detector.empty()) {  // a literal rule: its detector's needle
        const int d = internal::DetectorByName(r.detector);
        if (d >= 0 && r.needles.empty()) needles.emplace_back(internal::kDetectors[d].needle);
        if (d >= 0) fast.emplace_back(internal::kDetectors[d].needle);
        if (d >= 0) add_once(&words, internal::kDetectors[d].needle);
        if (d >= 0 && !internal::kDetectors[d].also.empty()) {
          add_once(&words, internal::kDetectors[d].also);
        }
        // The statement form of the availability idiom spans the lines
        // after its `if`, which holds no needle where it asks
        // torch.accelerator and the accelerator's rows are not selected:
        // its chain's last name is a word too (Note [Cheap names] in
        // python_scan.cc: `torch` is searched no more).
        if (r.detector == "py.availability_statement") {
          add_once(&words, "is_available");
          add_once(&words, "device_count");
        }
        continue;
      }
      for (const std::string& s : r.spellings) {
        components(s);
        std::string_view best = comps[0];
        for (size_t k = 1; k < comps.size(); ++k) {
          const std::string_view c = comps[k];
          if (c.empty()) continue;
          if (k == 1 && best == comps[0]) {
            best = c;
            continue;
          }
          const int a = shared_by(c), b = shared_by(best);
          if (a > b || (a == b && c.size() > best.size())) best = c;
        }
        if (r.needles.empty()) needles.emplace_back(best);
        fast.emplace_back(best);
        add_once(&words, best);
      }
    }
    index_->lang[l].needles = internal::NeedleSet(std::move(needles));
    const internal::NeedleSet fast_set(std::move(fast));
    index_->fast_needles[l] = fast_set.always() ? std::vector<std::string>() : fast_set.needles();
    index_->fast_path[l] = !fast_set.always() && !fast_set.needles().empty();
    // A file holds a finding only where it holds a rule's word as a word
    // (Note [Needles as words] in python_scan.cc, Note [C++ needles as
    // words] in cpp_scan.cc): `cuda_graph`, `cudaStream_t` alone are no
    // reason to read it.
    if (index_->fast_path[l] && !words.empty()) {
      index_->lang[l].needles.SearchAsWords(words, plain);
    }
  }
}

bool RuleSet::MayMatch(Language language, std::string_view text) const {
  return index_->lang[static_cast<int>(language)].needles.FoundIn(text.data(), text.size());
}

const std::vector<std::string>& RuleSet::FastPathWords(Language language) const {
  return index_->fast_words[static_cast<int>(language)];
}

const std::vector<std::string>& RuleSet::FastPathPlain(Language language) const {
  return index_->fast_plain[static_cast<int>(language)];
}

const std::vector<std::string_view>& RuleSet::Roots(Language language) const {
  return index_->lang[static_cast<int>(language)].root_list;
}

bool RuleSet::MayMatchPadded(Language language, std::string_view text) const {
  return index_->lang[static_cast<int>(language)].needles.FoundInPadded(text.data(), text.size());
}

const std::vector<std::string>* RuleSet::FastPathNeedles(Language language) const {
  const int l = static_cast<int>(language);
  return index_->fast_path[l] ? &index_->fast_needles[l] : nullptr;
}

const std::vector<std::string>& RuleSet::Needles(Language language) const {
  return index_->lang[static_cast<int>(language)].needles.needles();
}

RuleSet::~RuleSet() = default;

void RuleSet::IndexDetectors() {
  for (int& d : index_->detector_rule) d = -1;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const int d = internal::DetectorByName(rules_[i].detector);
    if (d < 0 || index_->detector_rule[d] >= 0) continue;  // unknown (refused by the binding) or twice
    const internal::DetectorInfo& info = internal::kDetectors[d];
    if (info.language != rules_[i].language) continue;
    index_->detector_rule[d] = static_cast<int>(i);
    const int lang = static_cast<int>(info.language);
    index_->has_detectors[lang] = true;
    std::vector<std::string>& needles = index_->needles[lang];
    if (std::find(needles.begin(), needles.end(), info.needle) == needles.end()) {
      needles.emplace_back(info.needle);
    }
  }
}

int RuleSet::DetectorRule(int detector) const {
  return detector >= 0 && detector < internal::kDetectorCount ? index_->detector_rule[detector]
                                                               : -1;
}

bool RuleSet::HasDetectors(Language language) const {
  return index_->has_detectors[static_cast<int>(language)];
}

const std::vector<std::string>& RuleSet::DetectorNeedles(Language language) const {
  return index_->needles[static_cast<int>(language)];
}

const RuleSet::Spelling* RuleSet::Find(Language language, std::string_view qualified) const {
  const Index::PerLanguage& li = index_->lang[static_cast<int>(language)];
  if (!qualified.empty() &&
      !(li.last_bytes[static_cast<unsigned char>(qualified.back())] >>
            (qualified.size() < 63 ? qualified.size() : 63) &
        1)) {
    return nullptr;
  }
  return li.FindSpelling(qualified);
}

bool RuleSet::IsRoot(Language language, std::string_view name) const {
  const Index::PerLanguage& li = index_->lang[static_cast<int>(language)];
  if (!name.empty() && !(li.root_bytes[static_cast<unsigned char>(name[0])] >>
                             (name.size() < 63 ? name.size() : 63) &
                         1)) {
    return false;
  }
  return li.roots.Contains(name);
}

bool RuleSet::HasComponent(Language language, std::string_view name) const {
  const Index::PerLanguage& li = index_->lang[static_cast<int>(language)];
  if (name.empty() ||
      !(li.first_bytes[static_cast<unsigned char>(name[0])] &
        (1u << (name.size() < 31 ? name.size() : 31)))) {
    return false;
  }
  return li.components.Contains(name);
}

bool RuleSet::IsNamespace(Language language, std::string_view qualified) const {
  return index_->lang[static_cast<int>(language)].namespaces.Contains(qualified);
}

const std::vector<std::string_view>* RuleSet::Followers(Language language,
                                                        std::string_view ns) const {
  const Index::PerLanguage& li = index_->lang[static_cast<int>(language)];
  const uint32_t k = li.namespaces.Get(ns);
  return k == ViewTable::kAbsent ? nullptr : &li.followers[k];
}

const char* RefKindName(RefKind kind) {
  switch (kind) {
    case RefKind::kCall: return "call";
    case RefKind::kReference: return "reference";
    case RefKind::kImport: return "import";
    case RefKind::kLiteral: return "literal";
    case RefKind::kIdiom: return "idiom";
    case RefKind::kMock: return "mock";
  }
  return "reference";
}

bool LanguageOfPath(std::string_view path, Language* language) {
  // Note [Extension from the last four bytes]: no extension of a source is
  // longer than 3 bytes, so only the last four bytes can hold the '.'
  // before one: the path's last '.' further back, or none, is no source,
  // and a '/' after the '.' is in the extension, which then matches none.
  // (rfind of '/' and of '.' walked every byte of the name: 160
  // instructions an entry of the walk, 0.6M on Megatron-LM.)
  const size_t size = path.size();
  size_t dot = std::string_view::npos;
  for (size_t k = size; k > 0 && size - k < 4; --k) {
    if (path[k - 1] == '.') {
      dot = k - 1;
      break;
    }
  }
  if (dot == std::string_view::npos) return false;
  // Lowered in place: no extension of a source is longer than 3 bytes.
  const std::string_view given = path.substr(dot + 1);
  if (given.size() > 3) return false;
  char lower[3];
  for (size_t k = 0; k < given.size(); ++k) {
    const char c = given[k];
    lower[k] = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  const std::string_view ext(lower, given.size());
  if (ext == "py" || ext == "pyi") {
    *language = Language::kPython;
    return true;
  }
  static constexpr std::string_view kCpp[] = {"h", "hpp", "hh", "c", "cc", "cpp",
                                              "cxx", "cu", "cuh", "hip"};
  for (std::string_view e : kCpp) {
    if (ext == e) {
      *language = Language::kCpp;
      return true;
    }
  }
  return false;
}

}  // namespace anydev::scan
