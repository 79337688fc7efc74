// The Python scanner's fast path (Note [Fast path] in core/scan/src/python_scan.cc)
// against its full path, on inputs chosen to break a scanner that skips lines:
// needles in strings and comments, aliases and scopes, statements over several
// lines, the availability idiom's statement form, suppressions, CRLF and lone
// CR, tabs and form feeds, a BOM, invalid UTF-8, syntax errors. Each input is
// scanned both ways and must give the same findings and errors; for the plain
// ones the fast path must have been taken, and some findings are checked
// outright. tests/python/test_scan_fast_path.py does the same with the real
// compat table over generated trees.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anydev/scan.h"
#include "internal.h"

namespace anydev::scan {
namespace {

RuleSet& Rules() {
  static RuleSet* rules = [] {
    std::vector<Rule> r;
    r.push_back({"AD103", Language::kPython, false, {"torch.cuda.current_device"}});
    r.push_back({"AD107", Language::kPython, false, {"torch.cuda.synchronize"}});
    r.push_back({"AD110", Language::kPython, false, {"torch.cuda.set_device"}});
    r.push_back({"AD120", Language::kPython, true, {"torch.cuda.get_device_name"}});
    const char* detectors[] = {"py.device_call",   "py.device_keyword", "py.to_call",
                               "py.amp_device",    "py.availability",
                               "py.availability_statement", "py.cuda_method",
                               "py.is_cuda",       "py.device_type_compare", "py.nccl_backend"};
    int code = 901;
    for (const char* d : detectors) {
      Rule rule{"AD" + std::to_string(code++), Language::kPython, false, {}};
      rule.detector = d;
      r.push_back(rule);
    }
    return new RuleSet(std::move(r));
  }();
  return *rules;
}

std::string Describe(const FileResult& r) {
  std::string out;
  for (const Finding& f : r.findings) {
    out += Rules().rules()[static_cast<size_t>(f.rule)].code + " " + RefKindName(f.kind) + " " +
           std::to_string(f.line) + ":" + std::to_string(f.column) + "-" +
           std::to_string(f.end_line) + ":" + std::to_string(f.end_column) + " [" +
           std::to_string(f.start) + "," + std::to_string(f.end) + "," +
           std::to_string(f.call_end) + "] " + f.text + "\n";
  }
  for (const FileError& e : r.errors) out += "error " + std::to_string(e.line) + " " + e.message + "\n";
  return out;
}

// Scans `src` both ways; returns the fast path's result and whether the
// fast path took the file.
std::string Both(const std::string& src, bool* fast_taken = nullptr) {
  internal::SetFastPathForTesting(0);
  const std::string full = Describe(ScanSource(Rules(), Language::kPython, src));
  internal::SetFastPathForTesting(1);
  const uint64_t before = internal::FastPathFilesForTesting();
  const std::string fast = Describe(ScanSource(Rules(), Language::kPython, src));
  if (fast_taken) *fast_taken = internal::FastPathFilesForTesting() > before;
  internal::SetFastPathForTesting(-1);
  EXPECT_EQ(fast, full) << "source:\n" << src;
  return fast;
}

std::string Lines(std::initializer_list<const char*> lines, const char* nl = "\n") {
  std::string s;
  for (const char* l : lines) s += std::string(l) + nl;
  return s;
}

TEST(ScanFastPath, AliasesAreNeedlesForTheRestOfTheFile) {
  const std::string src = Lines({
      "from torch.cuda import current_device as cd", "import torch as th", "x = 1", "y = 2",
      "cd()", "dev = th.cuda", "z = 3", "dev.synchronize()", "D = th.device", "a = D(\"cuda\")"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_NE(out.find("AD103 call 5:1-5:3"), std::string::npos) << out;
  EXPECT_NE(out.find("AD107 call 8:1-8:16"), std::string::npos) << out;
  EXPECT_NE(out.find("AD901 call 10:5"), std::string::npos) << out;
}

TEST(ScanFastPath, ScopesPushAndPopAsInTheFullPath) {
  const std::string src = Lines({
      "def f():", "    import torch.cuda as tc", "    tc.synchronize()", "    x = 1", "y = 2",
      "if y:", "    z = 3", "    tc.synchronize()", "class A:", "    def g(self, torch):",
      "        torch.cuda.synchronize()", "import torch", "torch = None",
      "torch.cuda.synchronize()", "import torch", "for torch in range(2):", "    pass",
      "torch.cuda.synchronize()"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_NE(out.find("AD107 call 3:5"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 8:5"), std::string::npos) << out;  // tc is gone with f's scope
}

TEST(ScanFastPath, AvailabilityStatementSpansLinesWithoutNeedles) {
  for (const char* body : {"    d = \"cpu\"\n", "    d = \"cpu\"\n    more = 1\n",
                           "    d = \"cpu\"\nx = 1\n", "\n    # c\n    d = \"cpu\"\n"}) {
    const std::string src = std::string("import torch\nif torch.accelerator.is_available():\n"
                                        "    d = \"cuda\"\nelse:\n") + body;
    bool taken = false;
    Both(src, &taken);
    EXPECT_TRUE(taken);
  }
  const std::string out = Both("import torch\nif torch.cuda.is_available():\n    d = \"cpu\"\n"
                               "else:\n    d = \"cuda:0\"\n");
  EXPECT_NE(out.find("idiom 2:1-5:17"), std::string::npos) << out;
}

TEST(ScanFastPath, NeedlesInStringsCommentsAndDocstrings) {
  const std::string src = Lines({
      "import torch", "\"\"\"torch.cuda.synchronize()", "import torch.cuda as tc", "\"\"\"",
      "x = 'torch.cuda.current_device()'  # torch.cuda.synchronize()",
      "s = f\"{torch.cuda.current_device()} {'cuda'!r:>{w}} {x:{'cuda'}}\"",
      "q = f'{f\"{torch.cuda.synchronize()}\"}' f\"\"\"{", "    torch.cuda.set_device(0)}\"\"\"",
      "tc.synchronize()", "w = rb'cuda' Rb\"x\" u'cuda'", "t = x.is_cuda; m = y.cuda()"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_EQ(out.find(" 9:"), std::string::npos) << out;  // tc was bound in a docstring only
}

// Matches in comments and in strings no rule reads are skipped (their lines
// are not lexed); the strings a rule does read are not: device strings with
// any prefix but b/f/t, mock targets, f-strings whole.
TEST(ScanFastPath, DeadTextAndTheStringsRulesRead) {
  const std::string src = Lines({
      "import torch", "from unittest import mock",
      "# torch.cuda.synchronize() in a comment", "'''cuda'''; b'cuda'; 'on cuda'; \"cu da\"",
      "x = torch.zeros(1, device='cuda')  # cuda", "y = t.to(u'cuda:0'); z = t.to(r\"cuda\")",
      "@mock.patch('torch.cuda.synchronize')", "def f(m):", "    a = \"torch.cuda.synchronize\"",
      "    d = 'cuda' if torch.cuda.is_available() else 'cpu'  # 'cuda'",
      "g = f'cuda:{rank}'; h = torch.device(f\"cuda:{i}\"); k = f\"{torch.cuda.synchronize()}\"",
      "s = 'cuda \\' cuda'; n = torch.distributed.init_process_group('nccl')",
      "e = 'cuda\\", "'; torch.cuda.synchronize()"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_NE(out.find("AD902 literal 5:"), std::string::npos) << out;  // device='cuda'
  EXPECT_NE(out.find("AD107 mock 7:"), std::string::npos) << out;
  EXPECT_NE(out.find("AD903 literal 6:"), std::string::npos) << out;  // needle in u'cuda:0' only
  EXPECT_EQ(out.find(" 3:"), std::string::npos) << out;               // a comment
  EXPECT_NE(out.find("AD107 call 14:"), std::string::npos) << out;    // after a continued string
}

TEST(ScanFastPath, CallsOverLinesSuppressionsAndLineEnds) {
  const std::vector<std::string> lines = {
      "import torch", "torch.cuda.set_device(", "    rank)", "x = torch.zeros(", "    4,",
      "    device=", "    \"cuda\",", ")", "y = torch \\", "    .cuda.current_device()",
      "torch.cuda.synchronize()  # anydev: ignore", "torch.cuda.synchronize()  # anydev: ignore[AD9]",
      "torch.cuda.current_device(  # anydev: ignore", ")", "if x:", "\tif y:",
      "\t\ttorch.cuda.synchronize()", "\f\ttorch.cuda.synchronize()", "dev = \"cuda\" if "
      "torch.cuda.is_available() else \"cpu\"",
      "torch.distributed.init_process_group(backend=\"nccl\")", "with torch.autocast(\"cuda\"):",
      "    pass"};
  for (const char* nl : {"\n", "\r\n", "\r"}) {
    std::string src;
    for (const std::string& l : lines) src += l + nl;
    bool taken = false;
    Both(src, &taken);
    EXPECT_TRUE(taken) << "newline " << static_cast<int>(nl[0]);
    Both(src.substr(0, src.size() - 1));  // no final newline (or half a CRLF)
    Both("\xEF\xBB\xBF" + src);
  }
}

TEST(ScanFastPath, ErrorsAndWhatItLeavesToTheFullPath) {
  for (const char* src : {
           "import torch\ntorch.cuda.synchronize()\nx = (1]\ntorch.cuda.synchronize()\n",
           "import torch\ntorch.cuda.synchronize()\nx = 'abc\ntorch.cuda.synchronize()\n",
           "import torch\ntorch.cuda.synchronize()\nx = a ? b\ntorch.cuda.synchronize()\n",
           "import torch\ntorch.cuda.synchronize()\nx = (1,\n",
           "import torch\ntorch.cuda.synchronize()\nx = 1 \\ 2\n",
           "import torch\ntorch.cuda.synchronize()\nx = \\",
           "import torch\ntorch.cuda.synchronize()\nx = f'{a'\ntorch.cuda.synchronize()\n",
           "import torch\ntorch.cuda.synchronize()\nx = '''\n",
           "import torch\nx = 1if\"cuda\"else 2\ny = 1.f\"{torch.cuda.synchronize()}\"\n",
           "import torch\ny = 1e+f\"{torch.cuda.synchronize()}\"\n",
           "import torch\nx = '\xff'\ntorch.cuda.synchronize()\n",
           "import torch\nx = a != b  # ? $ `\ny = '? $ `'\ntorch.cuda.synchronize()\n",
       }) {
    Both(src);
  }
}

// Found by fuzzing both paths: a `.cuda(` whose ')' never comes had a call
// end of 2^32 - 1 (an unsigned -1), past the end of the file.
TEST(ScanFastPath, UnclosedCallHasNoCallEnd) {
  for (const char* src : {"import torch\nx = t.cuda(\n", "import torch\nx = t.cuda(1,\n  2\n"}) {
    Both(src);
    const FileResult r = ScanSource(Rules(), Language::kPython, src);
    ASSERT_FALSE(r.findings.empty()) << src;
    for (const Finding& f : r.findings) EXPECT_EQ(f.call_end, -1) << src << f.text;
  }
}

TEST(ScanFastPath, HugeLinesAndDeepBrackets) {
  std::string huge = "import torch\nx = [";
  for (int k = 0; k < 2000; ++k) huge += "torch.cuda.synchronize(), 'cuda', ";
  huge += std::string(200000, ' ');
  huge += "]\n";
  bool taken = false;
  Both(huge, &taken);
  EXPECT_TRUE(taken);
  const std::string deep = "import torch\nx = " + std::string(300, '(') +
                           "torch.cuda.synchronize()" + std::string(300, ')') + "\n";
  Both(deep);  // deeper than the skeleton tracks: the full path
}

}  // namespace
}  // namespace anydev::scan
