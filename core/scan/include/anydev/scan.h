// anydev/scan.h: the static scanner behind `anydev scan`. It finds references
// to the legacy symbols of the compat table in Python and C/C++/CUDA/HIP
// source, resolving imports and aliases, and never looks inside strings,
// comments, docstrings, raw strings or `#if 0` groups.
//
// The rules come from the caller (the Python package builds them from
// anydev._compat.table.ROWS); this library knows nothing of the table's
// files and does not depend on the device runtime.
//
// Example:
//   anydev::scan::RuleSet rules({{"AD103", Language::kPython, false,
//                                 {"torch.cuda.current_device"}}});
//   FileResult r = anydev::scan::ScanSource(
//       rules, Language::kPython, "import torch as th\nth.cuda.current_device()\n");
//   // r.findings[0]: line 2, column 1, kind kCall, text "th.cuda.current_device"
//   // (a view into r.texts: copy it to keep it past r)
//
// Thread safety: a RuleSet is immutable once built and may be shared by any
// number of threads; ScanSource and ScanPaths keep all state per call.
#ifndef ANYDEV_SCAN_H_
#define ANYDEV_SCAN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace anydev::scan {

enum class Language : uint8_t { kPython, kCpp };

// Returns the language of a file by its extension (".py", ".pyi"; ".h", ".hpp",
// ".hh", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".hip"), or false.
bool LanguageOfPath(std::string_view path, Language* language);

// One row of the compat table, as the scanner needs it.
struct Rule {
  std::string code;                    // "AD103"
  Language language;                   // which files it applies to
  bool kept;                           // a kept row: matches, but is never a finding
  std::vector<std::string> spellings;  // legacy name first, then `also`; "." or "::" separated
  // Byte strings one of which every file with a finding of this rule
  // contains (Note [Needles] in prefilter.cc). Empty: the spellings' own
  // components serve. A rule that matches anything but qualified names of
  // its spellings (a string literal, say) must give them; an empty string
  // turns the prefilter off for the language.
  std::vector<std::string> needles = {};
  // A literal rule (compat_map/literals.toml): the native detector that finds
  // it ("py.device_call", see IsKnownDetector); empty for a rule of spellings.
  std::string detector = {};
};

// Returns true if `name` is a detector a Rule may name (core/scan/src/literal_rules.cc).
bool IsKnownDetector(std::string_view name);

// The rules, indexed for longest-prefix lookup of qualified names.
class RuleSet {
 public:
  explicit RuleSet(std::vector<Rule> rules);
  ~RuleSet();
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  const std::vector<Rule>& rules() const { return rules_; }

  // A spelling of a rule, as matched.
  struct Spelling {
    int rule;               // index into rules()
    std::string_view text;  // the spelling (owned by the RuleSet)
    int components;         // names in it: 3 for "torch.cuda.synchronize"
  };

  // Returns the spelling that equals `qualified` exactly, or nullptr.
  const Spelling* Find(Language language, std::string_view qualified) const;
  // Returns true if `name` is the first component of some spelling ("torch",
  // "c10", "at").
  bool IsRoot(Language language, std::string_view name) const;
  // The roots IsRoot knows, in the order their spellings came.
  const std::vector<std::string_view>& Roots(Language language) const;
  // Returns true if `name` is one of the components of some spelling
  // ("cuda", "current_device").
  bool HasComponent(Language language, std::string_view name) const;
  // Returns true if `qualified` is a proper prefix, at a separator, of some
  // spelling ("torch.cuda", "c10::cuda").
  bool IsNamespace(Language language, std::string_view qualified) const;
  // The components that follow `ns` (a namespace, as IsNamespace) in the
  // spellings: "CUDAStream", "device_count", ... for "c10::cuda"; null if
  // none (the C++ scanner's fast path: Note [Fast path for C++]).
  const std::vector<std::string_view>* Followers(Language language, std::string_view ns) const;
  // The largest number of components of any spelling of the language.
  int MaxComponents(Language language) const {
    return max_components_[static_cast<int>(language)];
  }
  // Returns false only if no rule of the language can have a finding in
  // `text` (it contains none of their needles). Vectorised; reads nothing
  // outside `text`.
  bool MayMatch(Language language, std::string_view text) const;
  // MayMatch for a text followed by at least 16 readable bytes (faster).
  bool MayMatchPadded(Language language, std::string_view text) const;
  // The needles MayMatch looks for (for tests and tools).
  const std::vector<std::string>& Needles(Language language) const;
  // The byte strings of which each line with a finding of a spelling or a
  // literal rule holds one (the scanner's fast path; Note [Fast path] in
  // python_scan.cc), or null when the rules allow no such list.
  const std::vector<std::string>* FastPathNeedles(Language language) const;
  // The same needles split for the fast paths' searches (Note [Needles as
  // words] in python_scan.cc, Note [C++ needles as words] in cpp_scan.cc):
  // those each finding's line holds as a whole word (a spelling's
  // component, a literal rule's word), and the rules' own needles, held
  // anyhow; valid where FastPathNeedles is not null.
  const std::vector<std::string>& FastPathWords(Language language) const;
  const std::vector<std::string>& FastPathPlain(Language language) const;

  // The index of the rule whose detector is `detector` (a value of the
  // internal enum in literal_rules.h), or -1 when no rule names it.
  int DetectorRule(int detector) const;
  // True if some rule of the language names a detector.
  bool HasDetectors(Language language) const;
  // The strings a file must contain for the detectors of the language to
  // find anything in it ("cuda", "nccl", "CUDA"): a prefilter that skips a
  // file without any of them loses no literal finding.
  const std::vector<std::string>& DetectorNeedles(Language language) const;

  struct Index;

 private:
  void IndexDetectors();
  void BuildNeedles();

  std::vector<Rule> rules_;
  std::unique_ptr<Index> index_;
  int max_components_[2] = {0, 0};  // by language (here: the resolvers ask at every chain)
};

enum class RefKind : uint8_t {
  kCall,       // the reference is followed by `(`
  kReference,  // any other use: attribute read, isinstance, annotation, decorator
  kImport,     // a name a `from ... import` or `using ...;` brings in, or `import a.b`
  kMock,       // a test's patch target: `mock.patch("torch.cuda.X")`, `patch.object(torch.cuda, "X")`
  kLiteral,    // a literal rule's device literal in a device position ("cuda", at::kCUDA)
  kIdiom,      // a literal rule's idiom, spanning the whole expression or statement
};

const char* RefKindName(RefKind kind);

// One reference to a legacy symbol. Positions are 1-based lines and columns
// in Unicode code points (a BOM is not counted); `end_*` are exclusive.
// Offsets are bytes of the file as given (a BOM included). Its views live as
// long as their owners: `symbol` the RuleSet, `text` the FileResult it came
// in (or a copy of that FileResult: they share the texts).
struct Finding {
  int rule;                 // index into RuleSet::rules()
  RefKind kind;
  std::string_view symbol;  // the spelling matched (owned by the RuleSet)
  uint32_t start;           // byte offset of the reference text
  uint32_t end;             // byte offset just past it
  int64_t call_end;         // for kCall: byte offset just past the matching ')'; else -1
  int line, column, end_line, end_column;
  std::string_view text;    // source[start, end), in FileResult::texts
};

// A problem with one file: it could not be read, or not be scanned soundly
// to its end. `line` is 0 when the problem has no line.
struct FileError {
  std::string message;
  int line = 0;
};

// A `# noqa` directive of a Python file (Note [noqa directives] in
// scan_source.cc): the line of its comment and the codes it names, upper-cased
// (`# noqa: AD1` names "AD1", a prefix of every AD1xx rule); `all` for a bare
// `# noqa`, which names every rule.
struct NoqaDirective {
  int line = 0;
  bool all = false;
  std::vector<std::string> codes;
};

struct FileResult {
  std::string path;
  Language language = Language::kPython;
  std::vector<Finding> findings;
  // The bytes of the findings' texts, one block for all (Note [Finding texts]
  // in scan_source.cc). Shared and never changed, so that a copy of the
  // FileResult, or a move (of it or of the vector that holds it), leaves
  // every finding's text valid; null when there is no finding.
  std::shared_ptr<const std::string> texts;
  std::vector<FileError> errors;
  // The `# noqa` directives on the lines of the file's findings (those they
  // dropped included), in line order: what `anydev fix` asks of a finding the
  // scan dropped. Python files only.
  std::vector<NoqaDirective> noqa;
  // The directives are not read here: a comment on a finding's line mentions
  // `noqa` where the scanner cannot tell for certain what Python's tokenize
  // makes of the file (an error, an encoding other than UTF-8, a lone '\r',
  // a tab in an indent, a comment in an f-string's field: Note [noqa
  // directives]). No finding was dropped for a directive then and `noqa` is
  // empty; the caller reads them (anydev/_migrate/noqa.py).
  bool noqa_fallback = false;
};

// Scans one file's bytes. Findings on a line that carries an
// `anydev: ignore` comment for their rule are dropped, and in a Python file
// those a `# noqa` directive names unless `apply_noqa` is false.
FileResult ScanSource(const RuleSet& rules, Language language, std::string_view source,
                      bool apply_noqa = true);

// The `# noqa` directives of every comment of a Python file's bytes, as
// ScanSource reads them for the lines it drops findings on; false (the
// caller must read them) where ScanSource would set noqa_fallback for a
// finding on a directive's line.
bool NoqaDirectives(std::string_view source, std::vector<NoqaDirective>* out);

struct ScanOptions {
  std::vector<std::string> paths;  // files and directories
  // Gitignore-style patterns, each relative to its folder `base` (absolute
  // or relative to the current directory); a pattern without a '/' matches
  // a name at any depth. They apply to the paths given too.
  struct Exclude {
    std::string pattern;
    std::string base;
  };
  std::vector<Exclude> excludes;
  bool respect_gitignore = true;      // .gitignore files and .git/info/exclude
  int jobs = 0;                       // threads; 0: all cores
  uint64_t max_file_size = 20u << 20;
  // By rule index, whether its findings are wanted (empty: all). The others
  // are dropped as each file is scanned, never held.
  std::vector<bool> keep;
};

struct ScanSummary {
  // Files with findings or errors, in walk order (sorted names per folder).
  std::vector<FileResult> files;
  // Problems with the paths themselves (a path that does not exist).
  std::vector<FileResult> path_errors;
  uint64_t files_scanned = 0;
  uint64_t bytes_scanned = 0;
  // Source files and folders that .gitignore or .git/info/exclude rules kept
  // out of the walk (a folder counts once; what it holds is not looked at).
  uint64_t ignored = 0;
};

ScanSummary ScanPaths(const RuleSet& rules, const ScanOptions& options);

// Scans the files `paths` as ScanPaths scans what it walks (options.paths,
// excludes and gitignore unused): with ListFiles, a tree in batches, so that
// a caller streaming its output holds one batch's findings at a time.
ScanSummary ScanFiles(const RuleSet& rules, const std::vector<std::string>& paths,
                      const ScanOptions& options);

// Lists the source files ScanPaths would scan, in the same order (for tests
// and tools, and for a caller that scans them with ScanFiles in batches);
// `ignored`, when given, gets ScanSummary::ignored. `notebooks`, when given,
// gets the Jupyter notebooks (.ipynb) the walk finds under the same ignore
// rules and excludes, in walk order, a path given by name included: they are
// not sources of this scanner (the Python package reads their code cells).
std::vector<std::string> ListFiles(const ScanOptions& options,
                                   std::vector<FileResult>* path_errors,
                                   uint64_t* ignored = nullptr,
                                   std::vector<std::string>* notebooks = nullptr);

// ListFiles, giving each file to `sink` as the walk finds it (in the same
// order), for a caller that scans the first files while the walk goes on. An
// exception `sink` throws ends the walk and is thrown on.
void WalkFiles(const ScanOptions& options, std::vector<FileResult>* path_errors,
               const std::function<void(std::string&&)>& sink, uint64_t* ignored = nullptr,
               std::vector<std::string>* notebooks = nullptr);

// Returns true if `path` names a Jupyter notebook (".ipynb", any case).
bool IsNotebookPath(std::string_view path);

struct CompiledGlob;  // walk.cc

// Gitignore pattern matching, exposed for tests.
class IgnoreList {
 public:
  // Adds one line of a .gitignore file whose folder is `base` (a path,
  // relative or absolute, compared textually with the paths later matched).
  void AddLine(std::string_view line, std::string_view base);
  // Returns +1 if the last pattern matching `path` ignores it, -1 if it
  // re-includes it (`!pattern`), 0 if none matches.
  int Match(std::string_view path, bool is_dir) const;
  // The same, asking every pattern (Match asks only those its filter lets
  // through: Note [Ignore patterns by their last byte] in walk.cc).
  int MatchEveryPattern(std::string_view path, bool is_dir) const;
  bool empty() const { return patterns_.empty(); }

 private:
  struct Pattern {
    std::string glob;  // without '!', leading '/', trailing '/'
    std::string prefix;  // anchored: glob's bytes before its first wildcard
    std::shared_ptr<const CompiledGlob> compiled;  // the rest of glob, compiled once
    std::string base;  // folder of the file, no trailing '/'
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // had a '/' before its end: matched against the whole relative path
    bool base_root = false;  // base is "/"
    bool base_here = false;  // base is empty or ".": paths are relative to it as they are
  };
  // Pattern p's answer for `path` (+1, -1, 0: no match); `name`: its last name.
  static int MatchOne(const Pattern& p, std::string_view path, std::string_view name);
  // Sets pattern k's bits in filter_ (Note [Ignore patterns by their last byte]).
  void Index(size_t k);
  std::vector<Pattern> patterns_;
  // Bit k of row (d, c), word k / 64: pattern k may match a folder (d = 1)
  // or a file (d = 0) whose path ends in byte c; row (d, 256): whatever the
  // path. words_ 64-bit words a row, 257 rows for each d.
  std::vector<uint64_t> filter_;
  size_t words_ = 0;
};

// Matches a gitignore glob (`*`, `?`, `[...]`, `**`) against a '/'-separated
// path as git's wildmatch does for .gitignore: `*`, `?` and `[...]` do not
// match '/'; `**/`, `/**/` and a trailing `/**` cross folders, any other `**`
// is `*`. Linear in the path's length for any glob (Note [Linear globs]).
bool GlobMatch(std::string_view glob, std::string_view path);

}  // namespace anydev::scan

#endif  // ANYDEV_SCAN_H_
