// anydev._C._scan: the static scanner (core/scan) for anydev.scan. Plain
// tuples cross the boundary; anydev/scan.py turns them into dataclasses and
// adds what comes from the table (replacement, fix, message).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
                        ErrorList(r.errors), r.noqa_comment);
}

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
      [](const sc::RuleSet& rules, py::bytes data, const std::string& language) {
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
          r = sc::ScanSource(rules, lang, view);
        }
        py::list findings;
        for (const sc::Finding& f : r.findings) findings.append(FindingTuple(f));
        return py::make_tuple(findings, ErrorList(r.errors), r.noqa_comment);
      },
      py::arg("rules"), py::arg("data"), py::arg("language"),
      "Scans one file's bytes: ([finding tuples], [(message, line)], whether a comment it "
      "lexed mentions noqa).");

  s.def(
      "scan_paths",
      [](const sc::RuleSet& rules, const std::vector<std::string>& paths,
         const Excludes& excludes, bool respect_gitignore, int jobs, uint64_t max_file_size,
         const std::vector<bool>& keep) {
        if (!keep.empty() && keep.size() != rules.rules().size()) {
          throw py::value_error("keep must have one entry per rule");
        }
        sc::ScanOptions o = Options(paths, excludes, respect_gitignore, jobs, max_file_size);
        o.keep = keep;
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
      "([(path bytes, language, findings, errors, noqa comment)] for files with either, "
      "[path errors], files scanned, bytes scanned).");

  s.def(
      "scan_files",
      [](const sc::RuleSet& rules, const std::vector<std::string>& paths, int jobs,
         uint64_t max_file_size, const std::vector<bool>& keep) {
        if (!keep.empty() && keep.size() != rules.rules().size()) {
          throw py::value_error("keep must have one entry per rule");
        }
        sc::ScanOptions o = Options({}, {}, false, jobs, max_file_size);
        o.keep = keep;
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
      "findings, errors, noqa comment)] for files with either, files scanned, bytes scanned).");

  s.def(
      "list_files",
      [](const std::vector<std::string>& paths, const Excludes& excludes, bool respect_gitignore) {
        const sc::ScanOptions o = Options(paths, excludes, respect_gitignore, 1, 0);
        std::vector<sc::FileResult> errors;
        std::vector<std::string> files;
        {
          py::gil_scoped_release release;
          files = sc::ListFiles(o, &errors);
        }
        py::list names, path_errors;
        for (const std::string& f : files) names.append(py::bytes(f));
        for (const sc::FileResult& r : errors) path_errors.append(FileTuple(r));
        return py::make_tuple(names, path_errors);
      },
      py::arg("paths"), py::arg("excludes"), py::arg("respect_gitignore"),
      "The files scan_paths would scan, in its order (paths and excludes as bytes or str; "
      "the files as bytes).");

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
