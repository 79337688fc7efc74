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
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "anydev/scan.h"

namespace sc = anydev::scan;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RULES.tsv [--jobs N] PATH...\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
    return 2;
  }
  std::vector<sc::Rule> rules;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    if (f.size() < 4) continue;
    sc::Rule r{f[0], f[1] == "python" ? sc::Language::kPython : sc::Language::kCpp, f[2] == "1",
               std::vector<std::string>(f.begin() + 4, f.end())};
    r.detector = f[3];
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
