// Walking the tree (gitignore rules, excludes, symlinks) and scanning the
// files it yields on a pool of threads. Each thread reads one whole file at a
// time into a buffer it reuses, so memory follows the largest file and the
// thread count, not the size of the tree.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
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

// Matches the bracket expression at g (after '['); returns the position past
// its ']' in *end, or nullptr in *end if it is not closed.
bool MatchClass(const char* g, const char* ge, char c, const char** end) {
  bool negate = false;
  if (g < ge && (*g == '!' || *g == '^')) {
    negate = true;
    ++g;
  }
  bool matched = false;
  bool first = true;
  while (g < ge && (*g != ']' || first)) {
    first = false;
    char lo = *g;
    if (lo == '\\' && g + 1 < ge) lo = *++g;
    char hi = lo;
    if (g + 2 < ge && g[1] == '-' && g[2] != ']') {
      hi = g[2];
      if (hi == '\\' && g + 3 < ge) {
        hi = g[3];
        ++g;
      }
      g += 2;
    }
    if (c >= lo && c <= hi) matched = true;
    ++g;
  }
  if (g >= ge) {
    *end = nullptr;
    return false;
  }
  *end = g + 1;
  return matched != negate;
}

bool Glob(const char* g, const char* ge, const char* s, const char* se) {
  while (g < ge) {
    const char c = *g;
    if (c == '*') {
      if (g + 1 < ge && g[1] == '*') {
        g += 2;
        while (g < ge && *g == '*') ++g;
        if (g == ge) return true;  // trailing "**": everything below
        if (*g == '/') {
          ++g;  // "**/": zero or more folders
          for (const char* k = s;; ++k) {
            if (Glob(g, ge, k, se)) return true;
            while (k < se && *k != '/') ++k;
            if (k >= se) return false;
          }
        }
        // "**" elsewhere: as '*' that also crosses '/'
        for (const char* k = s; k <= se; ++k) {
          if (Glob(g, ge, k, se)) return true;
        }
        return false;
      }
      ++g;
      for (const char* k = s;; ++k) {
        if (Glob(g, ge, k, se)) return true;
        if (k >= se || *k == '/') return false;
      }
    }
    if (s >= se) return false;
    if (c == '?') {
      if (*s == '/') return false;
      ++g;
      ++s;
      continue;
    }
    if (c == '[') {
      const char* end = nullptr;
      const bool m = *s != '/' && MatchClass(g + 1, ge, *s, &end);
      if (end != nullptr) {
        if (!m) return false;
        g = end;
        ++s;
        continue;
      }
      // An unclosed '[' is a literal.
    }
    char lit = c;
    if (c == '\\' && g + 1 < ge) lit = *++g;
    if (*s != lit) return false;
    ++g;
    ++s;
  }
  return s == se;
}

// ---------------------------------------------------------------------------
// Paths.

std::string Join(const std::string& dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  std::string out = dir;
  if (out.back() != '/') out += '/';
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

bool ReadSmallFile(const std::string& path, std::string* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
  Walker(const ScanOptions& options, std::vector<FileResult>* errors)
      : options_(options), errors_(errors) {
    for (const ScanOptions::Exclude& e : options.excludes) {
      excludes_.AddLine(e.pattern, Absolute(e.base.empty() ? "." : e.base));
    }
  }

  // Source files and folders skipped by ignore rules (ScanSummary::ignored).
  uint64_t ignored() const { return ignored_; }

  std::vector<WalkedFile> Run() {
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
      if (!is_dir) {
        Language lang;
        if (!LanguageOfPath(path, &lang)) {
          PathError(given, "not a Python or C/C++/CUDA/HIP source (by its extension); skipped");
          continue;
        }
        files_.push_back({path, lang});
        continue;
      }
      root_real_ = RealPath(path);
      IgnoreList ignores;
      if (options_.respect_gitignore) LoadAncestors(abs, &ignores);
      ancestors_.assign(1, {st.st_dev, st.st_ino});
      Walk(path, abs, &ignores);
    }
    return std::move(files_);
  }

 private:
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
    std::vector<std::pair<std::string, unsigned char>> entries;
    while (dirent* e = readdir(d)) {
      const char* n = e->d_name;
      if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
      entries.emplace_back(n, e->d_type);
    }
    closedir(d);
    std::sort(entries.begin(), entries.end());
    for (auto& [name, type] : entries) {
      const std::string path = Join(dir, name);
      const std::string child_abs = abs == "/" ? "/" + name : abs + "/" + name;
      bool is_dir = type == DT_DIR;
      bool is_file = type == DT_REG;
      if (type == DT_LNK || type == DT_UNKNOWN) {
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
        if (IsDefaultExcludedDir(name) || Ignored(child_abs, true, *ignores)) continue;
        struct stat st;
        if (stat(path.c_str(), &st) != 0) continue;
        const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
        if (std::find(ancestors_.begin(), ancestors_.end(), id) != ancestors_.end()) {
          continue;  // a link back up: a cycle
        }
        ancestors_.push_back(id);
        Walk(path, child_abs, ignores);
        ancestors_.pop_back();
      } else if (is_file) {
        Language lang;
        if (!LanguageOfPath(name, &lang)) continue;
        if (Ignored(child_abs, false, *ignores)) continue;
        files_.push_back({path, lang});
      }
    }
  }

  const ScanOptions& options_;
  std::vector<FileResult>* errors_;
  IgnoreList excludes_;
  std::string root_real_;
  std::vector<std::pair<dev_t, ino_t>> ancestors_;  // the folders being walked, for cycles
  std::vector<WalkedFile> files_;
  uint64_t ignored_ = 0;
};

// Reads the whole file into *buf (grown as needed); returns an error
// message, or "" on success.
std::string ReadFile(const std::string& path, uint64_t max_size, std::unique_ptr<char[]>* buf,
                     size_t* cap, size_t* size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot read: ") + std::strerror(errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return std::string("cannot read: ") + std::strerror(e);
  }
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
    const ssize_t k = read(fd, buf->get() + got, *cap - got - internal::kPadding);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      const int e = errno;
      close(fd);
      return std::string("cannot read: ") + std::strerror(e);
    }
    if (k == 0) break;
    got += static_cast<size_t>(k);
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
  p.base = std::string(base);
  while (p.base.size() > 1 && p.base.back() == '/') p.base.pop_back();
  patterns_.push_back(std::move(p));
}

int IgnoreList::Match(std::string_view path, bool is_dir) const {
  for (size_t k = patterns_.size(); k-- > 0;) {
    const Pattern& p = patterns_[k];
    if (p.dir_only && !is_dir) continue;
    std::string_view rel = path;
    if (!p.base.empty() && p.base != ".") {
      if (p.base == "/") {
        if (rel.empty() || rel[0] != '/') continue;
        rel.remove_prefix(1);
      } else {
        if (rel.size() <= p.base.size() || rel.compare(0, p.base.size(), p.base) != 0 ||
            rel[p.base.size()] != '/') {
          if (p.anchored) continue;
          // Not below the base: an unanchored pattern still matches a name.
          const size_t slash = rel.rfind('/');
          if (slash != std::string_view::npos) rel.remove_prefix(slash + 1);
          if (GlobMatch(p.glob, rel)) return p.negated ? -1 : 1;
          continue;
        }
        rel.remove_prefix(p.base.size() + 1);
      }
    }
    if (!p.anchored) {
      const size_t slash = rel.rfind('/');
      if (slash != std::string_view::npos) rel.remove_prefix(slash + 1);
    }
    if (GlobMatch(p.glob, rel)) return p.negated ? -1 : 1;
  }
  return 0;
}

bool GlobMatch(std::string_view glob, std::string_view path) {
  return Glob(glob.data(), glob.data() + glob.size(), path.data(), path.data() + path.size());
}

std::vector<std::string> ListFiles(const ScanOptions& options,
                                   std::vector<FileResult>* path_errors) {
  std::vector<FileResult> errors;
  std::vector<WalkedFile> files = Walker(options, path_errors ? path_errors : &errors).Run();
  std::vector<std::string> out;
  out.reserve(files.size());
  for (WalkedFile& f : files) out.push_back(std::move(f.path));
  return out;
}

ScanSummary ScanPaths(const RuleSet& rules, const ScanOptions& options) {
  ScanSummary summary;
  Walker walker(options, &summary.path_errors);
  const std::vector<WalkedFile> files = walker.Run();
  summary.ignored = walker.ignored();
  int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  if (jobs < 1) jobs = 1;
  if (static_cast<size_t>(jobs) > files.size()) jobs = static_cast<int>(std::max<size_t>(files.size(), 1));

  std::atomic<size_t> next{0};
  std::atomic<uint64_t> scanned{0}, bytes{0};
  std::vector<std::vector<std::pair<size_t, FileResult>>> per_thread(static_cast<size_t>(jobs));
  auto work = [&](size_t t) {
    std::unique_ptr<char[]> buf;
    size_t cap = 0;
    auto& results = per_thread[t];
    for (;;) {
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= files.size()) break;
      const WalkedFile& f = files[i];
      size_t size = 0;
      std::string err = ReadFile(f.path, options.max_file_size, &buf, &cap, &size);
      FileResult r;
      if (!err.empty()) {
        r.errors.push_back({std::move(err), 0});
      } else {
        r = internal::ScanPadded(rules, f.language, std::string_view(buf.get(), size));
        scanned.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add(size, std::memory_order_relaxed);
      }
      if (!r.findings.empty() || !r.errors.empty()) {
        r.path = f.path;
        r.language = f.language;
        results.emplace_back(i, std::move(r));
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
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(jobs));
    for (int t = 0; t < jobs; ++t) threads.emplace_back(work, static_cast<size_t>(t));
    for (std::thread& th : threads) th.join();
  }
  std::vector<std::pair<size_t, FileResult>> all;
  for (auto& v : per_thread) {
    for (auto& e : v) all.push_back(std::move(e));
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  summary.files.reserve(all.size());
  for (auto& e : all) summary.files.push_back(std::move(e.second));
  summary.files_scanned = scanned.load();
  summary.bytes_scanned = bytes.load();
  return summary;
}

}  // namespace anydev::scan
