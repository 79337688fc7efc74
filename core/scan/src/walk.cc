// Walking the tree (gitignore rules, excludes, symlinks) and scanning the
// files it yields on a pool of threads. Each thread reads one whole file at a
// time into a buffer it reuses, so memory follows the largest file and the
// thread count, not the size of the tree.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "anydev/scan.h"
#include "internal.h"

namespace anydev::scan {
namespace {

// ---------------------------------------------------------------------------
// Globs.
//
// Note [Linear globs]: a glob is compiled to a list of steps and matched by
// simulating the automaton it describes (the set of live steps, advanced one
// byte at a time), so a match costs O(name length x steps) for any pattern:
// no backtracking, none of the exponential cases of a recursive matcher on
// `*a*a*a*a*b`. The steps follow git's wildmatch with WM_PATHNAME (what
// .gitignore uses): `*`, `?` and `[...]` never match '/'; `**` is special
// only as a whole segment: a leading `**/` and an inner `/**/` match zero
// or more folders, a trailing `/**` everything below; any other `**` is `*`.

}  // namespace

// One step of a compiled glob.
struct GlobStep {
  enum Kind : uint8_t {
    kByte,   // one byte, `c`
    kOne,    // `?`: any byte but '/'
    kClass,  // `[...]`: set[c], never '/'
    kStar,   // `*`: any run of bytes but '/'
    kAll,    // `**` at the end: any run of bytes
    kDirs,   // `**/`: zero or more folders, `([^/]*/)*`; at a folder boundary
    kDirsIn,  // always right after kDirs: inside one of its folder names
  };
  Kind kind;
  unsigned char c;
  int set;  // index into CompiledGlob::sets for kClass
};

// Note [Glob shapes]: most patterns of a real tree's .gitignore files are a
// name (`__pycache__`, `build`), `*` then bytes (`*.so`, `*.egg-info`) or
// bytes then `*` (`slurm*`), and every source file and folder of the walk is
// matched against all of them, last first (27 patterns for Megatron-LM's
// 2,017 entries: 15.3M instructions of its 258.7M, the shapes' tests made
// again at each match). Their shape is found once, as the glob compiles,
// and matched by a comparison of `lit`.
struct CompiledGlob {
  enum Shape : uint8_t {
    kGeneral,  // the automaton (RunGlob)
    kPlain,    // bytes only: the path is `lit`
    kSuffix,   // `*` then bytes: the path ends with `lit`, no '/' before it
    kPrefix,   // bytes then `*`: the path starts with `lit`, no '/' after it
    kDirsThen,  // `**/` then bytes: the path is `lit` or ends with '/' and `lit`
  };
  std::vector<GlobStep> steps;
  std::vector<std::array<bool, 256>> sets;
  bool never = false;  // a trailing lone '\' or an unclosed '[': matches nothing (as git)
  Shape shape = kGeneral;
  std::string lit;  // the bytes of a shape other than kGeneral
  // A general glob's steps of one byte each (kByte, kOne, kClass) before
  // its first other step and after its last (Note [Glob heads and tails]);
  // `fixed`: it has no other step (a path matches with n bytes exactly).
  uint16_t head = 0, tail = 0;
  bool fixed = false;
  std::string need;  // its longest run of kByte steps, which a path it matches holds
};

namespace {

// Parses the bracket expression at g (just after '['); returns the position
// past its ']', or nullptr if it is not closed (then the glob matches nothing).
const char* ParseClass(const char* g, const char* ge, std::array<bool, 256>* set) {
  set->fill(false);
  bool negate = false;
  if (g < ge && (*g == '!' || *g == '^')) {
    negate = true;
    ++g;
  }
  bool first = true;
  while (g < ge && (*g != ']' || first)) {
    first = false;
    unsigned char lo = static_cast<unsigned char>(*g);
    if (lo == '\\' && g + 1 < ge) lo = static_cast<unsigned char>(*++g);
    unsigned char hi = lo;
    if (g + 2 < ge && g[1] == '-' && g[2] != ']') {
      hi = static_cast<unsigned char>(g[2]);
      if (hi == '\\' && g + 3 < ge) {
        hi = static_cast<unsigned char>(g[3]);
        ++g;
      }
      g += 2;
    }
    for (int c = lo; c <= hi; ++c) (*set)[static_cast<size_t>(c)] = true;
    ++g;
  }
  if (g >= ge) return nullptr;
  if (negate) {
    for (bool& b : *set) b = !b;
  }
  (*set)['/'] = false;
  return g + 1;
}

CompiledGlob CompileGlob(std::string_view glob) {
  CompiledGlob out;
  const char* const g0 = glob.data();
  const char* const ge = g0 + glob.size();
  const char* g = g0;
  while (g < ge) {
    const char c = *g;
    if (c == '*') {
      const char* run = g;
      while (g < ge && *g == '*') ++g;
      const bool segment_start = run == g0 || run[-1] == '/';
      if (g - run >= 2 && segment_start && (g == ge || *g == '/')) {
        if (g == ge) {
          out.steps.push_back({GlobStep::kAll, 0, 0});
        } else {
          out.steps.push_back({GlobStep::kDirs, 0, 0});
          out.steps.push_back({GlobStep::kDirsIn, 0, 0});
          ++g;  // the '/' is part of the step
        }
      } else if (out.steps.empty() || out.steps.back().kind != GlobStep::kStar) {
        out.steps.push_back({GlobStep::kStar, 0, 0});
      }
      continue;
    }
    if (c == '?') {
      out.steps.push_back({GlobStep::kOne, 0, 0});
      ++g;
      continue;
    }
    if (c == '[') {
      std::array<bool, 256> set;
      if (const char* end = ParseClass(g + 1, ge, &set)) {
        out.sets.push_back(set);
        out.steps.push_back({GlobStep::kClass, 0, static_cast<int>(out.sets.size() - 1)});
        g = end;
        continue;
      }
      // An unclosed '[': git's wildmatch gives up on the whole pattern, which
      // then matches nothing (`*[.py` ignores no file, `a[.py` not "a[.py").
      out.never = true;
      return out;
    }
    if (c == '\\') {
      if (g + 1 == ge) {
        out.never = true;
        return out;
      }
      ++g;
    }
    out.steps.push_back({GlobStep::kByte, static_cast<unsigned char>(*g), 0});
    ++g;
  }
  // Its shape (Note [Glob shapes]).
  const size_t n = out.steps.size();
  size_t bytes = 0;
  for (const GlobStep& st : out.steps) bytes += st.kind == GlobStep::kByte;
  const bool star_first = n >= 1 && out.steps[0].kind == GlobStep::kStar;
  const bool star_last = n >= 1 && out.steps[n - 1].kind == GlobStep::kStar;
  if (bytes == n) {
    out.shape = CompiledGlob::kPlain;
  } else if (star_first && bytes == n - 1) {
    out.shape = CompiledGlob::kSuffix;
  } else if (star_last && bytes == n - 1) {
    out.shape = CompiledGlob::kPrefix;
  } else if (n >= 2 && out.steps[0].kind == GlobStep::kDirs && bytes == n - 2) {
    out.shape = CompiledGlob::kDirsThen;  // (kDirsIn always follows kDirs)
  }
  if (out.shape != CompiledGlob::kGeneral) {
    for (const GlobStep& st : out.steps) {
      if (st.kind == GlobStep::kByte) out.lit.push_back(static_cast<char>(st.c));
    }
  } else if (n < 0xFFFF) {
    const auto one = [&out](size_t k) {
      const GlobStep::Kind kind = out.steps[k].kind;
      return kind == GlobStep::kByte || kind == GlobStep::kOne || kind == GlobStep::kClass;
    };
    size_t head = 0, tail = 0;
    while (head < n && one(head)) ++head;
    while (tail < n - head && one(n - 1 - tail)) ++tail;
    out.head = static_cast<uint16_t>(head);
    out.tail = static_cast<uint16_t>(tail);
    out.fixed = head == n;
    std::string run;
    for (size_t k = 0; k <= n; ++k) {
      if (k < n && out.steps[k].kind == GlobStep::kByte) {
        run.push_back(static_cast<char>(out.steps[k].c));
      } else {
        if (run.size() > out.need.size()) out.need = run;
        run.clear();
      }
    }
  }
  return out;
}

// Whether step k (of one byte) matches byte b.
inline bool StepMatches(const CompiledGlob& cg, size_t k, unsigned char b) {
  const GlobStep& s = cg.steps[k];
  switch (s.kind) {
    case GlobStep::kByte: return b == s.c;
    case GlobStep::kOne: return b != '/';
    case GlobStep::kClass: return cg.sets[static_cast<size_t>(s.set)][b];
    default: return false;
  }
}

// Adds step k to the live set, and every step an empty match reaches from it.
inline void Enter(const CompiledGlob& cg, size_t k, uint8_t* live) {
  const size_t n = cg.steps.size();
  while (k < n && !live[k]) {
    live[k] = 1;
    const GlobStep::Kind kind = cg.steps[k].kind;
    if (kind == GlobStep::kStar || kind == GlobStep::kAll) {
      ++k;  // may match nothing
    } else if (kind == GlobStep::kDirs) {
      k += 2;  // no folder at all: past its kDirsIn too
    } else {
      return;
    }
  }
  if (k == n) live[n] = 1;
}

bool RunGlob(const CompiledGlob& cg, std::string_view path) {
  if (cg.never) return false;
  const size_t n = cg.steps.size();
  const std::string_view lit = cg.lit;
  switch (cg.shape) {  // Note [Glob shapes]
    case CompiledGlob::kPlain:
      return path == lit;
    case CompiledGlob::kSuffix:
      return path.size() >= lit.size() &&
             path.compare(path.size() - lit.size(), lit.size(), lit) == 0 &&
             path.substr(0, path.size() - lit.size()).find('/') == std::string_view::npos;
    case CompiledGlob::kPrefix:
      return path.size() >= lit.size() && path.compare(0, lit.size(), lit) == 0 &&
             path.find('/', lit.size()) == std::string_view::npos;
    case CompiledGlob::kDirsThen:  // `([^/]*/)*` is empty or ends with '/'
      return path.size() >= lit.size() &&
             path.compare(path.size() - lit.size(), lit.size(), lit) == 0 &&
             (path.size() == lit.size() || path[path.size() - lit.size() - 1] == '/');
    case CompiledGlob::kGeneral:
      break;
  }
  // Note [Glob heads and tails]: a general glob ran its automaton over every
  // path it was asked about (`*.py[cod]` against every name of a tree,
  // `src/*/version.info` against every path below src/: 10.8M instructions
  // of pytorch-lightning's 62.5M). A match starts with the bytes its head's
  // steps match and ends with those its tail's match (each such step takes
  // exactly one byte, and the steps between may match nothing or more), so
  // those are asked first, from both ends, and most paths fail there; and
  // it holds the bytes of each run of kByte steps (`*docs/examples*`, whose
  // head and tail are empty: 826 paths of that tree each), so the longest
  // is looked for.
  {
    const size_t head = cg.head, tail = cg.tail, size = path.size();
    if (cg.fixed ? size != n : size < head + tail) return false;
    const unsigned char* u = reinterpret_cast<const unsigned char*>(path.data());
    for (size_t k = tail; k-- > 0;) {  // from the last byte: most names differ there
      if (!StepMatches(cg, n - tail + k, u[size - tail + k])) return false;
    }
    for (size_t k = 0; k < head; ++k) {
      if (!StepMatches(cg, k, u[k])) return false;
    }
    if (cg.fixed) return true;
    if (cg.need.size() > 1 && path.find(cg.need) == std::string_view::npos) return false;
  }
  uint8_t small[2][64];
  std::vector<uint8_t> big;
  uint8_t* cur = small[0];
  uint8_t* nxt = small[1];
  if (n + 1 > sizeof small[0]) {
    big.assign(2 * (n + 1), 0);
    cur = big.data();
    nxt = big.data() + n + 1;
  }
  std::memset(cur, 0, n + 1);
  Enter(cg, 0, cur);
  for (const char ch : path) {
    const unsigned char b = static_cast<unsigned char>(ch);
    std::memset(nxt, 0, n + 1);
    bool any = false;
    for (size_t k = 0; k < n; ++k) {
      if (!cur[k]) continue;
      const GlobStep& s = cg.steps[k];
      switch (s.kind) {
        case GlobStep::kByte:
          if (b == s.c) Enter(cg, k + 1, nxt), any = true;
          break;
        case GlobStep::kOne:
          if (b != '/') Enter(cg, k + 1, nxt), any = true;
          break;
        case GlobStep::kClass:
          if (cg.sets[static_cast<size_t>(s.set)][b]) Enter(cg, k + 1, nxt), any = true;
          break;
        case GlobStep::kStar:
          if (b != '/') Enter(cg, k, nxt), any = true;
          break;
        case GlobStep::kAll:
          Enter(cg, k, nxt), any = true;
          break;
        case GlobStep::kDirs:  // at a boundary: a folder name starts (or an empty one ends)
          if (b == '/') {
            Enter(cg, k, nxt);
          } else {
            nxt[k + 1] = 1;
          }
          any = true;
          break;
        case GlobStep::kDirsIn:  // inside a folder name: its '/' ends it
          if (b == '/') {
            Enter(cg, k - 1, nxt);
          } else {
            nxt[k] = 1;
          }
          any = true;
          break;
      }
    }
    if (!any) return false;
    std::swap(cur, nxt);
  }
  return cur[n] != 0;
}

// ---------------------------------------------------------------------------
// Paths.

std::string Join(const std::string& dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  const bool slash = dir.back() != '/';
  std::string out;
  out.reserve(dir.size() + slash + name.size());  // (a copy of dir, then appended to, grew twice)
  out.append(dir);
  if (slash) out += '/';
  out.append(name);
  return out;
}

// Returns the absolute, lexically normalised form of `path` ('.' and '..'
// resolved without following links).
std::string Absolute(const std::string& path) {
  std::string full;
  if (!path.empty() && path[0] == '/') {
    full = path;
  } else {
    char buf[PATH_MAX];
    if (getcwd(buf, sizeof buf) == nullptr) return path;
    full = std::string(buf) + "/" + path;
  }
  std::vector<std::string> parts;
  size_t p = 0;
  while (p <= full.size()) {
    size_t e = full.find('/', p);
    if (e == std::string::npos) e = full.size();
    const std::string part = full.substr(p, e - p);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    p = e + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string RealPath(const std::string& path) {
  char* r = realpath(path.c_str(), nullptr);
  if (r == nullptr) return std::string();
  std::string out(r);
  std::free(r);
  return out;
}

bool IsUnder(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

std::string Dirname(const std::string& path) {
  const size_t cut = path.rfind('/');
  if (cut == std::string::npos || cut == 0) return "/";
  return path.substr(0, cut);
}

const char* FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  return "not a plain file";
}

// Opens `path` for reading without blocking on a FIFO (O_NONBLOCK), and
// keeps the descriptor only if it is a regular file. Returns -1 with errno
// set, or with *kind set to what the path is when it is not a regular file.
int OpenRegular(const std::string& path, struct stat* st, const char** kind) {
  *kind = nullptr;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  if (fstat(fd, st) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    *kind = FileKind(st->st_mode);
    close(fd);
    return -1;
  }
  return fd;
}

bool ReadSmallFile(const std::string& path, std::string* out) {
  struct stat st;
  const char* kind;
  const int fd = OpenRegular(path, &st, &kind);
  if (fd < 0) return false;
  out->clear();
  char buf[65536];
  for (;;) {
    const ssize_t k = read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    out->append(buf, static_cast<size_t>(k));
    if (out->size() > (size_t{16} << 20)) break;
  }
  close(fd);
  return true;
}

// Names never walked into (what ruff leaves out by default too); a path given
// explicitly is still scanned.
bool IsDefaultExcludedDir(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
      ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
      ".svn", ".tox", ".venv", "__pypackages__", "__pycache__", "_build", "buck-out", "dist",
      "node_modules", "site-packages", "venv"};
  for (std::string_view n : kNames) {
    if (name == n) return true;
  }
  return false;
}

struct WalkedFile {
  std::string path;
  Language language;
};

class Walker {
 public:
  Walker(const ScanOptions& options, std::vector<FileResult>* errors,
         std::vector<std::string>* notebooks = nullptr)
      : options_(options), errors_(errors), notebooks_(notebooks) {
    for (const ScanOptions::Exclude& e : options.excludes) {
      excludes_.AddLine(e.pattern, Absolute(e.base.empty() ? "." : e.base));
    }
  }

  // Source files and folders skipped by ignore rules (ScanSummary::ignored).
  uint64_t ignored() const { return ignored_; }

  std::vector<WalkedFile> Run() {
    std::vector<WalkedFile> files;
    Run([&files](WalkedFile&& f) { files.push_back(std::move(f)); });
    return files;
  }

  // Gives each file to `sink` as it is found (Note [Walk while scanning]).
  void Run(const std::function<void(WalkedFile&&)>& sink) {
    sink_ = &sink;
    WalkPaths();
    sink_ = nullptr;
  }

 private:
  void Emit(WalkedFile f) { (*sink_)(std::move(f)); }

  void WalkPaths() {
    for (const std::string& given : options_.paths) {
      std::string path = given;
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      const std::string abs = Absolute(path);
      struct stat st;
      if (stat(path.c_str(), &st) != 0) {
        PathError(given, std::string("cannot read: ") + std::strerror(errno));
        continue;
      }
      const bool is_dir = S_ISDIR(st.st_mode);
      if (ExcludedWithParents(abs, is_dir)) continue;
      if (!is_dir && !S_ISREG(st.st_mode)) {
        // Opening a FIFO would wait for a writer; a device is no source.
        PathError(given, std::string("not a regular file (") + FileKind(st.st_mode) +
                             "); skipped");
        continue;
      }
      if (!is_dir) {
        Language lang;
        if (!LanguageOfPath(path, &lang)) {
          if (notebooks_ != nullptr && IsNotebookPath(path)) {
            notebooks_->push_back(path);
            continue;
          }
          PathError(given, "not a Python or C/C++/CUDA/HIP source (by its extension); skipped");
          continue;
        }
        Emit({path, lang});
        continue;
      }
      root_real_ = RealPath(path);
      IgnoreList ignores;
      if (options_.respect_gitignore) LoadAncestors(abs, &ignores);
      ancestors_.assign(1, {st.st_dev, st.st_ino});
      Walk(path, abs, &ignores);
    }
  }

  void PathError(const std::string& path, std::string message) {
    FileResult r;
    r.path = path;
    r.errors.push_back({std::move(message), 0});
    errors_->push_back(std::move(r));
  }

  // An explicit path is excluded if it, or a folder above it (up to the
  // exclude base), matches an exclude pattern.
  bool ExcludedWithParents(const std::string& abs, bool is_dir) const {
    if (excludes_.empty()) return false;
    std::vector<std::string> chain;
    for (std::string p = abs; p != "/"; p = Dirname(p)) chain.push_back(p);
    for (size_t k = chain.size(); k-- > 0;) {
      if (excludes_.Match(chain[k], k == 0 ? is_dir : true) > 0) return true;
    }
    return false;
  }

  // The .gitignore files above a scanned folder, up to its repository's root
  // (the folder holding .git), and that repository's .git/info/exclude.
  void LoadAncestors(const std::string& abs, IgnoreList* ignores) {
    std::vector<std::string> dirs;
    std::string repo;
    for (std::string d = abs;; d = Dirname(d)) {
      struct stat st;
      if (lstat((d == "/" ? "/.git" : d + "/.git").c_str(), &st) == 0) {
        repo = d;
        break;
      }
      if (d == "/") break;
      dirs.push_back(d);
    }
    if (repo.empty()) return;  // not in a repository: only the tree's own files count
    std::string text;
    if (ReadSmallFile(repo + "/.git/info/exclude", &text)) AddFile(text, repo, ignores);
    dirs.push_back(repo);
    // From the repository root down to the folder above `abs`.
    for (size_t k = dirs.size(); k-- > 1;) {
      if (ReadSmallFile(dirs[k] + "/.gitignore", &text)) AddFile(text, dirs[k], ignores);
    }
  }

  static void AddFile(const std::string& text, const std::string& base, IgnoreList* ignores) {
    size_t p = 0;
    while (p < text.size()) {
      size_t e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      ignores->AddLine(std::string_view(text).substr(p, e - p), base);
      p = e + 1;
    }
  }

  static std::string ChildAbs(const std::string& abs, std::string_view name) {
    std::string out;
    out.reserve(abs.size() + 1 + name.size());
    if (abs != "/") out = abs;
    out += '/';
    out.append(name);
    return out;
  }

  bool Ignored(const std::string& abs, bool is_dir, const IgnoreList& ignores) {
    if (excludes_.Match(abs, is_dir) > 0) return true;
    if (!options_.respect_gitignore || ignores.Match(abs, is_dir) <= 0) return false;
    ++ignored_;
    return true;
  }

  void Walk(const std::string& dir, const std::string& abs, const IgnoreList* parent) {
    IgnoreList local;
    const IgnoreList* ignores = parent;
    if (options_.respect_gitignore) {
      std::string text;
      if (ReadSmallFile(abs + "/.gitignore", &text)) {
        local = *parent;
        AddFile(text, abs, &local);
        ignores = &local;
      }
    }
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
      PathError(dir, std::string("cannot read: ") + std::strerror(errno));
      return;
    }
    // The names, one after another in `names` (not a string each), sorted
    // as views of it.
    std::string names;
    struct Entry {
      size_t at, size;
      unsigned char type;
    };
    std::vector<Entry> listed;
    while (dirent* e = readdir(d)) {
      const char* n = e->d_name;
      if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
      const size_t size = std::strlen(n);
      listed.push_back({names.size(), size, e->d_type});
      names.append(n, size);
    }
    closedir(d);
    std::vector<std::pair<std::string_view, unsigned char>> entries;
    entries.reserve(listed.size());
    for (const Entry& e : listed) {
      entries.emplace_back(std::string_view(names).substr(e.at, e.size), e.type);
    }
    std::sort(entries.begin(), entries.end());
    // Note [Paths made when needed]: an entry's path and absolute path were
    // made for every entry (four strings, each on the heap past 15 bytes),
    // where a file that is no source needs neither, and a source file its
    // absolute path only for ignore patterns, which most trees outside a
    // repository do not have. The path goes on with the file (moved into
    // its WalkedFile, then into its FileResult), and the names are views of
    // one string: the walk of the 20 MB GPU tree (635 files, 96 folders)
    // took 2.2M instructions, 1.3M now.
    const bool may_ignore = !excludes_.empty() || (options_.respect_gitignore && !ignores->empty());
    for (auto& [name, type] : entries) {
      std::string path;  // Join(dir, name), once needed
      bool is_dir = type == DT_DIR;
      bool is_file = type == DT_REG;
      if (type == DT_LNK || type == DT_UNKNOWN) {
        path = Join(dir, name);
        struct stat st;
        if (type == DT_LNK) {
          // Followed only while it stays inside the tree.
          const std::string target = RealPath(path);
          if (target.empty() || root_real_.empty() || !IsUnder(target, root_real_)) continue;
          if (stat(path.c_str(), &st) != 0) continue;
        } else if (lstat(path.c_str(), &st) != 0) {
          continue;
        }
        is_dir = S_ISDIR(st.st_mode);
        is_file = S_ISREG(st.st_mode);
      }
      if (is_dir) {
        if (IsDefaultExcludedDir(name)) continue;
        const std::string child_abs = ChildAbs(abs, name);
        if (Ignored(child_abs, true, *ignores)) continue;
        if (path.empty()) path = Join(dir, name);
        struct stat st;
        if (stat(path.c_str(), &st) != 0) {
          // A folder that went away is nothing to scan; any other failure
          // (ENAMETOOLONG past PATH_MAX, EACCES) is a part not scanned: an
          // error entry, never a silent skip.
          if (errno != ENOENT) PathError(path, std::string("cannot read: ") + std::strerror(errno));
          continue;
        }
        const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
        if (std::find(ancestors_.begin(), ancestors_.end(), id) != ancestors_.end()) {
          continue;  // a link back up: a cycle
        }
        ancestors_.push_back(id);
        Walk(path, child_abs, ignores);
        ancestors_.pop_back();
      } else if (is_file) {
        Language lang;
        if (!LanguageOfPath(name, &lang)) {
          if (notebooks_ != nullptr && IsNotebookPath(name) &&
              !(may_ignore && Ignored(ChildAbs(abs, name), false, *ignores))) {
            notebooks_->push_back(path.empty() ? Join(dir, name) : std::move(path));
          }
          continue;
        }
        // (With no pattern, Ignored would match none.)
        if (may_ignore && Ignored(ChildAbs(abs, name), false, *ignores)) continue;
        if (path.empty()) path = Join(dir, name);
        Emit({std::move(path), lang});
      }
    }
  }

  const ScanOptions& options_;
  std::vector<FileResult>* errors_;
  std::vector<std::string>* notebooks_;  // null: notebooks are not looked for
  IgnoreList excludes_;
  std::string root_real_;
  std::vector<std::pair<dev_t, ino_t>> ancestors_;  // the folders being walked, for cycles
  const std::function<void(WalkedFile&&)>* sink_ = nullptr;  // Run's
  uint64_t ignored_ = 0;
};

// Reads the whole file into *buf (grown as needed); returns an error
// message, or "" on success.
std::string ReadFile(const std::string& path, uint64_t max_size, std::unique_ptr<char[]>* buf,
                     size_t* cap, size_t* size) {
  struct stat st;
  const char* kind;
  const int fd = OpenRegular(path, &st, &kind);
  if (fd < 0 && kind != nullptr) return std::string("not a regular file (") + kind + "); skipped";
  if (fd < 0) return std::string("cannot read: ") + std::strerror(errno);
  if (static_cast<uint64_t>(st.st_size) > max_size) {
    close(fd);
    return "file is " + std::to_string(st.st_size) + " bytes, over the limit of " +
           std::to_string(max_size) + " (a generated file?); skipped";
  }
  size_t want = static_cast<size_t>(st.st_size) + 1 + internal::kPadding;
  if (*cap < want) {
    *cap = std::max(want, *cap * 2);
    buf->reset(new char[*cap]);
  }
  size_t got = 0;
  for (;;) {
    if (got + internal::kPadding >= *cap) {  // the file grew while we read it
      if (got > max_size) break;
      std::unique_ptr<char[]> bigger(new char[*cap * 2]);
      std::memcpy(bigger.get(), buf->get(), got);
      *buf = std::move(bigger);
      *cap *= 2;
    }
    const size_t asked = *cap - got - internal::kPadding;
    const ssize_t k = read(fd, buf->get() + got, asked);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      const int e = errno;
      close(fd);
      return std::string("cannot read: ") + std::strerror(e);
    }
    if (k == 0) break;
    got += static_cast<size_t>(k);
    // The size fstat gave, in one read that asked for more: the whole file,
    // without a second read to see the end (one syscall per file).
    if (got == static_cast<size_t>(st.st_size) && static_cast<size_t>(k) < asked) break;
  }
  close(fd);
  std::memset(buf->get() + got, 0, internal::kPadding);
  *size = got;
  return std::string();
}

}  // namespace

// ---------------------------------------------------------------------------

void IgnoreList::AddLine(std::string_view line, std::string_view base) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return;
  Pattern p;
  if (line[0] == '!') {
    p.negated = true;
    line.remove_prefix(1);
  } else if (line.size() >= 2 && line[0] == '\\' && (line[1] == '#' || line[1] == '!')) {
    line.remove_prefix(1);
  }
  // Trailing spaces go unless escaped.
  while (!line.empty() && line.back() == ' ' &&
         !(line.size() >= 2 && line[line.size() - 2] == '\\')) {
    line.remove_suffix(1);
  }
  if (line.empty()) return;
  if (line.back() == '/') {
    p.dir_only = true;
    while (!line.empty() && line.back() == '/') line.remove_suffix(1);
  }
  if (line.empty()) return;
  p.anchored = line.find('/') != std::string_view::npos;
  while (!line.empty() && line.front() == '/') line.remove_prefix(1);
  if (line.empty()) return;
  p.glob = std::string(line);
  // As git (dir.c, match_pathname): a path pattern's bytes before its first
  // wildcard are compared as they are, and only the rest is a glob, so a
  // `**` right after them counts as a segment's start (`x**/y` is `x` then
  // `**/y`).
  if (p.anchored) p.prefix = p.glob.substr(0, p.glob.find_first_of("*?[\\"));
  p.compiled = std::make_shared<const CompiledGlob>(
      CompileGlob(std::string_view(p.glob).substr(p.prefix.size())));
  p.base = std::string(base);
  while (p.base.size() > 1 && p.base.back() == '/') p.base.pop_back();
  p.base_root = p.base == "/";
  p.base_here = p.base.empty() || p.base == ".";
  patterns_.push_back(std::move(p));
  const size_t words = (patterns_.size() + 63) / 64;
  if (words != words_) {  // a row a word longer: indexed again
    words_ = words;
    filter_.assign(2 * 257 * words_, 0);
    for (size_t k = 0; k < patterns_.size(); ++k) Index(k);
  } else {
    Index(patterns_.size() - 1);
  }
}

// Note [Ignore patterns by their last byte]: Match asked every pattern of
// the list for every entry of the walk (DeepSpeed's .gitignore has 68,
// pytorch-lightning's 213, fairseq's 293), about 20 instructions each where
// it missed, and a memcmp of its folder for each anchored one: 1,500 an
// entry on DeepSpeed, 2.9M instructions in all. What a pattern matches is
// a suffix of the path (its last name, or the path below the pattern's
// folder, with the anchored pattern's prefix before the rest), and most
// patterns are of a shape (Note [Glob shapes]: `__pycache__`, `*.pyc`,
// `docs/_site`, `**/build`) that matches only what ends in the last byte
// of their bytes (the prefix's, where nothing follows it), or general
// globs whose last step takes one byte (`*.py[cod]`: Note [Glob heads and
// tails]), which match only what ends in a byte it takes. So a bitset the
// path's last byte selects, and one of the patterns that may match any
// path (`x*`, a `*` alone, `a/**`), say which patterns to ask, for
// folders and for files apart (a pattern ending in '/' asks folders only);
// they are asked from the last to the first, as before, and the first that
// matches answers. A pattern left out cannot match: its shape's test would
// fail at the last byte. Test: IgnoreFilterAgainstEveryPattern
// (scan_test.cc), random lists and paths against MatchEveryPattern.
// (The general globs' last step: the 13 dev-set trees 431.61M to 429.88M
// instructions, pytorch-lightning's and fairseq's lists mostly.)
void IgnoreList::Index(size_t k) {
  const Pattern& p = patterns_[k];
  // The byte a path it matches ends in (256: any), or the set of them.
  int key = 256;
  const std::array<bool, 256>* set = nullptr;
  const CompiledGlob& g = *p.compiled;
  // What it matches (a name, or the path below its base, past its prefix)
  // ends the path.
  if (!g.never && g.shape != CompiledGlob::kGeneral && g.shape != CompiledGlob::kPrefix) {
    // It ends in `lit` (or is empty after the prefix).
    if (!g.lit.empty()) {
      key = static_cast<unsigned char>(g.lit.back());
    } else if (g.shape == CompiledGlob::kPlain && !p.prefix.empty()) {
      key = static_cast<unsigned char>(p.prefix.back());
    }
  } else if (!g.never && g.shape == CompiledGlob::kGeneral &&
             (g.tail > 0 || (g.fixed && !g.steps.empty()))) {
    // Its last step takes its last byte (Note [Glob heads and tails]).
    const GlobStep& last = g.steps.back();
    if (last.kind == GlobStep::kByte) {
      key = last.c;
    } else if (last.kind == GlobStep::kClass) {
      set = &g.sets[static_cast<size_t>(last.set)];
    }
  }
  const uint64_t bit = uint64_t{1} << (k % 64);
  for (int d = p.dir_only ? 1 : 0; d < 2; ++d) {
    uint64_t* rows = filter_.data() + static_cast<size_t>(d) * 257 * words_ + k / 64;
    if (set == nullptr) {
      rows[static_cast<size_t>(key) * words_] |= bit;
      continue;
    }
    for (size_t c = 0; c < 256; ++c) {
      if ((*set)[c]) rows[c * words_] |= bit;
    }
  }
}

int IgnoreList::MatchOne(const Pattern& p, std::string_view path, std::string_view name) {
  if (!p.anchored && !p.base_root) {
    // The shapes' tests inline (Note [Glob shapes]): a call a pattern was
    // most of a match's cost, and most patterns miss at their last byte.
    const CompiledGlob& g = *p.compiled;
    const std::string_view lit = g.lit;
    if (g.shape == CompiledGlob::kPlain) {
      if (name.size() != lit.size() || name != lit) return 0;
    } else if (g.shape == CompiledGlob::kSuffix && !g.never) {
      if (name.size() < lit.size() || (!lit.empty() && name.back() != lit.back()) ||
          name.compare(name.size() - lit.size(), lit.size(), lit) != 0) {
        return 0;
      }
    } else if (!RunGlob(g, name)) {
      return 0;
    }
    return p.negated ? -1 : 1;
  }
  std::string_view rel = path;
  if (!p.base_here) {
    if (p.base_root) {
      if (rel.empty() || rel[0] != '/') return 0;
      rel.remove_prefix(1);
    } else {
      if (rel.size() <= p.base.size() || rel.compare(0, p.base.size(), p.base) != 0 ||
          rel[p.base.size()] != '/') {
        if (p.anchored) return 0;
        // Not below the base: an unanchored pattern still matches a name.
        const size_t slash = rel.rfind('/');
        if (slash != std::string_view::npos) rel.remove_prefix(slash + 1);
        if (RunGlob(*p.compiled, rel)) return p.negated ? -1 : 1;
        return 0;
      }
      rel.remove_prefix(p.base.size() + 1);
    }
  }
  if (!p.anchored) {
    const size_t slash = rel.rfind('/');
    if (slash != std::string_view::npos) rel.remove_prefix(slash + 1);
  }
  if (!p.prefix.empty()) {
    if (rel.empty() || rel[0] != p.prefix[0] || rel.compare(0, p.prefix.size(), p.prefix) != 0) {
      return 0;
    }
    rel.remove_prefix(p.prefix.size());
  }
  if (RunGlob(*p.compiled, rel)) return p.negated ? -1 : 1;
  return 0;
}

int IgnoreList::Match(std::string_view path, bool is_dir) const {
  // An unanchored pattern matches the path's last name, wherever its base is
  // (below it, the name is what is left of the path after the base and the
  // folders; elsewhere the name is matched too): the name is found once.
  const size_t last = path.rfind('/');
  const std::string_view name = last == std::string_view::npos ? path : path.substr(last + 1);
  // Note [Ignore patterns by their last byte].
  const uint64_t* any = filter_.data() + (static_cast<size_t>(is_dir) * 257 + 256) * words_;
  const uint64_t* ends =
      path.empty() ? nullptr
                   : filter_.data() + (static_cast<size_t>(is_dir) * 257 +
                                       static_cast<unsigned char>(path.back())) * words_;
  for (size_t w = words_; w-- > 0;) {
    for (uint64_t bits = any[w] | (ends != nullptr ? ends[w] : 0); bits != 0;) {
      const int top = 63 - __builtin_clzll(bits);
      bits &= ~(uint64_t{1} << top);
      const int r = MatchOne(patterns_[w * 64 + static_cast<size_t>(top)], path, name);
      if (r != 0) return r;
    }
  }
  return 0;
}

int IgnoreList::MatchEveryPattern(std::string_view path, bool is_dir) const {
  const size_t last = path.rfind('/');
  const std::string_view name = last == std::string_view::npos ? path : path.substr(last + 1);
  for (size_t k = patterns_.size(); k-- > 0;) {
    const Pattern& p = patterns_[k];
    if (p.dir_only && !is_dir) continue;
    const int r = MatchOne(p, path, name);
    if (r != 0) return r;
  }
  return 0;
}

bool GlobMatch(std::string_view glob, std::string_view path) {
  return RunGlob(CompileGlob(glob), path);
}

bool IsNotebookPath(std::string_view path) {
  constexpr std::string_view kExt = ".ipynb";
  if (path.size() <= kExt.size()) return false;
  const std::string_view tail = path.substr(path.size() - kExt.size());
  for (size_t k = 0; k < kExt.size(); ++k) {
    const char c = tail[k];
    if ((c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != kExt[k]) return false;
  }
  return path[path.size() - kExt.size() - 1] != '/';
}

std::vector<std::string> ListFiles(const ScanOptions& options,
                                   std::vector<FileResult>* path_errors, uint64_t* ignored,
                                   std::vector<std::string>* notebooks) {
  std::vector<FileResult> errors;
  Walker walker(options, path_errors ? path_errors : &errors, notebooks);
  std::vector<WalkedFile> files = walker.Run();
  if (ignored != nullptr) *ignored = walker.ignored();
  std::vector<std::string> out;
  out.reserve(files.size());
  for (WalkedFile& f : files) out.push_back(std::move(f.path));
  return out;
}

void WalkFiles(const ScanOptions& options, std::vector<FileResult>* path_errors,
               const std::function<void(std::string&&)>& sink, uint64_t* ignored,
               std::vector<std::string>* notebooks) {
  Walker walker(options, path_errors, notebooks);
  walker.Run(std::function<void(WalkedFile&&)>([&](WalkedFile&& f) { sink(std::move(f.path)); }));
  if (ignored != nullptr) *ignored = walker.ignored();
}

namespace {

bool KeepMismatch(const RuleSet& rules, const ScanOptions& options, ScanSummary* summary) {
  if (options.keep.empty() || options.keep.size() == rules.rules().size()) return false;
  FileResult r;
  r.errors.push_back({"internal error: ScanOptions::keep has " +
                          std::to_string(options.keep.size()) + " entries for " +
                          std::to_string(rules.rules().size()) + " rules",
                      0});
  summary->path_errors.push_back(std::move(r));
  return true;
}

// Note [Scan threads]: a streamed report (anydev/scan.py, Note [Streamed
// reports]) scans a tree in batches, a ScanFiles call each. Threads started
// per call and ended with it took their thread-local scratch with them (Note
// [Thread-local scratch] in internal.h: the scanners' buffers, the C++
// scanner's needle searches), so every batch built it all again: 12% more
// CPU time for `anydev scan --format json` on the 200 MB tree with 2 threads
// (callgrind, on one thread, saw none of it: the calling thread keeps its
// scratch). The threads are kept instead: a call runs its share 0 on the
// calling thread and the others on threads that wait for the next call. A
// process forked from one that has them has none (only the forking thread
// is copied): it starts its own.
class ScanThreads {
 public:
  static ScanThreads& Get() {
    static std::mutex mu;
    static ScanThreads* threads = nullptr;  // never deleted: threads wait in it to the end
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(mu);
    if (threads == nullptr || owner != getpid()) {
      threads = new ScanThreads();  // a forked child's copy of the old one is left as it is
      owner = getpid();
    }
    return *threads;
  }

  // Runs work(0) .. work(n - 1) at once, work(0) on this thread; returns
  // when all have. One call at a time.
  void Run(size_t n, const std::function<void(size_t)>& work) {
    std::lock_guard<std::mutex> one(run_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (threads_.size() + 1 < n) {
        threads_.emplace_back([this] { Serve(); });
        threads_.back().detach();
      }
      work_ = &work;
      next_ = 1;
      end_ = n;
      pending_ = n - 1;
    }
    wake_.notify_all();
    std::exception_ptr failed;  // the others use what this frame holds: wait for them
    try {
      work(0);
    } catch (...) {
      failed = std::current_exception();
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [this] { return pending_ == 0; });
      work_ = nullptr;
    }
    if (failed) std::rethrow_exception(failed);
  }

 private:
  ScanThreads() = default;

  void Serve() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [this] { return work_ != nullptr && next_ < end_; });
      const size_t t = next_++;
      const std::function<void(size_t)>& work = *work_;
      lock.unlock();
      work(t);
      lock.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }

  std::mutex run_;  // held by the call running
  std::mutex mu_;   // the fields below
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;  // detached: only their number counts
  const std::function<void(size_t)>* work_ = nullptr;
  size_t next_ = 0, end_ = 0, pending_ = 0;
};

// Note [Walk while scanning]: the walk of the 200 MB tree (6,157 files in
// 924 folders) takes 12.6 ms, almost all of it system calls per folder
// (getdents, the .gitignore looked for, a stat), and the scan waited for it.
// Now share 0 of the scan walks, handing the files to a FileFeed as it finds
// them, while the other shares scan them from the first on, and then scans
// with the others; a file's index is its place in the walk, as before, so
// the results are in the walk's order. With one thread there is no one to
// scan meanwhile: the walk comes first, as it did.
class FileFeed {
 public:
  void Add(WalkedFile f) {
    std::lock_guard<std::mutex> lock(mu_);
    files_.push_back(std::move(f));
    if (waiting_ > 0) more_.notify_all();
  }

  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    more_.notify_all();
  }

  // The i-th file of the walk, waiting until the walk has found it; null
  // when the walk ended before it. (A deque: its elements stay put.)
  WalkedFile* Get(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    while (i >= files_.size() && !done_) {
      ++waiting_;
      more_.wait(lock);
      --waiting_;
    }
    return i < files_.size() ? &files_[i] : nullptr;
  }

 private:
  std::mutex mu_;
  std::condition_variable more_;
  std::deque<WalkedFile> files_;
  int waiting_ = 0;
  bool done_ = false;
};

int Jobs(const ScanOptions& options) {
  const int jobs =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(jobs, 1);
}

// Scans the files `file(0)`, `file(1)`, ... (up to the first null) on
// `jobs` threads, share 0 running `first` before it scans (the walk that
// feeds the others, or nothing); results in the files' order.
void ScanEach(const RuleSet& rules, size_t jobs,
              const std::function<WalkedFile*(size_t)>& file,
              const std::function<void()>& first, const ScanOptions& options,
              ScanSummary* out) {
  ScanSummary& summary = *out;
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> scanned{0}, bytes{0};
  // By thread, the results kept and the files' indices (in the order taken).
  struct Results {
    std::vector<size_t> index;
    std::vector<FileResult> files;
  };
  std::vector<Results> per_thread(jobs);
  auto work = [&](size_t t) {
    if (t == 0 && first) first();
    std::unique_ptr<char[]> buf;
    size_t cap = 0;
    auto& results = per_thread[t];
    for (;;) {
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);
      WalkedFile* walked = file(i);  // (this thread's alone: its path may be moved)
      if (walked == nullptr) break;
      WalkedFile& f = *walked;
      size_t size = 0;
      std::string err = ReadFile(f.path, options.max_file_size, &buf, &cap, &size);
      FileResult r;
      if (!err.empty()) {
        r.errors.push_back({std::move(err), 0});
      } else {
        r = internal::ScanPadded(rules, f.language, std::string_view(buf.get(), size));
        if (!options.keep.empty()) {
          r.findings.erase(std::remove_if(r.findings.begin(), r.findings.end(),
                                          [&](const Finding& x) {
                                            return !options.keep[static_cast<size_t>(x.rule)];
                                          }),
                           r.findings.end());
        }
        scanned.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add(size, std::memory_order_relaxed);
      }
      if (!r.findings.empty() || !r.errors.empty()) {
        r.path = std::move(f.path);
        r.language = f.language;
        results.index.push_back(i);
        results.files.push_back(std::move(r));
      }
      // Do not keep a buffer that one huge file grew.
      if (cap > (size_t{64} << 20)) {
        buf.reset();
        cap = 0;
      }
    }
  };
  if (jobs == 1) {
    work(0);
  } else {
    ScanThreads::Get().Run(jobs, work);  // Note [Scan threads]
  }
  if (jobs == 1) {  // one thread took the files in turn: its results are in order
    summary.files = std::move(per_thread[0].files);
  } else {  // their places, sorted, then each result moved once, to its place
    std::vector<std::pair<size_t, FileResult*>> all;
    for (Results& t : per_thread) {
      for (size_t k = 0; k < t.files.size(); ++k) all.emplace_back(t.index[k], &t.files[k]);
    }
    std::sort(all.begin(), all.end());
    summary.files.reserve(all.size());
    for (const auto& e : all) summary.files.push_back(std::move(*e.second));
  }
  summary.files_scanned = scanned.load();
  summary.bytes_scanned = bytes.load();
}

// (It moves the paths of the files with findings or errors into their results.)
void ScanWalked(const RuleSet& rules, std::vector<WalkedFile>* files, const ScanOptions& options,
                ScanSummary* out) {
  std::vector<WalkedFile>& f = *files;
  const size_t jobs = std::min(static_cast<size_t>(Jobs(options)), std::max<size_t>(f.size(), 1));
  ScanEach(
      rules, jobs, [&](size_t i) { return i < f.size() ? &f[i] : nullptr; }, nullptr, options,
      out);
}

}  // namespace

ScanSummary ScanPaths(const RuleSet& rules, const ScanOptions& options) {
  ScanSummary summary;
  if (KeepMismatch(rules, options, &summary)) return summary;
  Walker walker(options, &summary.path_errors);
  const int jobs = Jobs(options);
  if (jobs == 1) {
    std::vector<WalkedFile> files = walker.Run();
    ScanWalked(rules, &files, options, &summary);
  } else {  // Note [Walk while scanning]
    FileFeed feed;
    const std::function<void(WalkedFile&&)> add = [&](WalkedFile&& f) { feed.Add(std::move(f)); };
    auto walk = [&] {
      struct Finished {  // the others wait on the feed: end it whatever happens
        FileFeed& feed;
        ~Finished() { feed.Finish(); }
      } finished{feed};
      walker.Run(add);
    };
    ScanEach(rules, static_cast<size_t>(jobs), [&](size_t i) { return feed.Get(i); }, walk,
             options, &summary);
  }
  summary.ignored = walker.ignored();
  return summary;
}

ScanSummary ScanFiles(const RuleSet& rules, const std::vector<std::string>& paths,
                      const ScanOptions& options) {
  ScanSummary summary;
  if (KeepMismatch(rules, options, &summary)) return summary;
  std::vector<WalkedFile> files;
  files.reserve(paths.size());
  for (const std::string& p : paths) {
    Language lang;
    if (!LanguageOfPath(p, &lang)) {
      FileResult r;
      r.path = p;
      r.errors.push_back({"not a Python or C/C++/CUDA/HIP source (by its extension); skipped", 0});
      summary.path_errors.push_back(std::move(r));
      continue;
    }
    files.push_back({p, lang});
  }
  ScanWalked(rules, &files, options, &summary);
  return summary;
}

}  // namespace anydev::scan
