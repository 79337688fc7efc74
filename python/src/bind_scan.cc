// anydev._C._scan: the static scanner (core/scan) for anydev.scan. Plain
// tuples cross the boundary; anydev/scan.py turns them into dataclasses and
// adds what comes from the table (replacement, fix, message). A tree's scan
// comes back as a Report, which keeps the findings native until asked for
// them (Note [Native reports]).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anydev/scan.h"
#include "common.h"

namespace anydev::python {
namespace {

namespace sc = ::anydev::scan;

sc::Language ParseLanguage(const std::string& s) {
  if (s == "python") return sc::Language::kPython;
  if (s == "cpp") return sc::Language::kCpp;
  throw py::value_error("language must be 'python' or 'cpp', not '" + s + "'");
}

const char* LanguageName(sc::Language l) { return l == sc::Language::kPython ? "python" : "cpp"; }

// A file's bytes as text: a C++ file need not be UTF-8 (Latin-1 comments, a
// stray byte in an identifier), and py::str would throw UnicodeDecodeError
// out of the whole scan. Invalid bytes become U+FFFD, as anydev.fix decodes
// the file's span when it checks a finding against it (_check_findings).
py::str Text(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

py::tuple FindingTuple(const sc::Finding& f) {
  return py::make_tuple(f.rule, sc::RefKindName(f.kind), Text(f.symbol),
                        f.line, f.column, f.end_line, f.end_column, f.start, f.end,
                        f.call_end < 0 ? py::object(py::none()) : py::object(py::int_(f.call_end)),
                        Text(f.text));
}

py::list ErrorList(const std::vector<sc::FileError>& errors) {
  py::list out;
  for (const sc::FileError& e : errors) {
    out.append(py::make_tuple(Text(e.message),
                              e.line > 0 ? py::object(py::int_(e.line)) : py::object(py::none())));
  }
  return out;
}

py::tuple FileTuple(const sc::FileResult& r) {
  py::list findings;
  for (const sc::Finding& f : r.findings) findings.append(FindingTuple(f));
  // Paths cross as bytes: a file name need not be UTF-8 (anydev/scan.py
  // decodes them).
  return py::make_tuple(py::bytes(r.path), LanguageName(r.language), findings,
                        ErrorList(r.errors), r.noqa_fallback);
}

// The `# noqa` directives as anydev/_migrate/noqa.py gives them: {line: (code, ...)},
// ("",) for a bare `# noqa` (every code starts with "").
py::dict NoqaDict(const std::vector<sc::NoqaDirective>& dirs) {
  py::dict out;
  for (const sc::NoqaDirective& d : dirs) {
    py::tuple codes(d.all ? 1 : d.codes.size());
    if (d.all) {
      codes[0] = py::str("");
    } else {
      for (size_t k = 0; k < d.codes.size(); ++k) codes[k] = Text(d.codes[k]);
    }
    out[py::int_(d.line)] = codes;
  }
  return out;
}

// Note [Native reports]: `anydev scan` on a tree with 100,000 findings spent
// more time turning them into Python objects (an 11-field tuple here, a
// Finding there, a dict of JSON fragments, a string per line) than the scan
// took. A Report keeps the scan's FileResults as they are, numbers the
// findings, and gives Python what it needs per file (path, errors, the noqa
// flag) and per (rule, symbol) (the distinct "keys": a handful), never per
// finding: Python builds the per-file and per-key pieces of a line of the
// output, and a Renderer joins them with the finding's numbers, a chunk at a
// time (the template: literal text, the file's piece, the key's piece, line,
// column, end line, end column). Findings that a filter in Python drops
// (`# noqa`, per-file-ignores) are marked dropped. The Python API and the
// outputs that read Finding objects (SARIF, baselines, statistics) get them
// made here (Note [Native Findings]); Report.tuples gives a file's finding
// tuples, as scan_source does, where Finding has no slots (Python 3.9).
// `anydev scan` makes a Report per batch of files (walk_files, then
// scan_files_report) and writes it before it scans the next (Note [Streamed
// reports] in anydev/scan.py), so a Renderer is made per batch.
class Report {
 public:
  Report(std::shared_ptr<sc::RuleSet> rules, std::vector<sc::FileResult> files)
      : rules_(std::move(rules)), files_(std::move(files)) {
    first_.reserve(files_.size() + 1);
    size_t n = 0;
    for (const sc::FileResult& f : files_) {
      first_.push_back(static_cast<uint32_t>(n));
      n += f.findings.size();
    }
    first_.push_back(static_cast<uint32_t>(n));
    key_.reserve(n);
    file_of_.reserve(n);
    // A finding's symbol is a view into the RuleSet (or a detector's static
    // name): the same spelling has the same address, so the keys are found
    // by address, and only a new address is compared by content.
    struct Where {
      int rule;
      const char* data;
      size_t size;
      bool operator==(const Where& o) const {
        return rule == o.rule && data == o.data && size == o.size;
      }
    };
    struct WhereHash {
      size_t operator()(const Where& w) const {
        return std::hash<const void*>()(w.data) * 31 + static_cast<size_t>(w.rule) * 7 + w.size;
      }
    };
    std::unordered_map<Where, uint32_t, WhereHash> by_address;
    for (size_t i = 0; i < files_.size(); ++i) {
      for (const sc::Finding& f : files_[i].findings) {
        const Where w{f.rule, f.symbol.data(), f.symbol.size()};
        auto [it, added] = by_address.try_emplace(w, 0);
        if (added) {
          uint32_t id = 0;
          while (id < keys_.size() && keys_[id] != std::make_pair(f.rule, f.symbol)) ++id;
          if (id == keys_.size()) keys_.emplace_back(f.rule, f.symbol);
          it->second = id;
        }
        key_.push_back(it->second);
        file_of_.push_back(static_cast<uint32_t>(i));
      }
    }
    dropped_.assign(n, 0);
    left_ = n;
  }

  size_t size() const { return key_.size(); }
  size_t left() const { return left_; }
  const std::vector<sc::FileResult>& files() const { return files_; }
  const std::vector<std::pair<int, std::string_view>>& keys() const { return keys_; }

  // The finding tuples of file `i` (all of them, dropped or not).
  py::list Tuples(size_t i) const {
    py::list out;
    for (const sc::Finding& f : File(i).findings) out.append(FindingTuple(f));
    return out;
  }

  // Per file, how many of its findings are left.
  std::vector<uint32_t> LeftPerFile() const {
    std::vector<uint32_t> out(files_.size(), 0);
    for (size_t g = 0; g < key_.size(); ++g) out[file_of_[g]] += dropped_[g] ? 0 : 1;
    return out;
  }

  // Per key, how many findings of it are left.
  std::vector<uint32_t> LeftPerKey() const {
    std::vector<uint32_t> out(keys_.size(), 0);
    for (size_t g = 0; g < key_.size(); ++g) out[key_[g]] += dropped_[g] ? 0 : 1;
    return out;
  }

  // The distinct rules of the findings of file `i` that are left.
  std::vector<int> RulesOf(size_t i) const {
    std::vector<int> out;
    const sc::FileResult& r = File(i);
    for (size_t j = 0; j < r.findings.size(); ++j) {
      if (dropped_[first_[i] + j]) continue;
      if (std::find(out.begin(), out.end(), r.findings[j].rule) == out.end()) {
        out.push_back(r.findings[j].rule);
      }
    }
    return out;
  }

  // The positions (in its list) of the findings of file `i` that are dropped.
  std::vector<size_t> DroppedOf(size_t i) const {
    std::vector<size_t> out;
    const size_t n = File(i).findings.size();
    for (size_t j = 0; j < n; ++j) {
      if (dropped_[first_[i] + j]) out.push_back(j);
    }
    return out;
  }

  // Drops the findings of file `i` at the positions `which` (in its list).
  void Drop(size_t i, const std::vector<size_t>& which) {
    const size_t n = File(i).findings.size();
    for (size_t j : which) {
      if (j >= n) throw py::index_error("no such finding");
      Mark(first_[i] + j);
    }
  }

  // Drops the findings of file `i` of the rules `rules`.
  void DropRules(size_t i, const std::vector<int>& rules) {
    const sc::FileResult& r = File(i);
    for (size_t j = 0; j < r.findings.size(); ++j) {
      if (std::find(rules.begin(), rules.end(), r.findings[j].rule) != rules.end()) {
        Mark(first_[i] + j);
      }
    }
  }

  // Orders the findings by (rank of their file, start), stably: as Python's
  // sort of Findings by (path, start) when rank orders the files' paths.
  void Order(const std::vector<uint32_t>& rank) {
    if (rank.size() != files_.size()) throw py::value_error("one rank per file");
    order_.resize(key_.size());
    for (size_t g = 0; g < order_.size(); ++g) order_[g] = static_cast<uint32_t>(g);
    std::stable_sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t ra = rank[file_of_[a]], rb = rank[file_of_[b]];
      if (ra != rb) return ra < rb;
      return At(a).start < At(b).start;
    });
  }

  // The finding numbered `g` in the walk's order, and its file.
  const sc::Finding& At(size_t g) const {
    const size_t i = file_of_[g];
    return files_[i].findings[g - first_[i]];
  }
  uint32_t FileOf(size_t g) const { return file_of_[g]; }
  uint32_t FirstOf(size_t i) const { return first_[i]; }
  uint32_t KeyOf(size_t g) const { return key_[g]; }
  bool Dropped(size_t g) const { return dropped_[g] != 0; }
  // The number of the finding at position `p` of the output's order.
  size_t Nth(size_t p) const { return order_.empty() ? p : order_[p]; }

 private:
  const sc::FileResult& File(size_t i) const {
    if (i >= files_.size()) throw py::index_error("no such file");
    return files_[i];
  }
  void Mark(size_t g) {
    if (!dropped_[g]) {
      dropped_[g] = 1;
      --left_;
    }
  }

  std::shared_ptr<sc::RuleSet> rules_;  // the findings' symbols are views into it
  std::vector<sc::FileResult> files_;
  std::vector<uint32_t> first_;    // per file, the number of its first finding; then the total
  std::vector<uint32_t> key_;      // per finding, its index in keys_
  std::vector<uint32_t> file_of_;  // per finding, its file
  std::vector<std::pair<int, std::string_view>> keys_;  // the distinct (rule, symbol)
  std::vector<uint8_t> dropped_;
  std::vector<uint32_t> order_;  // the output's order of the findings; empty: theirs
  size_t left_ = 0;
};

// Note [Native Findings]: a Finding (frozen, with slots) made in Python costs
// an 11-field tuple here and a 16-argument __init__ there, about 0.5 us, which
// a scan_paths of 100,000 findings paid 100,000 times. A FindingMaker allocates
// the instances of the class it is given and fills each slot through its
// member descriptor's setter, as object.__setattr__ would (the class's own
// __setattr__, which refuses, is bypassed as there): the per-file and
// per-(rule, symbol) values are shared objects Python made once. It takes
// only a class whose fields are all slots (anydev/scan.py checks, and falls
// back to building them itself). The Findings it makes are not tracked by
// the cyclic collector (their fields are str, int and None): walking 100,000
// of them at every collection of the old generation took as long as making
// them (CPython's tuples of atomic values are untracked for the same reason).
constexpr const char* kFindingFields[] = {
    "path", "line", "column", "end_line", "end_column", "symbol", "replacement", "rule", "fix",
    "message", "kind", "start", "end", "call_end", "text", "language"};
constexpr size_t kNumFindingFields = sizeof kFindingFields / sizeof kFindingFields[0];

class FindingMaker {
 public:
  // `cls`: the Finding class; `file_text`: the path shown per file (None for
  // one whose findings are not asked for); `key_values`: per key, (symbol,
  // replacement, rule, fix, message, language); `kinds`: the kind names in
  // RefKind's order.
  FindingMaker(const Report& report, py::handle cls, const py::list& file_text,
               const py::list& key_values, const py::list& kinds)
      : cls_(cls), file_(file_text), keys_(key_values), kinds_(kinds) {
    if (!PyType_Check(cls.ptr())) throw py::type_error("cls must be a class");
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    for (size_t i = 0; i < kNumFindingFields; ++i) {
      PyObject* d = PyDict_GetItemString(type->tp_dict, kFindingFields[i]);  // borrowed
      if (d == nullptr || !PyObject_TypeCheck(d, &PyMemberDescr_Type) ||
          Py_TYPE(d)->tp_descr_set == nullptr) {
        throw py::type_error(std::string("not a slot of the class: ") + kFindingFields[i]);
      }
      set_[i] = d;
    }
    if (file_text.size() != report.files().size()) throw py::value_error("one path per file");
    for (py::handle k : key_values) {
      if (!PyTuple_Check(k.ptr()) || PyTuple_GET_SIZE(k.ptr()) != 6) {
        throw py::value_error("a key's values are 6");
      }
    }
    if (key_values.size() != report.keys().size()) throw py::value_error("one entry per key");
  }

  // A new Finding of finding `f` of file `file` whose key is `key`.
  py::object Make(const sc::Finding& f, uint32_t file, uint32_t key) const {
    auto* type = reinterpret_cast<PyTypeObject*>(cls_.ptr());
    py::object obj = py::reinterpret_steal<py::object>(type->tp_alloc(type, 0));
    if (!obj) throw py::error_already_set();
    PyObject* kv = keys_[key].ptr();
    PyObject* path = PyList_GET_ITEM(file_.ptr(), file);
    if (path == Py_None) throw py::value_error("no path for the file");
    const auto kind = static_cast<size_t>(f.kind);
    Set(obj, 0, py::reinterpret_borrow<py::object>(path));
    Set(obj, 1, py::int_(f.line));
    Set(obj, 2, py::int_(f.column));
    Set(obj, 3, py::int_(f.end_line));
    Set(obj, 4, py::int_(f.end_column));
    for (size_t i = 0; i < 5; ++i) {  // symbol, replacement, rule, fix, message
      Set(obj, 5 + i, py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(kv, i)));
    }
    if (kind >= kinds_.size()) throw py::value_error("no name for the finding's kind");
    Set(obj, 10, py::reinterpret_borrow<py::object>(PyList_GET_ITEM(kinds_.ptr(), kind)));
    Set(obj, 11, py::int_(f.start));
    Set(obj, 12, py::int_(f.end));
    Set(obj, 13, f.call_end < 0 ? py::object(py::none()) : py::object(py::int_(f.call_end)));
    Set(obj, 14, Text(f.text));
    Set(obj, 15, py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(kv, 5)));
    // It holds str, int and None only: no cycle can run through it, so the
    // collector need never walk it (as CPython untracks such tuples).
    if (PyObject_GC_IsTracked(obj.ptr())) PyObject_GC_UnTrack(obj.ptr());
    return obj;
  }

 private:
  void Set(const py::object& obj, size_t i, const py::object& v) const {
    if (Py_TYPE(set_[i])->tp_descr_set(set_[i], obj.ptr(), v.ptr()) != 0) {
      throw py::error_already_set();
    }
  }

  py::handle cls_;
  const py::list& file_;
  const py::list& keys_;
  const py::list& kinds_;
  PyObject* set_[kNumFindingFields] = {};  // borrowed from the class's dict
};

// The UTF-8 of a str (cached in the object by CPython).
std::string_view Utf8(py::handle s) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (p == nullptr) throw py::error_already_set();
  return std::string_view(p, static_cast<size_t>(n));
}

// Writes the findings of a Report left after its filters as text, one line
// each, by a template (Note [Native reports]).
class Renderer {
 public:
  enum Op : int { kFile = 0, kKey = 1, kLine = 2, kColumn = 3, kEndLine = 4, kEndColumn = 5 };

  // `parts`: str (literal text) or an Op; `file_text`/`key_text`: the piece
  // of each file and key (None for a file without findings left); `sep`: what
  // goes between two findings.
  Renderer(std::shared_ptr<Report> report, const py::list& parts, const py::list& file_text,
           const py::list& key_text, const std::string& sep)
      : report_(std::move(report)), sep_(sep) {
    for (py::handle p : parts) {
      if (PyUnicode_Check(p.ptr())) {
        ops_.push_back({-1, std::string(Utf8(p))});
        fixed_ += ops_.back().second.size();
      } else {
        const int op = p.cast<int>();
        if (op < kFile || op > kEndColumn) throw py::value_error("unknown template field");
        ops_.push_back({op, {}});
        if (op == kFile) ++files_in_;
        if (op == kKey) ++keys_in_;
        if (op >= kLine) fixed_ += 11;  // an int's digits and sign
      }
    }
    if (file_text.size() != report_->files().size()) throw py::value_error("one text per file");
    if (key_text.size() != report_->keys().size()) throw py::value_error("one text per key");
    size_t file_max = 0, key_max = 0;
    for (py::handle t : file_text) {
      file_.push_back(t.is_none() ? std::string() : std::string(Utf8(t)));
      file_max = std::max(file_max, file_.back().size());
    }
    for (py::handle t : key_text) {
      key_.push_back(std::string(Utf8(t)));
      key_max = std::max(key_max, key_.back().size());
    }
    most_ = fixed_ + files_in_ * file_max + keys_in_ * key_max + sep_.size();
  }

  // The next `n` findings left (or fewer at the end), joined by `sep`, as
  // UTF-8 bytes (what the report's file gets: no str to decode and encode
  // again); None after the last. The findings are written into the bytes
  // object itself, made with room for the most the chunk can take and cut to
  // what was written: a buffer of the Renderer's own, copied into a new bytes
  // object per chunk, copied every byte of the report once more. What is
  // not written is never touched, so it costs no memory, and cutting it off
  // copies nothing (malloc shrinks a block in place, mremap an mmapped one).
  py::object Next(size_t n) {
    const size_t total = report_->size();
    // most_ bounds what one finding takes: its literal text and numbers, the
    // longest file and key pieces, `sep`.
    const size_t room = std::min(n, total - std::min(at_, total)) * most_;
    PyObject* chunk = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(room));
    if (chunk == nullptr) throw py::error_already_set();
    char* const start = PyBytes_AS_STRING(chunk);
    char* out = start;
    size_t done = 0;
    while (done < n && at_ < total) {
      const size_t g = report_->Nth(at_++);
      if (report_->Dropped(g)) continue;
      const std::string& file = file_[report_->FileOf(g)];
      const std::string& key = key_[report_->KeyOf(g)];
      if (done++ > 0) out = Put(out, sep_);
      const sc::Finding& f = report_->At(g);
      for (const auto& [op, text] : ops_) {
        switch (op) {
          case -1: out = Put(out, text); break;
          case kFile: out = Put(out, file); break;
          case kKey: out = Put(out, key); break;
          case kLine: out = Int(out, f.line); break;
          case kColumn: out = Int(out, f.column); break;
          case kEndLine: out = Int(out, f.end_line); break;
          case kEndColumn: out = Int(out, f.end_column); break;
        }
      }
    }
    if (done == 0) {
      Py_DECREF(chunk);
      return py::none();
    }
    if (_PyBytes_Resize(&chunk, static_cast<Py_ssize_t>(out - start)) != 0) {
      throw py::error_already_set();  // chunk is freed and NULL
    }
    return py::reinterpret_steal<py::object>(chunk);
  }

 private:
  static char* Put(char* out, const std::string& s) {
    std::memcpy(out, s.data(), s.size());
    return out + s.size();
  }
  static char* Int(char* out, int v) { return std::to_chars(out, out + 11, v).ptr; }

  std::shared_ptr<Report> report_;
  std::vector<std::pair<int, std::string>> ops_;
  size_t fixed_ = 0;  // the most bytes of the template's literal text and numbers
  size_t files_in_ = 0, keys_in_ = 0;  // how often it has the file's and the key's piece
  size_t most_ = 0;  // the most bytes one finding takes
  std::vector<std::string> file_, key_;
  std::string sep_;
  size_t at_ = 0;
};

using Excludes = std::vector<std::pair<std::string, std::string>>;

sc::ScanOptions Options(const std::vector<std::string>& paths, const Excludes& excludes,
                        bool respect_gitignore, int jobs, uint64_t max_file_size) {
  sc::ScanOptions o;
  o.paths = paths;
  for (const auto& [pattern, base] : excludes) o.excludes.push_back({pattern, base});
  o.respect_gitignore = respect_gitignore;
  o.jobs = jobs;
  o.max_file_size = max_file_size;
  return o;
}

// Options for a scan with `rules`, `keep` its rules' filter (empty: all),
// checked here for every binding that takes one.
sc::ScanOptions Options(const sc::RuleSet& rules, const std::vector<std::string>& paths,
                        const Excludes& excludes, bool respect_gitignore, int jobs,
                        uint64_t max_file_size, const std::vector<bool>& keep) {
  if (!keep.empty() && keep.size() != rules.rules().size()) {
    throw py::value_error("keep must have one entry per rule");
  }
  sc::ScanOptions o = Options(paths, excludes, respect_gitignore, jobs, max_file_size);
  o.keep = keep;
  return o;
}

// A batch of a tree's scan: its files (path errors last, as ScanFiles gives
// them) kept in a Report, and how many files and bytes were scanned.
struct ReportBatch {
  std::shared_ptr<Report> report;
  uint64_t files = 0, bytes = 0;
};

// sc::ScanFiles of `paths` as a ReportBatch (no Python object: without the GIL).
ReportBatch ScanIntoReport(const std::shared_ptr<sc::RuleSet>& rules,
                           const std::vector<std::string>& paths, const sc::ScanOptions& o) {
  sc::ScanSummary summary = sc::ScanFiles(*rules, paths, o);
  std::vector<sc::FileResult> files = std::move(summary.files);
  for (sc::FileResult& r : summary.path_errors) files.push_back(std::move(r));
  return {std::make_shared<Report>(rules, std::move(files)), summary.files_scanned,
          summary.bytes_scanned};
}

// Note [Scan ahead]: a streamed report (Note [Streamed reports] in
// anydev/scan.py) scans a batch of files, then renders it in Python, then
// scans the next. While Python rendered, the scanner's threads waited: on
// the 200 MB tree with 2 cores, `anydev scan --format json` took 0.27 s of
// wall for 0.42 s of CPU, where the scan alone took 0.20 s for 0.36 s. A
// ScanQueue scans the batches on a thread of its own, one batch ahead of the
// one Python holds, so the rendering of one overlaps the scan of the next;
// at most two batches' findings are held. The thread lives as long as the
// queue, so its thread-local scratch (Note [Thread-local scratch]) is built
// once, not per batch. The batches are the sizes _Stream chose one by one:
// the first `first` files, then each about `findings` findings by the last
// one's count, within [lo, hi]. Given the paths to walk rather than the
// walk's files, a queue walks them on a second thread (sc::WalkFiles) and
// scans the first batch as soon as the walk has found its files (as
// ScanPaths does, Note [Walk while scanning]); the walk's path errors and
// ignored count come at its end (walked()). The queue never takes the GIL:
// Python objects are made in next() and walked(), on the caller's thread. A
// process forked while a queue was alive has no copy of its threads: there
// the queue refuses to be read, which would wait for ever, and its end
// does not wait for them.
class ScanQueue {
 public:
  using Batch = ReportBatch;
  struct Sizes {
    size_t lo, first, hi, findings;
  };

  // Scans `names` (a walk's files).
  ScanQueue(std::shared_ptr<sc::RuleSet> rules, std::vector<std::string> names,
            sc::ScanOptions options, Sizes sizes)
      : rules_(std::move(rules)), options_(std::move(options)),
        names_(std::make_move_iterator(names.begin()), std::make_move_iterator(names.end())) {
    Size(sizes);
    driver_ = std::thread([this] { Drive(); });
  }

  // Walks options.paths (with its excludes and gitignore choice) and scans
  // what the walk finds as it finds it; with `notebooks`, keeps the
  // notebooks it finds for Walked().
  ScanQueue(std::shared_ptr<sc::RuleSet> rules, sc::ScanOptions walk, sc::ScanOptions options,
            Sizes sizes, bool notebooks = false)
      : rules_(std::move(rules)), options_(std::move(options)), walking_(true),
        want_notebooks_(notebooks) {
    Size(sizes);
    walker_ = std::thread([this, walk = std::move(walk)] { Walk(walk); });
    driver_ = std::thread([this] { Drive(); });
  }

  bool Forked() const { return getpid() != owner_; }

  ScanQueue(const ScanQueue&) = delete;
  ScanQueue& operator=(const ScanQueue&) = delete;

  // Stops after the batch being scanned (a caller that stopped reading), and
  // the walk at the next file it finds.
  ~ScanQueue() {
    if (Forked()) {  // the parent's threads: not ours to wait for
      driver_.detach();
      if (walker_.joinable()) walker_.detach();
      // Nor to destroy what they wait on: glibc's pthread_cond_destroy waits
      // for a condition variable's waiters to leave, and a thread of the
      // parent that was waiting at the fork (the driver, a batch ahead)
      // never leaves in the child. Left as they are (a leak, once).
      (void)signals_.release();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    walked_.notify_all();
    driver_.join();
    if (walker_.joinable()) walker_.join();
  }

  // The next batch, waiting for it (without the GIL); nullopt after the last.
  std::optional<Batch> Next() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return ready_.has_value() || done_; });
    if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    if (!ready_) return std::nullopt;
    std::optional<Batch> out = std::move(ready_);
    ready_.reset();
    changed_.notify_all();
    return out;
  }

  // The walk's path errors and ignored count, waiting for its end (without
  // the GIL); none for a queue given the names. `notebooks`, when given, gets
  // the notebooks the walk found (a queue made to keep them).
  std::pair<std::vector<sc::FileResult>, uint64_t> Walked(
      std::vector<std::string>* notebooks = nullptr) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return !walking_; });
    if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    if (notebooks != nullptr) *notebooks = std::move(notebooks_);
    return {std::move(path_errors_), ignored_};
  }

  bool KeepsNotebooks() const { return want_notebooks_; }

 private:
  struct Stopped {};  // thrown by the walk's sink to end it early

  void Size(const Sizes& s) {
    lo_ = std::max<size_t>(s.lo, 1);
    hi_ = std::max(s.hi, lo_);
    size_ = std::clamp(std::max<size_t>(s.first, 1), lo_, hi_);
    findings_ = std::max<size_t>(s.findings, 1);
  }

  void Walk(const sc::ScanOptions& walk) {
    std::vector<sc::FileResult> errors;
    std::vector<std::string> notebooks;
    uint64_t ignored = 0;
    std::exception_ptr failed;
    try {
      sc::WalkFiles(
          walk, &errors,
          [this](std::string&& name) {
            std::lock_guard<std::mutex> lock(mu_);
            if (stop_) throw Stopped{};
            names_.push_back(std::move(name));
            if (want_ > 0 && names_.size() >= want_) {
              want_ = 0;
              walked_.notify_one();
            }
          },
          &ignored, want_notebooks_ ? &notebooks : nullptr);
    } catch (const Stopped&) {
    } catch (...) {
      failed = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      walking_ = false;
      path_errors_ = std::move(errors);
      notebooks_ = std::move(notebooks);
      ignored_ = ignored;
      if (failed && !failed_) failed_ = failed;
    }
    walked_.notify_all();
    changed_.notify_all();
  }

  void Drive() {
    try {
      for (;;) {
        std::vector<std::string> part;
        {
          std::unique_lock<std::mutex> lock(mu_);
          // One batch ahead of the caller's: scan when the last was taken ...
          changed_.wait(lock, [this] { return !ready_.has_value() || stop_; });
          // ... and the walk has found the batch's files.
          want_ = size_;
          walked_.wait(lock, [this] { return names_.size() >= size_ || !walking_ || stop_; });
          want_ = 0;
          if (stop_ || failed_ || names_.empty()) break;
          const size_t n = std::min(size_, names_.size());
          part.assign(std::make_move_iterator(names_.begin()),
                      std::make_move_iterator(names_.begin() + static_cast<ptrdiff_t>(n)));
          names_.erase(names_.begin(), names_.begin() + static_cast<ptrdiff_t>(n));
        }
        Batch batch = ScanIntoReport(rules_, part, options_);
        part = {};
        const size_t found = batch.report->size();
        std::lock_guard<std::mutex> lock(mu_);
        if (found * 2 < findings_) {
          size_ = std::min(hi_, size_ * 2);
        } else if (found > findings_) {
          size_ = std::max(lo_, size_ * findings_ / found);
        }
        ready_ = std::move(batch);
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failed_) failed_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    changed_.notify_all();
  }

  const std::shared_ptr<sc::RuleSet> rules_;
  const sc::ScanOptions options_;
  std::mutex mu_;
  struct Signals {
    std::condition_variable changed, walked;
  };
  std::unique_ptr<Signals> signals_ = std::make_unique<Signals>();  // (see ~ScanQueue)
  // ready_, done_, walking_: the caller's and the driver's.
  std::condition_variable& changed_ = signals_->changed;
  // names_ (the driver's alone: not woken per file).
  std::condition_variable& walked_ = signals_->walked;
  std::deque<std::string> names_;    // found and not yet scanned
  size_t want_ = 0;                  // how many names_ the driver waits for (0: none)
  size_t lo_ = 1, size_ = 1, hi_ = 1, findings_ = 1;
  bool walking_ = false;
  std::vector<sc::FileResult> path_errors_;
  const bool want_notebooks_ = false;
  std::vector<std::string> notebooks_;  // the walk's, once it has ended
  uint64_t ignored_ = 0;
  std::optional<Batch> ready_;
  std::exception_ptr failed_;
  bool stop_ = false, done_ = false;
  const pid_t owner_ = getpid();
  std::thread walker_, driver_;  // last: started once the rest is built
};

void RefuseForked(const ScanQueue& q) {
  if (q.Forked()) {
    throw py::value_error("a ScanQueue cannot be read in a process forked from the one that "
                          "made it");
  }
}

// The walk of a scan of `paths` (sc::ListFiles, without the GIL): its files
// as bytes, and its path errors as FileTuples; `ignored` as ListFiles's.
std::pair<py::list, py::list> WalkLists(const std::vector<std::string>& paths,
                                        const Excludes& excludes, bool respect_gitignore,
                                        uint64_t* ignored,
                                        std::vector<std::string>* notebooks = nullptr) {
  const sc::ScanOptions o = Options(paths, excludes, respect_gitignore, 1, 0);
  std::vector<sc::FileResult> errors;
  std::vector<std::string> files;
  {
    py::gil_scoped_release release;
    files = sc::ListFiles(o, &errors, ignored, notebooks);
  }
  py::list names, path_errors;
  for (const std::string& f : files) names.append(py::bytes(f));
  for (const sc::FileResult& r : errors) path_errors.append(FileTuple(r));
  return {names, path_errors};
}

}  // namespace

void BindScan(py::module_& m) {
  py::module_ s = m.def_submodule("_scan", "The static scanner (core/scan; see bind_scan.cc).");

  py::class_<sc::RuleSet, std::shared_ptr<sc::RuleSet>>(s, "RuleSet")
      .def(py::init([](const std::vector<std::tuple<std::string, std::string, bool,
                                                    std::vector<std::string>, std::string>>&
                           rows) {
             std::vector<sc::Rule> rules;
             rules.reserve(rows.size());
             for (const auto& [code, language, kept, spellings, detector] : rows) {
               if (!detector.empty() && !sc::IsKnownDetector(detector)) {
                 throw py::value_error(code + ": unknown detector '" + detector + "'");
               }
               rules.push_back(
                   sc::Rule{code, ParseLanguage(language), kept, spellings, {}, detector});
             }
             return std::make_shared<sc::RuleSet>(std::move(rules));
           }),
           py::arg("rows"),
           "Builds the rules from (code, language, kept, spellings, detector) rows; a rule's "
           "index is its position in `rows`; `detector` names the native detector of a "
           "literal rule, \"\" for a rule of spellings.")
      .def("detector_needles",
           [](const sc::RuleSet& r, const std::string& language) {
             return r.DetectorNeedles(ParseLanguage(language));
           },
           py::arg("language"),
           "The strings a file must contain for the literal rules of `language` to find "
           "anything in it.")
      .def("__len__", [](const sc::RuleSet& r) { return r.rules().size(); });

  s.def(
      "scan_source",
      [](const sc::RuleSet& rules, py::bytes data, const std::string& language,
         bool apply_noqa) {
        const sc::Language lang = ParseLanguage(language);
        std::string_view view;
        {
          char* buf = nullptr;
          ssize_t len = 0;
          if (PyBytes_AsStringAndSize(data.ptr(), &buf, &len) != 0) throw py::error_already_set();
          view = std::string_view(buf, static_cast<size_t>(len));
        }
        sc::FileResult r;
        {
          py::gil_scoped_release release;
          r = sc::ScanSource(rules, lang, view, apply_noqa);
        }
        py::list findings;
        for (const sc::Finding& f : r.findings) findings.append(FindingTuple(f));
        return py::make_tuple(findings, ErrorList(r.errors),
                              r.noqa_fallback ? py::object(py::none())
                                              : py::object(NoqaDict(r.noqa)));
      },
      py::arg("rules"), py::arg("data"), py::arg("language"), py::arg("apply_noqa") = true,
      "Scans one file's bytes: ([finding tuples], [(message, line)], the `# noqa` "
      "directives on the findings' lines as {line: (code, ...)}, (\"\",) for a bare one, "
      "or None where Python's tokenize must read them (nothing was dropped for them: "
      "Note [noqa directives] in core/scan/src/scan_source.cc)). The findings the "
      "directives name are dropped unless apply_noqa is false.");

  s.def(
      "noqa_directives",
      [](py::bytes data) -> py::object {
        std::string_view view;
        {
          char* buf = nullptr;
          ssize_t len = 0;
          if (PyBytes_AsStringAndSize(data.ptr(), &buf, &len) != 0) throw py::error_already_set();
          view = std::string_view(buf, static_cast<size_t>(len));
        }
        std::vector<sc::NoqaDirective> dirs;
        bool ok;
        {
          py::gil_scoped_release release;
          ok = sc::NoqaDirectives(view, &dirs);
        }
        if (!ok) return py::none();
        return NoqaDict(dirs);
      },
      py::arg("data"),
      "The `# noqa` directives of every comment of a Python file's bytes, as scan_source "
      "reads them ({line: (code, ...)}), or None where Python's tokenize must read them.");

  s.def(
      "scan_paths",
      [](const sc::RuleSet& rules, const std::vector<std::string>& paths,
         const Excludes& excludes, bool respect_gitignore, int jobs, uint64_t max_file_size,
         const std::vector<bool>& keep) {
        const sc::ScanOptions o =
            Options(rules, paths, excludes, respect_gitignore, jobs, max_file_size, keep);
        sc::ScanSummary summary;
        {
          py::gil_scoped_release release;
          summary = sc::ScanPaths(rules, o);
        }
        py::list files, path_errors;
        for (sc::FileResult& r : summary.files) {
          files.append(FileTuple(r));
          r = sc::FileResult();  // converted: free it now
        }
        for (const sc::FileResult& r : summary.path_errors) path_errors.append(FileTuple(r));
        return py::make_tuple(files, path_errors, summary.files_scanned, summary.bytes_scanned,
                              summary.ignored);
      },
      py::arg("rules"), py::arg("paths"), py::arg("excludes"), py::arg("respect_gitignore"),
      py::arg("jobs"), py::arg("max_file_size"), py::arg("keep") = std::vector<bool>(),
      "Walks and scans (paths and excludes as bytes (os.fsencode) or str; excludes: "
      "[(pattern, base folder)]; keep: per rule, whether to return its findings): "
      "([(path bytes, language, findings, errors, noqa fallback)] for files with either, "
      "[path errors], files scanned, bytes scanned).");

  {
    py::tuple kinds(6);
    for (int k = 0; k < 6; ++k) kinds[k] = sc::RefKindName(static_cast<sc::RefKind>(k));
    s.attr("KINDS") = kinds;  // by RefKind, what Report.findings takes as `kinds`
  }

  py::class_<Report, std::shared_ptr<Report>>(
      s, "Report", "A tree's scan, its findings kept native (Note [Native reports]).")
      .def("__len__", &Report::size)
      .def_property_readonly("left", &Report::left, "How many findings no filter dropped.")
      .def(
          "files",
          [](const Report& r) {
            py::list out;
            for (const sc::FileResult& f : r.files()) {
              out.append(py::make_tuple(py::bytes(f.path), LanguageName(f.language),
                                        f.findings.size(), ErrorList(f.errors),
                                        f.noqa_fallback));
            }
            return out;
          },
          "[(path bytes, language, number of findings, [(message, line)], noqa fallback: "
          "whether Python's tokenize must read its `# noqa` directives)], path errors first.")
      .def(
          "keys",
          [](const Report& r) {
            py::list out;
            for (const auto& [rule, symbol] : r.keys()) {
              out.append(py::make_tuple(rule, Text(symbol)));
            }
            return out;
          },
          "The distinct (rule, symbol) of the findings, in the order they first come.")
      .def(
          "findings",
          [](const Report& r, py::handle cls, const py::list& file_text,
             const py::list& key_values, const py::list& kinds, int64_t file) {
            const FindingMaker make(r, cls, file_text, key_values, kinds);
            py::list out;
            if (file >= 0) {  // every finding of the file, dropped ones too
              if (static_cast<size_t>(file) >= r.files().size()) {
                throw py::index_error("no such file");
              }
              const auto i = static_cast<uint32_t>(file);
              const std::vector<sc::Finding>& found = r.files()[i].findings;
              size_t g = r.FirstOf(i);
              for (const sc::Finding& f : found) out.append(make.Make(f, i, r.KeyOf(g++)));
              return out;
            }
            for (size_t p = 0; p < r.size(); ++p) {
              const size_t g = r.Nth(p);
              if (!r.Dropped(g)) out.append(make.Make(r.At(g), r.FileOf(g), r.KeyOf(g)));
            }
            return out;
          },
          py::arg("cls"), py::arg("file_text"), py::arg("key_values"), py::arg("kinds"),
          py::arg("file") = -1,
          "The findings left as instances of `cls` (Finding: Note [Native Findings]), in the "
          "output's order; with `file`, every finding of that file.")
      .def("tuples", &Report::Tuples, py::arg("file"),
           "The finding tuples of a file (as scan_source's), dropped ones too.")
      .def("dropped", &Report::DroppedOf, py::arg("file"),
           "The positions in its list of the findings of a file that are dropped.")
      .def("left_per_file", &Report::LeftPerFile)
      .def("left_per_key", &Report::LeftPerKey)
      .def("rules_of", &Report::RulesOf, py::arg("file"),
           "The distinct rules of a file's findings that are left.")
      .def("drop", &Report::Drop, py::arg("file"), py::arg("which"),
           "Drops the findings of a file at these positions of its list.")
      .def("drop_rules", &Report::DropRules, py::arg("file"), py::arg("rules"),
           "Drops the findings of a file of these rules.")
      .def("order", &Report::Order, py::arg("rank"),
           "Orders the output by (rank of the file, start), stably.");

  py::class_<Renderer>(s, "Renderer", "Writes a Report's findings by a template.")
      .def(py::init<std::shared_ptr<Report>, const py::list&, const py::list&, const py::list&,
                    const std::string&>(),
           py::arg("report"), py::arg("parts"), py::arg("file_text"), py::arg("key_text"),
           py::arg("sep"),
           "parts: str (literal text) or a field (0 the file's text, 1 the key's, 2 line, "
           "3 column, 4 end line, 5 end column).")
      .def("next", &Renderer::Next, py::arg("n"),
           "The next n findings left, joined by sep, as UTF-8 bytes; None after the last.");

  s.def(
      "scan_tree",
      [](std::shared_ptr<sc::RuleSet> rules, const std::vector<std::string>& paths,
         const Excludes& excludes, bool respect_gitignore, int jobs, uint64_t max_file_size,
         const std::vector<bool>& keep) {
        const sc::ScanOptions o =
            Options(*rules, paths, excludes, respect_gitignore, jobs, max_file_size, keep);
        std::shared_ptr<Report> report;
        sc::ScanSummary summary;
        {
          py::gil_scoped_release release;
          summary = sc::ScanPaths(*rules, o);
          std::vector<sc::FileResult> files = std::move(summary.path_errors);
          files.reserve(files.size() + summary.files.size());
          for (sc::FileResult& r : summary.files) files.push_back(std::move(r));
          report = std::make_shared<Report>(rules, std::move(files));
        }
        return py::make_tuple(report, summary.files_scanned, summary.bytes_scanned,
                              summary.ignored);
      },
      py::arg("rules"), py::arg("paths"), py::arg("excludes"), py::arg("respect_gitignore"),
      py::arg("jobs"), py::arg("max_file_size"), py::arg("keep") = std::vector<bool>(),
      "scan_paths, its files (path errors first) kept in a Report: (report, files scanned, "
      "bytes scanned, ignored).");

  s.def(
      "scan_files",
      [](const sc::RuleSet& rules, const std::vector<std::string>& paths, int jobs,
         uint64_t max_file_size, const std::vector<bool>& keep) {
        const sc::ScanOptions o = Options(rules, {}, {}, false, jobs, max_file_size, keep);
        sc::ScanSummary summary;
        {
          py::gil_scoped_release release;
          summary = sc::ScanFiles(rules, paths, o);
        }
        py::list files;
        for (sc::FileResult& r : summary.files) {
          files.append(FileTuple(r));
          r = sc::FileResult();
        }
        for (const sc::FileResult& r : summary.path_errors) files.append(FileTuple(r));
        return py::make_tuple(files, summary.files_scanned, summary.bytes_scanned);
      },
      py::arg("rules"), py::arg("paths"), py::arg("jobs"), py::arg("max_file_size"),
      py::arg("keep") = std::vector<bool>(),
      "Scans the files `paths` (bytes or str; from list_files): ([(path bytes, language, "
      "findings, errors, noqa fallback)] for files with either, files scanned, bytes scanned).");

  s.def(
      "scan_files_report",
      [](std::shared_ptr<sc::RuleSet> rules, const std::vector<std::string>& paths, int jobs,
         uint64_t max_file_size, const std::vector<bool>& keep) {
        const sc::ScanOptions o = Options(*rules, {}, {}, false, jobs, max_file_size, keep);
        ReportBatch b;
        {
          py::gil_scoped_release release;
          b = ScanIntoReport(rules, paths, o);
        }
        return py::make_tuple(b.report, b.files, b.bytes);
      },
      py::arg("rules"), py::arg("paths"), py::arg("jobs"), py::arg("max_file_size"),
      py::arg("keep") = std::vector<bool>(),
      "scan_files, its files (path errors last, as there) kept in a Report: (report, files "
      "scanned, bytes scanned).");

  py::class_<ScanQueue>(s, "ScanQueue",
                        "scan_files_report in batches, scanned one batch ahead on a thread of "
                        "its own, the tree walked meanwhile on another (Note [Scan ahead]).")
      .def(py::init([](std::shared_ptr<sc::RuleSet> rules, std::vector<std::string> names,
                       int jobs, uint64_t max_file_size, const std::vector<bool>& keep,
                       size_t lo, size_t first, size_t hi, size_t findings) {
             sc::ScanOptions scan = Options(*rules, {}, {}, false, jobs, max_file_size, keep);
             return std::make_unique<ScanQueue>(rules, std::move(names), std::move(scan),
                                                ScanQueue::Sizes{lo, first, hi, findings});
           }),
           py::arg("rules"), py::arg("names"), py::arg("jobs"), py::arg("max_file_size"),
           py::arg("keep"), py::arg("lo"), py::arg("first"), py::arg("hi"), py::arg("findings"),
           "Scans the files `names` (from walk_files) in batches: the first `first` files, "
           "then each about `findings` findings by the last one's, within [lo, hi] files.")
      .def_static(
          "walking",
          [](std::shared_ptr<sc::RuleSet> rules, const std::vector<std::string>& paths,
             const Excludes& excludes, bool respect_gitignore, int jobs, uint64_t max_file_size,
             const std::vector<bool>& keep, size_t lo, size_t first, size_t hi,
             size_t findings, bool notebooks) {
            return std::make_unique<ScanQueue>(
                rules, Options(paths, excludes, respect_gitignore, 1, 0),
                Options(*rules, {}, {}, false, jobs, max_file_size, keep),
                ScanQueue::Sizes{lo, first, hi, findings}, notebooks);
          },
          py::arg("rules"), py::arg("paths"), py::arg("excludes"), py::arg("respect_gitignore"),
          py::arg("jobs"), py::arg("max_file_size"), py::arg("keep"), py::arg("lo"),
          py::arg("first"), py::arg("hi"), py::arg("findings"), py::arg("notebooks") = false,
          "A ScanQueue of what the walk of `paths` finds (as walk_files walks them), "
          "scanned as it is found; `notebooks`: walked() gives the notebooks found too.")
      .def(
          "next",
          [](ScanQueue& q) -> py::object {
            RefuseForked(q);
            std::optional<ScanQueue::Batch> b;
            {
              py::gil_scoped_release release;
              b = q.Next();
            }
            if (!b) return py::none();
            return py::make_tuple(b->report, b->files, b->bytes);
          },
          "The next batch as scan_files_report gives it, (report, files scanned, bytes "
          "scanned); None after the last.")
      .def(
          "walked",
          [](ScanQueue& q) -> py::tuple {
            RefuseForked(q);
            std::pair<std::vector<sc::FileResult>, uint64_t> walked;
            std::vector<std::string> notebooks;
            {
              py::gil_scoped_release release;
              walked = q.Walked(&notebooks);
            }
            py::list path_errors;
            for (const sc::FileResult& r : walked.first) path_errors.append(FileTuple(r));
            if (!q.KeepsNotebooks()) return py::make_tuple(path_errors, walked.second);
            py::list found;
            for (const std::string& n : notebooks) found.append(py::bytes(n));
            return py::make_tuple(path_errors, walked.second, found);
          },
          "The walk's (path errors, ignored) as walk_files gives them, once it has ended "
          "(once: a second call gives no errors); ([], 0) for a queue given the names. A "
          "queue made with notebooks=True adds the notebooks found (bytes).");

  s.def(
      "list_files",
      [](const std::vector<std::string>& paths, const Excludes& excludes, bool respect_gitignore) {
        auto [names, path_errors] = WalkLists(paths, excludes, respect_gitignore, nullptr);
        return py::make_tuple(names, path_errors);
      },
      py::arg("paths"), py::arg("excludes"), py::arg("respect_gitignore"),
      "The files scan_paths would scan, in its order (paths and excludes as bytes or str; "
      "the files as bytes).");

  s.def(
      "walk_files",
      [](const std::vector<std::string>& paths, const Excludes& excludes, bool respect_gitignore,
         bool notebooks) -> py::tuple {
        uint64_t ignored = 0;
        std::vector<std::string> found;
        auto [names, path_errors] = WalkLists(paths, excludes, respect_gitignore, &ignored,
                                              notebooks ? &found : nullptr);
        if (!notebooks) return py::make_tuple(names, path_errors, ignored);
        py::list nbs;
        for (const std::string& n : found) nbs.append(py::bytes(n));
        return py::make_tuple(names, path_errors, ignored, nbs);
      },
      py::arg("paths"), py::arg("excludes"), py::arg("respect_gitignore"),
      py::arg("notebooks") = false,
      "list_files, and how many source files and folders ignore rules kept out of the walk: "
      "(files, path errors, ignored), what a tree's scan in batches (scan_files_report) "
      "starts from; with notebooks=True, a fourth item: the Jupyter notebooks the walk found "
      "(bytes), which it does not scan.");

  s.def(
      "glob_match", [](const std::string& glob, const std::string& path) {
        py::gil_scoped_release release;
        return sc::GlobMatch(glob, path);
      },
      py::arg("glob"), py::arg("path"), "Gitignore glob matching (for tests).");

  s.def(
      "ignore_match",
      [](const std::vector<std::string>& lines, const std::string& base, const std::string& path,
         bool is_dir) {
        sc::IgnoreList list;
        for (const std::string& l : lines) list.AddLine(l, base);
        py::gil_scoped_release release;
        return list.Match(path, is_dir);
      },
      py::arg("lines"), py::arg("base"), py::arg("path"), py::arg("is_dir"),
      "IgnoreList::Match for the .gitignore `lines` of folder `base`: +1 ignored, -1 "
      "re-included, 0 no pattern matches (for tests).");

  s.def(
      "needles",
      [](const sc::RuleSet& rules, const std::string& language) {
        std::vector<py::bytes> out;
        for (const std::string& n : rules.Needles(ParseLanguage(language))) out.emplace_back(n);
        return out;
      },
      py::arg("rules"), py::arg("language"),
      "The byte strings one of which a file must contain to be lexed (the prefilter).");
}

}  // namespace anydev::python
