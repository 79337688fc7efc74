// scan_native: the native scanner alone (no interpreter, no report), for
// instruction counts with callgrind and for profiles:
//
//   scan_native RULES.tsv [--jobs N] [--dump] PATH...
//   valgrind --tool=callgrind scan_native RULES.tsv --jobs 1 CORPUS
//
// RULES.tsv has one rule a line: code, "python" or "cpp", 1 if kept else 0,
// its detector (empty for a rule of spellings; a literal rule's, such as
// "py.device_call"), then its spellings, tab-separated (bench_vs_rg.py
// writes it from the compat table, literal rules included, as `anydev scan`
// builds them). Prints the files and bytes scanned and the findings;
// --dump prints each finding and error too (one a line, for diffs of the
// fast path against ANYDEV_SCAN_FULL_LEXER=1).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/scan.h"

namespace sc = anydev::scan;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RULES.tsv [--jobs N] PATH...\n", argv[0]);
    return 2;
  }
  // Read whole and split in place: a stringstream a line (the way this was
  // read before) cost 1.7M instructions, 1% of a scan of the 20 MB tree.
  std::string tsv;
  if (std::FILE* in = std::fopen(argv[1], "rb")) {
    char chunk[1 << 14];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, in)) > 0;) tsv.append(chunk, n);
    std::fclose(in);
  } else {
    std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
    return 2;
  }
  std::vector<sc::Rule> rules;
  std::vector<std::string_view> fields;
  for (size_t p = 0; p < tsv.size();) {
    size_t e = tsv.find('\n', p);
    if (e == std::string::npos) e = tsv.size();
    const std::string_view line(tsv.data() + p, e - p);
    p = e + 1;
    // Its fields, as getline(..., '\t') splits them: an empty last one is none.
    fields.clear();
    for (size_t b = 0; b < line.size();) {
      size_t t = line.find('\t', b);
      if (t == std::string_view::npos) t = line.size();
      fields.push_back(line.substr(b, t - b));
      b = t + 1;
    }
    if (fields.size() < 4) continue;
    sc::Rule r{std::string(fields[0]),
               fields[1] == "python" ? sc::Language::kPython : sc::Language::kCpp,
               fields[2] == "1", std::vector<std::string>(fields.begin() + 4, fields.end())};
    r.detector = fields[3];
    rules.push_back(std::move(r));
  }
  sc::RuleSet set(std::move(rules));
  sc::ScanOptions o;
  bool dump = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--jobs" && i + 1 < argc) {
      o.jobs = std::atoi(argv[++i]);
    } else if (a == "--dump") {
      dump = true;
    } else {
      o.paths.push_back(a);
    }
  }
  const sc::ScanSummary s = sc::ScanPaths(set, o);
  size_t findings = 0, errors = 0;
  for (const sc::FileResult& r : s.files) {
    findings += r.findings.size();
    errors += r.errors.size();
    if (dump) {
      for (const sc::Finding& f : r.findings) {
        std::printf("%s:%d:%d-%d:%d %s %s %.*s %lld\n", r.path.c_str(), f.line, f.column,
                    f.end_line, f.end_column, set.rules()[static_cast<size_t>(f.rule)].code.c_str(),
                    sc::RefKindName(f.kind), static_cast<int>(f.text.size()), f.text.data(),
                    static_cast<long long>(f.call_end));
      }
      for (const sc::FileError& e : r.errors) {
        std::printf("%s:%d: error: %s\n", r.path.c_str(), e.line, e.message.c_str());
      }
    }
    for (const sc::FileError& e : r.errors) {
      if (!dump && errors <= 20) {
        std::fprintf(stderr, "%s:%d: %s\n", r.path.c_str(), e.line, e.message.c_str());
      }
    }
  }
  std::printf("%llu files, %llu bytes, %zu findings, %zu errors\n",
              static_cast<unsigned long long>(s.files_scanned),
              static_cast<unsigned long long>(s.bytes_scanned), findings, errors);
  return 0;
}
