// RuleSet: the spellings of the rules, indexed for exact lookup of qualified
// names, their first components and their namespace prefixes.
#include <algorithm>
#include <string>
#include <utility>

#include <deque>
#include <unordered_map>
#include <unordered_set>

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

struct RuleSet::Index {
  struct PerLanguage {
    std::unordered_map<std::string_view, Spelling> spellings;
    std::unordered_set<std::string_view> roots;
    std::unordered_set<std::string_view> namespaces;
    // By namespace: the components that follow it in the spellings.
    std::unordered_map<std::string_view, std::vector<std::string_view>> followers;
    std::unordered_set<std::string_view> components;
    // A quick filter before hashing, by first byte and length.
    uint32_t first_bytes[256] = {};  // bit min(len, 31) for each component's length
    // Find's: by a spelling's last byte, bit min(len, 63) for its length. Most
    // of what Find is asked (every prefix of a chain, longest first) is no
    // spelling, and this answers most of those without hashing.
    uint64_t last_bytes[256] = {};
    int max_components = 0;
    internal::NeedleSet needles;
  };
  std::deque<std::string> storage;  // what the namespace views point into
  PerLanguage lang[2];
  // Literal rules: the rule of each detector (-1: none), and per language
  // whether any is present and the needles they need.
  int detector_rule[internal::kDetectorCount];
  bool has_detectors[2] = {false, false};
  std::vector<std::string> needles[2];
  // The fast path's needles (BuildNeedles), and whether it may run.
  std::vector<std::string> fast_needles[2];
  bool fast_path[2] = {false, false};
};

RuleSet::RuleSet(std::vector<Rule> rules) : rules_(std::move(rules)), index_(new Index) {
  IndexDetectors();
  for (size_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    Index::PerLanguage& li = index_->lang[static_cast<int>(r.language)];
    const std::string_view sep = Separator(r.language);
    for (const std::string& s : r.spellings) {
      const std::string_view text = s;  // owned by rules_, which never moves again
      const int n = CountComponents(text, sep);
      li.spellings.try_emplace(text, Spelling{static_cast<int>(i), text, n});
      if (!text.empty()) {
        li.last_bytes[static_cast<unsigned char>(text.back())] |=
            uint64_t{1} << (text.size() < 63 ? text.size() : 63);
      }
      li.max_components = std::max(li.max_components, n);
      li.roots.insert(text.substr(0, text.find(sep)));
      for (size_t b = 0;;) {
        const size_t e = text.find(sep, b);
        const std::string_view comp = text.substr(b, e == std::string_view::npos ? e : e - b);
        li.components.insert(comp);
        if (!comp.empty()) {
          li.first_bytes[static_cast<unsigned char>(comp[0])] |=
              1u << (comp.size() < 31 ? comp.size() : 31);
        }
        if (e == std::string_view::npos) break;
        b = e + sep.size();
      }
      for (size_t p = text.find(sep); p != std::string_view::npos;
           p = text.find(sep, p + sep.size())) {
        const std::string_view ns = text.substr(0, p);
        if (!li.namespaces.count(ns)) {
          index_->storage.emplace_back(ns);
          li.namespaces.insert(index_->storage.back());
        }
        std::string_view next = text.substr(p + sep.size());
        next = next.substr(0, next.find(sep));
        std::vector<std::string_view>& f = li.followers[*li.namespaces.find(ns)];
        if (!next.empty() && std::find(f.begin(), f.end(), next) == f.end()) f.push_back(next);
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
    auto components = [&](std::string_view text) {
      std::vector<std::string_view> out;
      for (size_t b = 0;;) {
        const size_t e = text.find(sep, b);
        out.push_back(text.substr(b, e == std::string_view::npos ? e : e - b));
        if (e == std::string_view::npos) break;
        b = e + sep.size();
      }
      return out;
    };
    std::unordered_map<std::string_view, int> shared;
    for (const Rule& r : rules_) {
      if (r.language != language || r.kept || !r.needles.empty()) continue;
      for (const std::string& s : r.spellings) {
        std::vector<std::string_view> comps = components(s);
        std::sort(comps.begin(), comps.end());
        comps.erase(std::unique(comps.begin(), comps.end()), comps.end());
        for (std::string_view c : comps) ++shared[c];
      }
    }
    std::vector<std::string> needles;
    // The fast path's (Note [Fast path] in python_scan.cc): a spelling's
    // component is in the line of each finding of it, where a rule's own
    // needles are only somewhere in the file; so both.
    std::vector<std::string> fast;
    for (const Rule& r : rules_) {
      if (r.language != language || r.kept) continue;
      if (!r.needles.empty()) {
        needles.insert(needles.end(), r.needles.begin(), r.needles.end());
        fast.insert(fast.end(), r.needles.begin(), r.needles.end());
      }
      if (!r.detector.empty()) {  // a literal rule: its detector's needle
        const int d = internal::DetectorByName(r.detector);
        if (d >= 0 && r.needles.empty()) needles.emplace_back(internal::kDetectors[d].needle);
        if (d >= 0) fast.emplace_back(internal::kDetectors[d].needle);
        continue;
      }
      for (const std::string& s : r.spellings) {
        const std::vector<std::string_view> comps = components(s);
        std::string_view best = comps[0];
        for (size_t k = 1; k < comps.size(); ++k) {
          const std::string_view c = comps[k];
          if (c.empty()) continue;
          if (k == 1 && best == comps[0]) {
            best = c;
            continue;
          }
          const int a = shared[c], b = shared[best];
          if (a > b || (a == b && c.size() > best.size())) best = c;
        }
        if (r.needles.empty()) needles.emplace_back(best);
        fast.emplace_back(best);
      }
    }
    index_->lang[l].needles = internal::NeedleSet(std::move(needles));
    const internal::NeedleSet fast_set(std::move(fast));
    index_->fast_needles[l] = fast_set.always() ? std::vector<std::string>() : fast_set.needles();
    index_->fast_path[l] = !fast_set.always() && !fast_set.needles().empty();
  }
}

bool RuleSet::MayMatch(Language language, std::string_view text) const {
  return index_->lang[static_cast<int>(language)].needles.FoundIn(text.data(), text.size());
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
  const auto& m = li.spellings;
  auto it = m.find(qualified);
  return it == m.end() ? nullptr : &it->second;
}

bool RuleSet::IsRoot(Language language, std::string_view name) const {
  return index_->lang[static_cast<int>(language)].roots.count(name) != 0;
}

bool RuleSet::HasComponent(Language language, std::string_view name) const {
  const Index::PerLanguage& li = index_->lang[static_cast<int>(language)];
  if (name.empty() ||
      !(li.first_bytes[static_cast<unsigned char>(name[0])] &
        (1u << (name.size() < 31 ? name.size() : 31)))) {
    return false;
  }
  return li.components.count(name) != 0;
}

bool RuleSet::IsNamespace(Language language, std::string_view qualified) const {
  return index_->lang[static_cast<int>(language)].namespaces.count(qualified) != 0;
}

const std::vector<std::string_view>* RuleSet::Followers(Language language,
                                                        std::string_view ns) const {
  const auto& m = index_->lang[static_cast<int>(language)].followers;
  auto it = m.find(ns);
  return it == m.end() ? nullptr : &it->second;
}

int RuleSet::MaxComponents(Language language) const {
  return index_->lang[static_cast<int>(language)].max_components;
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
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) {
    return false;
  }
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
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
