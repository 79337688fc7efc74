// The Python scanner's fast path (Note [Fast path] in core/scan/src/python_scan.cc)
// against its full path, on inputs chosen to break a scanner that skips lines:
// needles in strings and comments, aliases and scopes, statements over several
// lines, the availability idiom's statement form, suppressions, CRLF and lone
// CR, tabs and form feeds, a BOM, invalid UTF-8, syntax errors. Each input is
// scanned both ways and must give the same findings and errors; for the plain
// ones the fast path must have been taken, and some findings are checked
// outright. tests/python/scan/test_scan_fast_path.py does the same with the real
// compat table over generated trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "anydev/scan.h"
#include "fast_path_compare.h"
#include "internal.h"

namespace anydev::scan {
namespace {

using testing::CheckSearch;
using testing::Lines;

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

// Scans `src` both ways (tests/cpp/fast_path_compare.h); returns the fast
// path's result and whether the fast path took the file.
std::string Both(const std::string& src, bool* fast_taken = nullptr) {
  return testing::BothPaths(Rules(), Language::kPython, src, fast_taken);
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

// Note [Names searched from their binding] (python_scan.cc): the rounds
// search for a name bound to a target from the line of its binding on, and
// again from an earlier binding of a name searched for already (an import
// binds it further down, where the first search began to look for it; an
// assignment above binds it too). Then random files of the same names
// bound by imports, by assignments (to a target, to another name, to
// nothing), in functions and at the top, used before and after, in any
// order, each name's binding found in any round.
TEST(ScanFastPath, NamesSearchedFromTheirBinding) {
  const std::string out = Both(Lines({"import torch", "x = torch.cuda", "x.synchronize()",
                                      "from torch import cuda as x", "x.synchronize()"}));
  EXPECT_NE(out.find("AD107 call 3:1-3:14"), std::string::npos) << out;
  EXPECT_NE(out.find("AD107 call 5:1-5:14"), std::string::npos) << out;
  std::mt19937 gen(33);
  const auto name = [&gen]() { return "n" + std::to_string(gen() % 4); };
  int found = 0;
  for (int file = 0; file < 1500; ++file) {
    std::string src = "import torch\n";
    bool in_def = false;
    for (int k = 8 + static_cast<int>(gen() % 30); k > 0; --k) {
      const std::string pad = in_def ? "    " : "";
      switch (gen() % 12) {
        case 0: src += pad + "import torch.cuda as " + name() + "\n"; break;
        case 1: src += pad + "from torch import cuda as " + name() + "\n"; break;
        case 2: src += pad + name() + " = torch.cuda\n"; break;
        case 3:
        case 4: src += pad + name() + " = " + name() + "\n"; break;
        case 5: src += pad + name() + " = 1\n"; break;
        case 6:
        case 7: src += pad + name() + ".synchronize()\n"; break;
        case 8: src += pad + "y = " + name() + ".current_device()\n"; break;
        case 9:
          src += "def f" + std::to_string(k) + "():\n    pass\n";
          in_def = true;
          break;
        case 10: in_def = false; break;
        default: src += pad + "z = 1\n";
      }
    }
    bool taken = false;
    found += Both(src, &taken).find("AD107") != std::string::npos && taken;
    if (HasFailure()) break;
  }
  EXPECT_GT(found, 800);
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

// A match in dead text sends the searches on from the end of its span (a
// match that starts in a span ends in it): spans with several needles and
// aliases, over several lines, with a live needle or an alias right after
// them on the same line and on the next, at every offset across the
// search's 32-byte blocks, and a span that ends the file.
TEST(ScanFastPath, DeadSpansAreSkippedWhole) {
  const std::string body = Lines({
      "import torch", "import torch.cuda as tc",
      "\"\"\"cuda cuda tc", "tc cuda\"\"\"; tc.synchronize(); x = 1  # cuda tc cuda",
      "y = b'cuda tc cuda'+tc.current_device() + torch.cuda.current_device()",
      "# tc cuda tc", "tc.set_device(0)  # tc", "z = '''tc'''  # cuda",
      "torch.cuda.synchronize()  # tc cuda tc", "w = '''cuda tc'''tc.synchronize()"});
  for (int pad = 0; pad < 70; ++pad) {
    const std::string fill(static_cast<size_t>(pad), 'a');
    for (const std::string& tail : {std::string(), std::string("# cuda tc"),
                                    std::string("'''tc\ncuda'''")}) {
      bool taken = false;
      const std::string out = Both("v = " + fill + "\n" + body + tail, &taken);
      EXPECT_TRUE(taken);
      EXPECT_NE(out.find("AD107 call 5:"), std::string::npos) << out;
      EXPECT_NE(out.find("AD103 call 6:21"), std::string::npos) << out;
      EXPECT_NE(out.find("AD103 call 6:43"), std::string::npos) << out;
      EXPECT_NE(out.find("AD110 call 8:"), std::string::npos) << out;
      EXPECT_NE(out.find("AD107 call 10:"), std::string::npos) << out;
      EXPECT_NE(out.find("AD107 call 11:"), std::string::npos) << out;  // right after a span
    }
  }
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
bool Has(const std::string& out, const std::string& what) {
  return out.find(what) != std::string::npos;
}

// Note [noqa directives]: both paths read the `# noqa` comments on the
// findings' lines and drop what they name, or leave them to tokenize alike.
TEST(ScanFastPath, NoqaDirectives) {
  const std::string src = Lines({
      "import torch",
      "torch.cuda.synchronize()  # noqa: AD107",
      "torch.cuda.synchronize()  # NOQA:ad1",
      "torch.cuda.synchronize()  # noqa: E501, AD110",
      "torch.cuda.synchronize()  # noqa",
      "x = 1  # noqa",
      "s = '# noqa'; torch.cuda.current_device()",
      "y = (torch.cuda.current_device(),  # noqa: AD103",
      "     torch.cuda.synchronize())  # type: ignore  # noqa: AD107",
      "def f():",
      "    torch.cuda.synchronize()  # noqa:",
      "    return torch.cuda.current_device()  #noqa:AD103,AD107"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_FALSE(Has(out, " 2:")) << out;
  EXPECT_FALSE(Has(out, " 3:")) << out;
  EXPECT_TRUE(Has(out, "AD107 call 4:1")) << out;  // E501 and AD110 name no AD107
  EXPECT_FALSE(Has(out, " 5:")) << out;
  EXPECT_TRUE(Has(out, "AD103 call 7:15")) << out;  // a string is no comment
  EXPECT_FALSE(Has(out, "AD103 call 8:")) << out;
  EXPECT_FALSE(Has(out, "AD107 call 9:")) << out;
  EXPECT_TRUE(Has(out, "AD107 call 11:5")) << out;  // `noqa:` without a code names nothing
  EXPECT_FALSE(Has(out, " 12:")) << out;
  EXPECT_TRUE(Has(out, "noqa 2 AD107\n")) << out;
  EXPECT_TRUE(Has(out, "noqa 4 E501 AD110\n")) << out;
  EXPECT_TRUE(Has(out, "noqa 5 all\n")) << out;
  EXPECT_FALSE(Has(out, "noqa 6")) << out;  // no finding on its line
  EXPECT_FALSE(Has(out, "noqa 11")) << out;
  EXPECT_TRUE(Has(out, "noqa 12 AD103 AD107\n")) << out;
  EXPECT_FALSE(Has(out, "fallback")) << out;
  // The findings the directives name, kept where they are not applied.
  const FileResult all = ScanSource(Rules(), Language::kPython, src, false);
  EXPECT_EQ(all.findings.size(), 9u);
  EXPECT_EQ(all.noqa.size(), 7u);
}

TEST(ScanFastPath, NoqaAfterADedentThatMatchesNoIndent) {
  // Python's tokenize stops at line 4 (IndentationError): no directive from
  // there on counts, as in anydev/_migrate/noqa.py.
  const std::string src = Lines({"import torch", "if x:", "        torch.cuda.synchronize()  # noqa",
                                 "    torch.cuda.synchronize()  # noqa",
                                 "torch.cuda.synchronize()  # noqa"});
  const std::string out = Both(src);
  EXPECT_FALSE(Has(out, " 3:")) << out;
  EXPECT_TRUE(Has(out, "AD107 call 4:5")) << out;
  EXPECT_TRUE(Has(out, "AD107 call 5:1")) << out;
}

TEST(ScanFastPath, NoqaLeftToTokenize) {
  // Where tokenize may read the file otherwise than the lexer (Note [noqa
  // directives]), no finding is dropped and the flag says so.
  for (const std::string& src :
       {Lines({"import torch", "if x:", "\ttorch.cuda.synchronize()  # noqa"}),
        Lines({"# -*- coding: latin-1 -*-", "import torch", "torch.cuda.synchronize()  # noqa"}),
        std::string("import torch\rtorch.cuda.synchronize()  # noqa\n"),
        Lines({"import torch", "s = f'''{torch.cuda.synchronize() # noqa", "}'''"})}) {
    const std::string out = Both(src);
    EXPECT_TRUE(Has(out, "AD107 call")) << src;
    EXPECT_TRUE(Has(out, "noqa fallback")) << src;
  }
  // A noqa comment on no finding's line leaves nothing to tokenize.
  const std::string out = Both(Lines({"import torch", "if x:", "\ty = 1  # noqa",
                                      "\ttorch.cuda.synchronize()"}));
  EXPECT_FALSE(Has(out, "fallback")) << out;
}

// Note [Cheap names]: a name bound to a target with no word of the rules
// (`torch`, `torch.distributed`, `torch.Tensor`) marks only the lines where
// it may bind: each binding form the resolver reads, before the uses that
// depend on it, in random files of them.
TEST(ScanFastPath, CheapNamesWhereTheyBind) {
  const std::vector<std::string> head = {
      "import torch", "import torch as th", "from torch import Tensor",
      "import torch.distributed as dist", "from torch import device as D2"};
  const std::vector<std::string> binds = {
      "torch = None", "torch = make()", "th: int = 3", "def f(torch): pass",
      "def g(a, *torch): pass", "def h(a, torch=1): pass", "def k(a: int, torch: int): pass",
      "for torch in x: pass", "for a, torch in x: pass", "with a as torch: pass",
      "x = torch", "x = th", "x = th.cuda", "c = torch.cuda", "init = dist.init_process_group",
      "init = torch.distributed.init_process_group  # alias", "D = torch.device", "T = Tensor",
      "T = th.Tensor", "(torch := 1)", "a = torch = 2", "f = lambda torch: 1",
      "class torch: pass", "def torch(): pass", "torch, y = 1, 2", "x, torch = 1, 2",
      "*torch, = y", "try:\n    pass\nexcept E as torch:\n    pass", "global torch",
      "torch.x = 1", "x = (torch.distributed)", "x = torch.distributed.x(1)",
      "x = \\\n    th.cuda", "x = th . cuda", "y = dist; z = 1", "th.cuda = None",
      "Tensor = int", "def m(self) -> Tensor: pass", "v: Tensor = t", "w = [Tensor, th]",
      "dist = None", "D2 = th.device", "x = torch.cuda if a else None", "import os as torch",
      "from os import path as th", "d = {torch: 1}", "q = th[0]", "r = th(1)",
      "cuda = torch", "import torch as cuda", "accelerator = th", "x = \\\n  torch.cuda",
      "x = (\n    torch.cuda)", "x =torch.cuda", "x=\ttorch.cuda", "x = th.nn",
      // Note [Cheap names at a line's start and after '='] in prefilter.cc.
      "x = th.cuda(0)", "x = th.a.b  # c", "x = th.a;y = 1", "x = th.a \\\n  .b",
      "x == th.cuda", "x <= th . a . b", "x = \\\r\n  th.cuda", "x = \\\r  th.cuda",
      "th .a = 1", "th.cuda.x = 1", "y = 1 + \\\n th.cuda", "x = th\t.\fa.b",
      "x = th.a.\n", "x = th.\n", "D = \\\n  th.device", "D = \\\r\n  th.device",
      "D = \\\r  torch.device", "D = \\\n  th.device(0)"};
  const std::vector<std::string> uses = {
      "x.cuda.synchronize()",  "x.synchronize()",       "torch.cuda.synchronize()",
      "th.cuda.current_device()", "c.synchronize()",  "init(\"nccl\")",
      "init(backend=\"nccl\")", "D(\"cuda\")",          "D2(\"cuda\")",
      "T.cuda.synchronize()",  "th.device(\"cuda\")",  "dist.init_process_group(\"nccl\")",
      "torch.device(\"cuda\")", "y = th.cuda",          "y.synchronize()",
      "f(torch.cuda.synchronize)", "torch.cuda.set_device(0)", "cuda.synchronize()",
      "accelerator.cuda.synchronize()", "x.cuda.current_device()"};
  std::mt19937 rng(31);
  for (int round = 0; round < 600; ++round) {
    std::string src;
    for (const std::string& h : head) {
      if (rng() % 3 != 0) src += h + "\n";
    }
    const int n = 3 + static_cast<int>(rng() % 10);
    std::string indent;
    for (int k = 0; k < n; ++k) {
      const unsigned pick = rng() % 10;
      if (pick == 0 && indent.size() < 8) {
        src += indent + "def fn" + std::to_string(k) + "():\n";
        indent += "    ";
        src += indent + "pass\n";
        continue;
      }
      if (pick == 1 && !indent.empty()) indent.resize(indent.size() - 4);
      std::string line = pick < 6 ? binds[rng() % binds.size()] : uses[rng() % uses.size()];
      // Each line of a bind at this indent.
      std::string out;
      for (size_t b = 0; b <= line.size();) {
        size_t e = line.find('\n', b);
        if (e == std::string::npos) e = line.size();
        out += indent + line.substr(b, e - b) + "\n";
        b = e + 1;
      }
      src += out;
    }
    // A match at the file's start, and CRLF or CR line ends.
    if (round % 5 == 1) src = "th.cuda.x = 1\n" + src;
    if (round % 4 == 2 || round % 4 == 3) {
      std::string crlf;
      for (char c : src) {
        if (c == '\n' && round % 4 == 2) crlf += '\r';
        crlf += c == '\n' && round % 4 == 3 ? '\r' : c;
      }
      src = crlf;
    }
    Both(src);
  }
}

// Note [Comments and strings in the skeleton's loop] in python_scan.cc: the
// skeleton's loop ends a comment and a string of one quote without a
// prefix from its block's mask, and calls a string dead where a special
// byte lies in its body or DeadBody finds a byte no device string holds.
// Random files of such strings (every quote, escapes of quotes, backslashes
// and newlines, special and non-ASCII bytes, spaces, live strings a rule
// reads, empty ones, unterminated ones), prefixed and triple-quoted ones
// beside them, comments at a line's start and after code (with quotes and
// brackets in them, at the input's end), each at every offset of a block,
// with LF, CRLF and CR line ends; both classifiers.
void CheckCommentsAndStringsInTheLoop(int rounds, unsigned seed) {
  const std::vector<std::string> strings = {
      "'cuda'", "\"cuda:0\"", "'cuda:1'", "\"torch.cuda.synchronize\"", "'torch.cuda.x'",
      "''", "\"\"", "'a b'", "\"cu da\"", "'cuda '", "' cuda'", "'c\\'uda'", "\"c\\\"uda\"",
      "'cuda\\\\'", "\"\\\\\"", "'a\\\nb'", "'a\\\r\nb'", "'(#)'", "\"[{'\"", "'\"'", "\"'\"",
      "'\xc3\xa9'", "'cuda\xc3\xa9'", "'x-y'", "'a:b.c_d'", "r'cuda'", "b'cuda'", "f'cuda'",
      "f\"cuda:{i}\"", "rb'\\''", "u'cuda'", "'''cuda'''", "\"\"\"a\nb\"\"\"", "'\\x41'",
      "'" + std::string(70, 'c') + "'", "'" + std::string(40, ' ') + "cuda'",
      "\"" + std::string(63, 'a') + "(\"", "'unterminated", "\"unterminated\\", "'\t'"};
  const std::vector<std::string> comments = {"# cuda", "# 'cuda' (", "#", "# \"\"\" ]",
                                             "# torch.cuda.synchronize()", "#\xc3\xa9 '",
                                             "# " + std::string(90, 'x') + " )"};
  const std::vector<std::string> code = {
      "x = torch.zeros(1, device=S)", "y = t.to(S)", "torch.device(S)", "mock.patch(S)",
      "d = S if torch.cuda.is_available() else 'cpu'", "z = (S,\n     S)", "f(S, S) + g[S]",
      "torch.cuda.synchronize()", "w = {S: S}", "if S == 'x': torch.cuda.synchronize()"};
  std::mt19937 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    std::string src = "import torch\nfrom unittest import mock\n";
    src += "v = " + std::string(rng() % 130, 'a') + "\n";
    const int lines = 2 + static_cast<int>(rng() % 8);
    for (int k = 0; k < lines; ++k) {
      std::string line = rng() % 4 == 0 ? std::string(rng() % 9, ' ') : std::string();
      const unsigned pick = rng() % 6;
      if (pick == 0) {
        line += comments[rng() % comments.size()];
      } else {
        std::string c = code[rng() % code.size()];
        for (size_t at; (at = c.find('S')) != std::string::npos;) {
          c.replace(at, 1, strings[rng() % strings.size()]);
        }
        line += c;
        if (pick == 1) line += "  " + comments[rng() % comments.size()];
      }
      src += line + "\n";
    }
    if (rng() % 3 == 0) src += comments[rng() % comments.size()];  // at the end, no newline
    const unsigned ends = rng() % 3;
    if (ends != 0) {
      std::string other;
      for (char c : src) {
        if (c == '\n' && ends == 1) other += '\r';
        other += c == '\n' && ends == 2 ? '\r' : c;
      }
      src = other;
    }
    Both(src);
  }
}

TEST(ScanFastPath, CommentsAndStringsInTheSkeletonLoop) {
  CheckCommentsAndStringsInTheLoop(6000, 7);
}

TEST(ScanFastPath, CommentsAndStringsInTheSkeletonLoopScalar) {
  internal::SetSkeletonScalarForTesting(true);
  CheckCommentsAndStringsInTheLoop(1500, 8);
  internal::SetSkeletonScalarForTesting(false);
}

// Note [Docstrings in the skeleton]: triple-quoted strings of every length
// to 80, ended or not, with a backslash, a quote or a CRLF at each place,
// at the end of the input (its padding) and before code.
TEST(ScanFastPath, TripleQuotedStringsAtEveryLength) {
  for (int len = 0; len <= 80; ++len) {
    for (const char* q : {"\"\"\"", "'''"}) {
      for (int variant = 0; variant < 6; ++variant) {
        std::string body(static_cast<size_t>(len), 'x');
        if (len > 0 && variant == 1) body[static_cast<size_t>(len) / 2] = '\\';
        if (len > 0 && variant == 2) body[static_cast<size_t>(len) - 1] = q[0];
        if (len > 1 && variant == 3) body.replace(static_cast<size_t>(len) / 2, 2, "\r\n");
        if (len > 0 && variant == 4) body[static_cast<size_t>(len) - 1] = '\\';
        const std::string head = "import torch\ns = " + std::string(q) + body;
        Both(head);  // unterminated, at the end
        Both(head + q + "\ntorch.cuda.synchronize()\n");
        if (variant == 5) Both(head + q + q + "torch.cuda.synchronize()\n");
      }
    }
  }
}

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
  // Indents of 0xFFFF spaces and more (kept as 0xFFFF), after a line that
  // the skeleton's loop ends itself, and blank lines of as many spaces (the
  // loop leaves a line of 16 spaces or more to the outer loop where it has
  // as many as 0xFFFF).
  for (size_t spaces : {size_t{65534}, size_t{65535}, size_t{65536}, size_t{70000}}) {
    Both("import torch\nif x:\n" + std::string(spaces, ' ') + "torch.cuda.synchronize()\n" +
         std::string(spaces, ' ') + "y = 1\n" + std::string(spaces, ' ') +
         "\n    torch.cuda.synchronize()\ntorch.cuda.synchronize()\n");
  }
}

// The skeleton classifies 64 bytes at a time and walks the special bytes of

// The first search lexes and resolves a run of import lines as one, and the
// rounds copy its tokens (Note [Import lines lexed once]): blank and comment
// lines between them, suppressions and `noqa` on them (whose runs are lexed
// again), aliases bound and rebound within the run, imports at two indents,
// a statement after `;`, an import over several lines, a line whose `import`
// is in a comment or a string, and the run at the end of the file; with
// LF, CRLF and CR line ends.
TEST(ScanFastPath, RunsOfImportLines) {
  const std::vector<std::vector<const char*>> files = {
      {"import os", "from torch.cuda import current_device as cd", "", "# a comment",
       "import torch.cuda as tc", "x = 1", "cd()", "tc.synchronize()"},
      {"import torch", "from torch.cuda import current_device  # anydev: ignore",
       "from torch.cuda import synchronize as sy", "current_device()", "sy()"},
      {"import torch", "# anydev: ignore", "from torch.cuda import set_device  # noqa: X",
       "import torch.cuda as tc", "set_device(0)", "tc.current_device()"},
      {"import torch.cuda as tc", "import os as tc", "tc.synchronize()", "import torch.cuda as tc",
       "tc.synchronize()"},
      {"try:", "    import torch.cuda as tc", "    from torch.cuda import set_device as sd",
       "import os", "except ImportError:", "    tc = None", "tc.synchronize()", "sd(1)"},
      {"import torch.cuda as tc; tc.synchronize()", "import os; tc.current_device()",
       "from torch.cuda import (", "    current_device as cd,", "    synchronize,",
       ")", "import sys", "cd()", "synchronize()"},
      {"import torch", "x = 1  # import torch.cuda as tc", "y = 'import'", "import torch.cuda as tc",
       "\"\"\"import torch.cuda as t2\"\"\"", "tc.synchronize()", "t2.synchronize()"},
      {"def f():", "    import os", "    import torch.cuda as tc", "    return tc.synchronize()",
       "def g():", "    import torch.cuda as t2", "import sys", "    t2.synchronize()",
       "tc.synchronize()"},
      {"x = torch.cuda", "import torch", "import torch.cuda as tc", "from torch import cuda"},
      {"def f():", "    import torch.cuda as tc", "import torch.cuda as t2", "tc.synchronize()",
       "t2.synchronize()", "def g():", "    from torch.cuda import synchronize as sy",
       "    import torch.cuda as tc", "    sy()", "    tc.current_device()", "sy()"},
      {"import torch", "s = 'do import'; tc = torch.cuda", "tc.synchronize()", "def f():",
       "    '''import'''; t2 = torch.cuda; t2.synchronize()", "    tc.current_device()"},
  };
  for (const auto& lines : files) {
    for (const char* nl : {"\n", "\r\n", "\r"}) {
      std::string src;
      for (const char* l : lines) src += std::string(l) + nl;
      bool taken = false;
      Both(src, &taken);
      EXPECT_TRUE(taken) << src;
      Both(src.substr(0, src.size() - std::string(nl).size()));  // no final newline
    }
  }
  // Findings on the import lines, and those of the names they bind.
  const std::string out = Both(Lines({"import os", "from torch.cuda import current_device as cd",
                                      "", "import torch.cuda as tc", "cd()", "tc.synchronize()"}));
  EXPECT_NE(out.find("AD103 call 5:1-5:3"), std::string::npos) << out;
  EXPECT_NE(out.find("AD107 call 6:1-6:15"), std::string::npos) << out;
  EXPECT_NE(out.find(" 2:"), std::string::npos) << out;
}
// a block from its bit mask (brackets and newlines by a table, the others
// out of line; Note [Skeleton loop]): every construct is shifted across the
// blocks' boundaries (offsets 31, 32, 63, 64 among them) by a prefix of 0 to
// 129 bytes, as code, as a string the skeleton jumps over, as a comment line
// and as a bracket over two lines. Well-formed inputs must take the fast
// path; a mismatched bracket, at whatever offset, must not. Then files of
// lines 60 to 68 bytes long (so that newlines, brackets and line starts fall
// at every offset of a block), with indents that cross a block.
void CheckSkeletonBlockBoundaries();

TEST(ScanFastPath, SkeletonBlockBoundaries) { CheckSkeletonBlockBoundaries(); }

// The same with the skeleton's scalar classifier, which a CPU without AVX2
// takes (and the AVX2 loop near a file's end).
TEST(ScanFastPath, SkeletonBlockBoundariesScalar) {
  internal::SetSkeletonScalarForTesting(true);
  CheckSkeletonBlockBoundaries();
  internal::SetSkeletonScalarForTesting(false);
}

void CheckSkeletonBlockBoundaries() {
  struct Body {
    const char* text;
    bool fast;  // the fast path takes it
  };
  const Body bodies[] = {
      {"x = (a[1], {2: 3}, ())\ntorch.cuda.synchronize()\n", true},
      {"x = (a[1], {2: 3)}\ntorch.cuda.synchronize()\n", false},
      {"x = ([)]\ntorch.cuda.synchronize()\n", false},
      {"x = (1,\n  [2,\n   {3: torch.cuda.synchronize()}])\n", true},
      {"x = f'{a[1]!r:>{w}}' + f\"{'cuda:0'}\" + 'cuda:0'\ntorch.cuda.synchronize()\n", true},
      {"x = '''a\n'b'\n\"\"\" torch.cuda.synchronize() (\n'''\ntorch.cuda.synchronize()\n", true},
      {"x = \"\"\"(\n]\"\"\" + ''' \\''' '''\ntorch.cuda.synchronize()\n", true},
      {"x = 'a\\\\\\\\' + \"\\\\\\\"(\" + 'b\\\\\\\nc'\ntorch.cuda.synchronize()\n", true},
      {"x = (1,\r\n 2)\r\ntorch.cuda.synchronize()\r\n", true},
      {"x = (1,\r 2)\rtorch.cuda.synchronize()\r", true},
      {"x = 1 + \\\n  torch.cuda.synchronize()\n", true},
      {"x = 1 + \\\r\n  torch.cuda.synchronize()\r\n", true},
      {"# torch.cuda.synchronize() (\ny = ')' # ]\ntorch.cuda.synchronize()\n", true},
      {"x = (1  # )\n)\ntorch.cuda.synchronize()\n", true},
      {"x = {1: [2, (3)]}}\ntorch.cuda.synchronize()\n", false},
      {"x = ((1)\ntorch.cuda.synchronize()\n", false},
  };
  for (const Body& body : bodies) {
    for (int pad = 0; pad < 130; ++pad) {
      const std::string fill(static_cast<size_t>(pad), 'a');
      for (const std::string& prefix :
           {"import torch\nv = " + fill + " + 1\n", "import torch\nv = '" + fill + "'; ",
            "import torch\n#" + fill + "\n",
            "import torch\nv = [" + fill + ",\n  " + fill + "]\n"}) {
        const std::string src = prefix + body.text;
        bool taken = false;
        Both(src, &taken);
        EXPECT_EQ(taken, body.fast) << src;
      }
    }
  }
  // The line starts the skeleton's loop leaves to LineStartRare (tabs, form
  // feeds, comments, continuations, blank lines), a NUL, non-ASCII bytes and
  // nesting over several blocks, at every offset: the two paths agree,
  // whichever takes the file.
  const std::string rare[] = {
      "def f():\n\tx = (1,\n\f\t 2)\n\ttorch.cuda.synchronize()\n",
      "x = 1\n  \\\n  \n\\\ny = 2\n\\\r\n  torch.cuda.synchronize()\n",
      "x = '\xc3\xa9' + (\n\n   \n  1)  # \xc3\xa9\ntorch.cuda.synchronize()\n",
      std::string("x = (1,\0 2)\ntorch.cuda.synchronize()\n", 37),
      "\f\n   \t# c\n\\\n torch.cuda.synchronize()\n\t\n",
      "x = " + std::string(150, '[') + "torch.cuda.synchronize()" + std::string(150, ']') + "\n",
      "x = " + std::string(150, '(') + "\n" + std::string(150, ')') + "\ntorch.cuda.synchronize()\n",
      "x = (1,\n  \\\n  2)\r\n\r\n\rtorch.cuda.synchronize()\n",
  };
  for (const std::string& body : rare) {
    for (int pad = 0; pad < 130; ++pad) {
      const std::string fill(static_cast<size_t>(pad), 'a');
      for (const std::string& prefix :
           {"import torch\nv = " + fill + " + 1\n", "import torch\n#" + fill + "\n",
            "import torch\nv = [" + fill + ",\n  " + fill + "]\n"}) {
        Both(prefix + body);
      }
    }
  }
  for (int len = 60; len <= 68; ++len) {
    for (const char* nl : {"\n", "\r\n"}) {
      std::string src = "import torch\n";
      for (int k = 0; k < 12; ++k) {
        // A call that fills the line, one open over the line's end, and a
        // line whose indent runs into the next block.
        const size_t fill = static_cast<size_t>(len) - 24 - std::string(nl).size();
        src += "torch.cuda.synchronize(" + std::string(fill, 'b') + ")" + nl;  // len bytes
        src += "x = (" + std::string(static_cast<size_t>(k * 5), 'c') + nl + "  1)" + nl;
        src += "if x:" + std::string(nl) + std::string(static_cast<size_t>(60 + k), ' ') +
               "torch.cuda.synchronize()" + nl;
      }
      bool taken = false;
      Both(src, &taken);
      EXPECT_TRUE(taken) << src;
    }
  }
}

// The enclosing lines of a binding are found on demand (Parents in
// python_scan.cc): from the binding's line back, passing blank and comment
// lines, the lines of the same indent and deeper ones, and jumping over
// those whose parents are known. A scope whose `def` were not lexed would
// keep its alias past its end, and a call after it would be found. Random
// nests of scopes, bindings at every depth, with siblings, blank lines and
// comments between; then staircases of decreasing indents, each line a
// binding. Each input is scanned with the walks, and with every parent set
// in one pass at the first walk (as where the walks' budget runs out).
void CheckEnclosingLines() {
  uint32_t seed = 12345;
  auto rnd = [&seed](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % n;
  };
  for (int round = 0; round < 200; ++round) {
    std::string src = "import torch\n";
    int depth = 0, names = 0;
    const int lines = 20 + static_cast<int>(rnd(60));
    for (int k = 0; k < lines; ++k) {
      const std::string pad(static_cast<size_t>(4 * depth), ' ');
      switch (rnd(9)) {
        case 0:
        case 1:
          if (depth < 12) {
            src += pad + (rnd(2) ? "def f" : "if x") + std::to_string(k) +
                   (rnd(2) ? "():\n" : ":\n");
            ++depth;
            src += std::string(static_cast<size_t>(4 * depth), ' ') + "pass\n";
          }
          break;
        case 2:
          if (depth > 0) depth -= 1 + static_cast<int>(rnd(static_cast<uint32_t>(depth)));
          break;
        case 3:
          src += pad + "import torch.cuda as t" + std::to_string(names++ % 4) + "\n";
          break;
        case 4:
          src += pad + "t" + std::to_string(rnd(4)) + ".synchronize()\n";
          break;
        case 5:
          src += rnd(2) ? "\n" : pad + "# t0.synchronize()\n";
          break;
        case 6:
          src += pad + "d" + std::to_string(rnd(3)) + " = torch.cuda.current_device\n";
          break;
        case 7:
          src += pad + "d" + std::to_string(rnd(3)) + "()\n";
          break;
        default:
          src += pad + "y = (1,\n" + pad + "  2)\n";
      }
    }
    bool taken = false;
    Both(src, &taken);
    EXPECT_TRUE(taken) << src;
  }
  for (int steps : {3, 16, 40}) {
    std::string src = "import torch\nx = 1\n";
    for (int stair = 0; stair < 30; ++stair) {
      for (int k = steps; k >= 0; --k) {
        src += std::string(static_cast<size_t>(k), ' ') + "import torch.cuda as t" +
               std::to_string(k % 3) + "\n";
      }
      src += "t" + std::to_string(stair % 3) + ".synchronize()\n";
    }
    Both(src);
  }
}

TEST(ScanFastPath, EnclosingLinesOfBindingsAtAnyDepth) {
  CheckEnclosingLines();
  internal::SetParentWalkBudgetForTesting(0);
  CheckEnclosingLines();
  internal::SetParentWalkBudgetForTesting(-1);
}

// The skeleton's bracket stack stops past a depth of 200 (the file then takes
// the full path); a block's brackets are matched without the depth test
// only where 64 more cannot pass it.
TEST(ScanFastPath, SkeletonBracketDepthLimit) {
  for (int depth : {63, 64, 65, 135, 136, 137, 150, 199, 200, 201}) {
    const std::string nest = std::string(static_cast<size_t>(depth), '(') +
                             "torch.cuda.synchronize()" +
                             std::string(static_cast<size_t>(depth), ')');
    for (int pad = 0; pad < 70; pad += 7) {
      const std::string src = "import torch\nx = " + std::string(static_cast<size_t>(pad), ' ') +
                              nest + "\ntorch.cuda.synchronize()\n";
      bool taken = false;
      Both(src, &taken);
      EXPECT_EQ(taken, depth < 200) << depth;  // the call inside is one more
    }
    // One close too many, or of the wrong kind, at the deepest point.
    Both("import torch\nx = " + nest + ")\n");
    std::string wrong = nest;
    wrong[wrong.size() - static_cast<size_t>(depth)] = ']';
    Both("import torch\nx = " + wrong + "\n");
  }
}

// The skeleton ends a plain f-string by a scan of its own (Note [Plain
// f-strings] in python_scan.cc) and hands the others to the lexer's code:
// where it says plain, its end must be the lexer's, on chosen bodies and on
// random ones of the bytes that matter (fields, conversions, specs, nested
// fields, '=', quotes, backslashes, newlines, brackets, a NUL), with either
// quote and prefix; then whole files with f-strings across the skeleton's
// blocks, both paths.
TEST(ScanFastPath, PlainFStringsEndAsTheLexerEndsThem) {
  size_t plain_seen = 0;
  const auto check = [&plain_seen](const std::string& src, size_t start, size_t quote) {
    size_t plain = 0, lexed = 0;
    internal::FStringEndsForTesting(src, start, quote, &plain, &lexed);
    if (plain != 0) {
      ++plain_seen;
      EXPECT_EQ(plain, lexed) << src;
    }
  };
  const char* bodies[] = {
      "", "a", "{x}", "{x!r}", "{x!r:>10}", "{x:.3f}", "{{x}}", "}", "{x:{w}}", "{x=}",
      "{x:=3}", "{x!=y}", "{ }", "{}", "{x", "{x:", "{1.e5}", "{x!r :>3}", "{x!r\t}",
      "{x.y.z:>{w}.{p}f}", "{a b}", "{x!}", "{x!:}", "{x::}", "{x:}}", "{x}}", "{{", "{x!r!s}",
      "{x:\\n}", "a\\nb", "{x:a\nb}", "{x[0]}", "{f(x)}", "{'a'}", "{x:'}", "{x # c}",
      "{\xc3\xa9}", "{x!\xc3\xa9}", "{x:\xc3\xa9}", "{x!r:}", "{ x . y }", "{0x1f}", "{1e+5}",
  };
  for (const char* body : bodies) {
    for (const char* prefix : {"f", "rf", "F", "fR"}) {
      for (const char* quote : {"\"", "'"}) {
        const std::string head = std::string("x = ") + prefix;
        check(head + quote + body + quote + " + 1\n", 4, head.size());
        check(head + quote + body, 4, head.size());  // unterminated
      }
    }
  }
  const std::string alphabet = "ab_9. {}{}!:=rs'\"\\\n\t(#,>\r";
  uint32_t seed = 7;
  for (int round = 0; round < 20000; ++round) {
    std::string body;
    seed = seed * 1103515245u + 12345u;
    const int len = static_cast<int>((seed >> 16) % 16);
    for (int j = 0; j < len; ++j) {
      seed = seed * 1103515245u + 12345u;
      body += alphabet[(seed >> 16) % alphabet.size()];
    }
    if (round % 50 == 0) body += '\0';
    const char quote = round % 2 ? '"' : '\'';
    check("f" + std::string(1, quote) + body + quote + body + quote + "\n", 0, 1);
  }
  EXPECT_GT(plain_seen, 2000u);
  for (int pad = 0; pad < 130; ++pad) {
    const std::string fill(static_cast<size_t>(pad), 'a');
    Both("import torch\nv = " + fill + " + 1\nx = f\"{a.b:.3f} on torch.cuda {c!r}\" + (\n" +
         "  f'{d}}}{{'); torch.cuda.synchronize()\ny = f\"{e:{w}}\" + f'''{x}\n'''\n" +
         "z = f\"cuda:{rank}\"\ntorch.cuda.synchronize()\n");
  }
}

// The lexer records each bracket's closer as it lexes (Note [Brackets
// matched as lexed] in python_scan.cc), where the resolver and the literal
// rules matched them after: a call's end past nested brackets of every kind,
// f-string fields (with nested fields in a format spec) and lines, the
// brackets of an import run whose tokens the rounds copy, and the literal
// rules' skip over an f-string's field to the availability idiom's `else`.
TEST(ScanFastPath, BracketsMatchedAsLexed) {
  const std::vector<std::string> calls = {
      "import torch\nx = torch.cuda.set_device(f\"{a[(1)]:{w}>{v!r}}\", {'k': (2, [3])})\n",
      "import torch\ny = torch.cuda.synchronize(\n  (1), f'{(b)}', [\n  {2}],\n)\nz = 1\n",
      "from torch.cuda import (synchronize as s,\n    current_device)\nimport os\n"
      "s([1], (2), {f'{c}': (3)})\n",
      "import torch\nif x:\n    torch.cuda.set_device(f\"{a}{b:{c}{d}}\"[0], (1))\n",
  };
  for (const std::string& src : calls) {
    for (int fast : {0, 1}) {
      internal::SetFastPathForTesting(fast);
      const FileResult r = ScanSource(Rules(), Language::kPython, src);
      internal::SetFastPathForTesting(-1);
      int calls_seen = 0;
      for (const Finding& f : r.findings) {
        if (f.kind != RefKind::kCall) continue;
        ++calls_seen;  // the one call, whose ')' is the source's last
        EXPECT_EQ(f.call_end, static_cast<int64_t>(src.rfind(')') + 1)) << src << fast;
      }
      EXPECT_EQ(calls_seen, 1) << src << fast;
    }
    Both(src);
  }
  const std::string idiom =
      "import torch\ndev = \"cuda\" if f\"{x[(1)]}{y:{z}}\" and torch.cuda.is_available() "
      "else \"cpu\"\n";
  bool taken = false;
  const std::string out = Both(idiom, &taken);
  EXPECT_TRUE(taken);
  EXPECT_NE(out.find("AD905"), std::string::npos) << out;
}

// The fast path's lexer takes a line's indent from the skeleton's region
// (Note [Indents from the skeleton] in python_scan.cc): scopes that open and
// close by indents of spaces, tabs, form feeds, a continuation at a line's
// start, blank and comment lines between, lines after an import run whose
// tokens are copied, and CRLF; an alias bound in a function is no finding
// after it.
TEST(ScanFastPath, IndentsFromTheSkeleton) {
  const std::vector<std::vector<std::string>> bodies = {
      {"    ", "    "}, {"\t", "\t"}, {"  \t", "\t"}, {"\f    ", "    "},
      {"\\\n    ", "    "}, {"        ", "        "}};
  for (const auto& indents : bodies) {
    for (const char* nl : {"\n", "\r\n"}) {
      const std::string& a = indents[0];
      const std::string& b = indents[1];
      std::string src;
      for (const std::string& l :
           {std::string("import torch"), std::string("import os"), std::string(""),
            std::string("def f():"), a + "import torch.cuda as tc", a + "import os",
            std::string(""), a + "# a comment", b + "tc.synchronize()",
            a + "x = (1,", std::string("  2)"), a + "tc.synchronize()",
            std::string("tc.synchronize()"), std::string("class C:"),
            a + "from torch.cuda import synchronize as s", b + "s()",
            std::string("s()")}) {
        src += l + nl;
      }
      bool taken = false;
      const std::string out = Both(src, &taken);
      EXPECT_TRUE(taken) << src;
      size_t calls = 0;
      for (size_t at = out.find("AD107 call"); at != std::string::npos;
           at = out.find("AD107 call", at + 1)) {
        ++calls;
      }
      EXPECT_EQ(calls, 3u) << src << out;  // those in the scopes of the aliases
    }
  }
  // A tab is to the next multiple of 8: eight spaces close a scope opened
  // at a tab (a count of bytes would keep it open).
  const std::string out = Both(Lines({"import torch", "def f():", "\tdef g():",
                                      "\t    import torch.cuda as tc", "\t    tc.synchronize()",
                                      "        tc.synchronize()", "\f\ttc.synchronize()"}));
  EXPECT_NE(out.find("AD107 call 5:"), std::string::npos) << out;
  EXPECT_EQ(out.find("AD107 call 6:"), std::string::npos) << out;
  EXPECT_EQ(out.find("AD107 call 7:"), std::string::npos) << out;
}

// Indents of every width from 1 to 40 spaces, with either skeleton loop:
// FirstNonSpace looks 16 bytes a step, so widths of 15, 16, 17, 31, 32 and
// 33 end in the last byte of a step, its first, and the next step's. A
// width taken wrong moves a line in or out of the scope that binds the
// alias (the full path, which counts its own, then finds another number of
// calls): where the lexer reads the line, it counts the indent itself
// unless the skeleton found its first token, so the second file has the
// line that closes the scope left out (its indent is the marker's, Note
// [Fast path]). The last line, of spaces alone and no newline, ends in
// the padding.
void CheckIndentsOfEveryWidth() {
  for (size_t width = 1; width <= 40; ++width) {
    const std::string a(width, ' ');
    const std::string deeper(width + 1, ' ');
    bool taken = false;
    const std::string out =
        Both("import torch\ndef f():\n" + a + "def g():\n" + deeper +
                 "import torch.cuda as tc\n" + a + "w = 2\n" + deeper + "tc.synchronize()\n" + a,
             &taken);
    EXPECT_TRUE(taken) << width;
    EXPECT_EQ(out.find("AD107"), std::string::npos) << width << out;  // g's scope closed
  }
  for (size_t width = 1; width <= 40; ++width) {
    const std::string a(width, ' ');
    const std::string deeper(width + 1, ' ');
    for (const char* nl : {"\n", "\r\n"}) {
      std::string src;
      for (const std::string& l :
           {std::string("import torch"), std::string("def f():"), a + "import torch.cuda as tc",
            a + "tc.synchronize()", a + "   ", deeper + "tc.synchronize()", a + "x = (1,",
            std::string("  2)"), a + "tc.synchronize()", std::string("tc.synchronize()"),
            std::string("if x:"), deeper + "y = 1"}) {
        src += l + nl;
      }
      src += a;
      bool taken = false;
      const std::string out = Both(src, &taken);
      EXPECT_TRUE(taken) << width;
      size_t calls = 0;
      for (size_t at = out.find("AD107 call"); at != std::string::npos;
           at = out.find("AD107 call", at + 1)) {
        ++calls;
      }
      EXPECT_EQ(calls, 3u) << width << out;  // those in the alias's scope
    }
  }
}

TEST(ScanFastPath, IndentsOfEveryWidth) { CheckIndentsOfEveryWidth(); }

TEST(ScanFastPath, IndentsOfEveryWidthScalar) {
  internal::SetSkeletonScalarForTesting(true);
  CheckIndentsOfEveryWidth();
  internal::SetSkeletonScalarForTesting(false);
}

// The resolver's strings and vectors are kept from run to run (Note
// [Resolver scratch] in python_scan.cc): a binding's target is a view of a
// string reused in order. Many bindings in one run (past a block of the
// deque that holds the strings, and past the 15 bytes a string holds
// inline), aliases bound by assignment, then a file that uses the same
// names unbound: it must find nothing of what the first bound.
TEST(ScanFastPath, ResolverScratchFromFileToFile) {
  std::string src = "import torch\n";
  for (int k = 0; k < 40; ++k) {
    const std::string name = "a" + std::to_string(k);
    src += "from torch.cuda import synchronize as " + name + "\n";
    if (k % 3 == 0) src += "def f" + name + "():\n    x = 1\n";
    src += "b" + std::to_string(k) + " = torch.cuda\n";
  }
  for (int k = 0; k < 40; ++k) {
    src += "a" + std::to_string(k) + "()\n";
    src += "b" + std::to_string(k) + ".current_device()\n";
  }
  const std::string out = Both(src);
  size_t sync = 0, device = 0;
  for (size_t at = out.find("AD107 call"); at != std::string::npos;
       at = out.find("AD107 call", at + 1)) {
    ++sync;
  }
  for (size_t at = out.find("AD103 call"); at != std::string::npos;
       at = out.find("AD103 call", at + 1)) {
    ++device;
  }
  EXPECT_EQ(sync, 40u) << out;
  EXPECT_EQ(device, 40u) << out;
  std::string later;
  for (int k = 0; k < 40; ++k) {
    later += "a" + std::to_string(k) + "()\nb" + std::to_string(k) + ".current_device()\n";
  }
  bool taken = false;
  EXPECT_EQ(Both(later, &taken).find("AD10"), std::string::npos);
}

// Note [Searches kept by their names]: the searches built for the names a
// file binds are kept for the next files, keyed by the names and rounds.
// A kept search must hold its own copy of the names (the next file, read
// into the same buffer, has other bytes where the first had the alias:
// fails where it views the file), the same names bound in one import round
// or in two are searched for alike, and past the kept searches' bound
// (256) a file builds its own.
TEST(ScanFastPath, SearchesKeptFromFileToFile) {
  // (The names alone on their lines: only the names' searches find them;
  // past 8 bytes: a search compares a shorter needle with the copy of its
  // head that it holds.)
  const std::string first =
      Lines({"from torch.cuda import synchronize as wait_for_device", "x = 1",
             "wait_for_the_device = wait_for_device", "wait_for_device()",
             "wait_for_the_device()"});
  // As long, the names elsewhere (the bytes where `first` had them differ).
  const std::string second =
      Lines({"x = 1", "from torch.cuda import synchronize as wait_for_device",
             "wait_for_the_device = wait_for_device", "wait_for_device()",
             "wait_for_the_device()"});
  ASSERT_EQ(second.size(), first.size());
  // The same buffer, refilled (as a scan's thread reads file after file),
  // first: the searches are kept from here on.
  std::string buffer = first + std::string(internal::kPadding, '\0');
  internal::SetFastPathForTesting(1);
  for (const std::string& src : {first, second, first, second}) {
    buffer.replace(0, src.size(), src);
    const std::string out = testing::Describe(
        Rules(), internal::ScanPadded(Rules(), Language::kPython,
                                      std::string_view(buffer.data(), src.size())));
    EXPECT_NE(out.find("AD107 call 4:1"), std::string::npos) << src << out;
    EXPECT_NE(out.find("AD107 call 5:1"), std::string::npos) << src << out;
  }
  internal::SetFastPathForTesting(-1);
  for (const std::string& src : {first, second, first, second}) {
    bool taken = false;
    const std::string out = Both(src, &taken);
    EXPECT_TRUE(taken) << src;
    EXPECT_NE(out.find("AD107 call 4:1"), std::string::npos) << src << out;
    EXPECT_NE(out.find("AD107 call 5:1"), std::string::npos) << src << out;
  }
  // One round (one import line binds both) and two (two runs of imports).
  const std::string one = Lines({"import torch as th, torch.cuda as tc", "th.cuda.synchronize()",
                                 "tc.current_device()"});
  const std::string two = Lines({"import torch as th", "x = 1", "import torch.cuda as tc",
                                 "th.cuda.synchronize()", "tc.current_device()"});
  for (const std::string& src : {one, two, one, two}) {
    const std::string out = Both(src);
    EXPECT_NE(out.find("AD107 call"), std::string::npos) << src << out;
    EXPECT_NE(out.find("AD103 call"), std::string::npos) << src << out;
  }
  // Past the bound: every file binds a name of its own (and assigns one).
  for (int k = 0; k < 300; ++k) {
    const std::string alias = "t" + std::to_string(k);
    const std::string src = "import torch as " + alias + "\nd" + alias + " = " + alias +
                            ".cuda\n" + alias + ".cuda.synchronize()\nd" + alias +
                            ".current_device()\n";
    bool taken = false;
    const std::string out = Both(src, &taken);
    EXPECT_TRUE(taken) << src;
    EXPECT_NE(out.find("AD107 call 3:1"), std::string::npos) << src << out;
    EXPECT_NE(out.find("AD103 call 4:1"), std::string::npos) << src << out;
  }
}

// LexMarked walks the lines left out eight at a time while none of the
// eight is marked, for the smallest indent among them (the marker's): a gap
// of every length up to 20, the line of the smallest indent (`def g():`,
// which ends f's scope, so that `s` no longer resolves in g) at every place
// in it (fails where a step of eight or the lines after it miss a line).
TEST(ScanFastPath, GapsOfEveryLengthKeepTheirSmallestIndent) {
  for (int length = 1; length <= 20; ++length) {
    for (int at = 0; at < length; ++at) {
      std::string src = "import torch\ndef f():\n    from torch.cuda import synchronize as s\n";
      for (int k = 0; k < length; ++k) src += k == at ? "def g():\n" : "    pass\n";
      src += "    s()\n";
      bool taken = false;
      const std::string out = Both(src, &taken);
      EXPECT_TRUE(taken) << src;
      EXPECT_EQ(out.find("AD107 call"), std::string::npos) << src << out;
    }
  }
}

// The resolver passes runs of tokens that only end a statement's start
// (strings, numbers, dots, operators) in a loop of their own, but not the
// first token of a line: a line that starts with a string or a number
// closes the scope above it, so the alias bound there no longer resolves
// (fails where the loop passes a line's first token).
// Runs at the end of the tokens (no newline), after `;`, and between the
// names of a statement the resolver reads (`name = None` keeps a binding).
TEST(ScanFastPath, ResolverPassesPlainTokens) {
  for (const char* first : {"'text'", "1.5", "...", "-x", "*a, b = c"}) {
    const std::string out =
        Both(Lines({"import torch", "def f():", "    import torch.cuda as tc",
                    "    tc.synchronize()", first, "    tc.synchronize()"}));
    EXPECT_NE(out.find("AD107 call 4:"), std::string::npos) << first << out;
    // (Indented as the scope was: only the line before closes it.)
    EXPECT_EQ(out.find("AD107 call 6:"), std::string::npos) << first << out;
  }
  const std::string out = Both(
      "import torch.cuda as tc\nx = 'a', 1.5, -2; tc.synchronize()\ntc = None\n"
      "y = [1, 2] + 'b' * 3; tc.current_device(); z = 1, 'c'");
  EXPECT_NE(out.find("AD107 call 2:"), std::string::npos) << out;
  EXPECT_NE(out.find("AD103 call 4:"), std::string::npos) << out;
}

// TokenBuffer::Append (LexMarked copies a run of import lines' tokens with
// it): into an empty buffer, across its growth (the first 4096 slots, then
// twice as many), and nothing.
TEST(TokenBuffer, AppendAcrossGrowth) {
  std::vector<uint32_t> from(9000);
  for (size_t k = 0; k < from.size(); ++k) from[k] = static_cast<uint32_t>(k * 7 + 1);
  internal::TokenBuffer<uint32_t> buf;
  buf.Append(from.data(), 0);
  EXPECT_TRUE(buf.empty());
  buf.Append(from.data(), 3);
  *buf.Add() = 5;
  buf.Append(from.data() + 3, 4092);  // to 4096 exactly
  buf.Append(from.data() + 4095, 1);  // past it
  buf.Append(from.data() + 4096, 4904);
  ASSERT_EQ(buf.size(), 9001u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(buf[k], from[k]);
  EXPECT_EQ(buf[3], 5u);
  for (size_t k = 3; k < 9000; ++k) ASSERT_EQ(buf[k + 1], from[k]) << k;
}

// A chain's qualified name is matched at its prefixes that end at a dot,
// the target's dots and those between the chain's names (Chain gives
// LongestPrefix their offsets as it writes the name): spellings of two and
// four components, matched at a dot of the chain's or of its target's,
// chains longer than any spelling, a call, and a target of more than 15
// dots.
TEST(ScanFastPath, ChainsMatchAtTheirPrefixes) {
  std::vector<Rule> r;
  r.push_back({"AD100", Language::kPython, false, {"torch.cuda"}});
  r.push_back({"AD200", Language::kPython, false, {"torch.cuda.amp.GradScaler"}});
  const RuleSet rules(std::move(r));
  const std::string out = testing::BothPaths(
      rules, Language::kPython,
      Lines({"import torch.cuda as tc", "from torch import cuda as c",
             "x = tc.synchronize.a.b", "y = c.amp.GradScaler.x", "z = c.amp.x",
             "import torch.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p as deep", "w = deep.x.y",
             "v = tc.amp.GradScaler().scale", "import torch.cuda.amp as amp", "u = amp.x"}),
      nullptr);
  EXPECT_NE(out.find("AD100 reference 3:5-3:7"), std::string::npos) << out;
  EXPECT_NE(out.find("AD200 reference 4:5-4:21"), std::string::npos) << out;
  EXPECT_NE(out.find("AD100 reference 5:5-5:6"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 7:"), std::string::npos) << out;
  EXPECT_NE(out.find("AD200 call 8:5-8:22"), std::string::npos) << out;
  EXPECT_NE(out.find("AD100 reference 10:5-10:8"), std::string::npos) << out;
}

// NeedleSearch (prefilter.cc) against a plain search of every offset: whole
// words and not, short aliases that occur inside words (Note [Word
// boundaries]), needles at the text's start, after a non-ASCII byte, across
// the 32-byte blocks (offsets 31, 32, 63, 64) and at the end; a text that
// starts after a BOM; searches that start mid-text (testing::CheckSearch,
// fast_path_compare.h).
TEST(NeedleSearch, WordsAtBlockBoundariesAndInsideWords) {
  const std::vector<std::pair<std::string, bool>> needles = {
      {"cuda", false}, {"import", true}, {"th", true}, {"tc", true}, {"cd", true},
      {"F", true},     {"nnx", true},    {"accelerator", false}, {"xpu", false}};
  std::vector<std::string> texts;
  for (const size_t at : {0, 1, 30, 31, 32, 33, 62, 63, 64, 65, 95, 96}) {
    for (const char* w : {"th", "tc.x", "cd(", "F", "nnx", "import", "cuda", "xpu"}) {
      for (const char* before : {"", " ", "a", "_", "9", "\xC3\xA9", "\n", "."}) {
        std::string t(at, ' ');
        for (size_t k = 0; k < at; k += 7) t[k] = 'w';  // words and spaces
        const std::string b = before;
        t.replace(at >= b.size() ? at - b.size() : 0, std::min(at, b.size()), b);
        t += w;
        texts.push_back(t);
        texts.push_back(t + "e");  // inside a word at its end
        texts.push_back(t + " with the method path = th");
      }
    }
  }
  uint32_t seed = 12345;
  const std::string alphabet = "thcdFnxuaimport _.(\n9\xC3\xA9";
  for (int k = 0; k < 300; ++k) {
    std::string t;
    const int len = 1 + static_cast<int>(seed % 160);
    for (int j = 0; j < len; ++j) {
      seed = seed * 1103515245u + 12345u;
      t += alphabet[(seed >> 16) % alphabet.size()];
    }
    texts.push_back(t);
  }
  // Whole words of 2 bytes and of no other length under 4: the kernel that
  // tests that length alone (NextAvx2<true, true>, the Python fast path's).
  const std::vector<std::pair<std::string, bool>> words2 = {
      {"cuda", false}, {"import", true}, {"th", true},          {"tc", true},
      {"cd", true},    {"nnx", false},   {"accelerator", false}, {"xpu", false}};
  for (const std::string& t : texts) {
    CheckSearch(needles, t, 0);
    CheckSearch(needles, "\xEF\xBB\xBF" + t, 3);  // after a BOM: no byte before the text
    CheckSearch(words2, t, 0);
    CheckSearch(words2, "\xEF\xBB\xBF" + t, 3);
  }
  // Only word needles; one bucket holds several of one length.
  CheckSearch({{"th", true}, {"tx", true}, {"ty", true}}, "with th the tx_ ty\nth", 0);
  // More distinct short words than buckets: some share a bucket with others.
  std::vector<std::pair<std::string, bool>> many;
  for (const char* w : {"a", "bb", "ccc", "dddd", "e", "ff", "ggg", "h", "ii", "jjj", "kk"}) {
    many.emplace_back(w, true);
  }
  many.emplace_back("zz", false);
  CheckSearch(many, std::string(40, 'x') + " a bb ccc dddd e ff ggg h ii jjj kk zzz aa bbb", 0);
}


// Note [Raw low nibbles] (prefilter.cc): bytes >= 0x80 before, inside and
// right after needles, at every offset around the 32- and 64-byte blocks
// and at the text's end (then the padding, or, with `end` cut, more text),
// for a needle set the AVX2 kernel searches without masking the low nibbles
// (needles of 3 bytes or more, and whole words of 2) and for sets where it
// must mask them: a whole word of 1 byte (its third fingerprint byte is not
// the one after it), a 2-byte needle not a whole word, a needle whose
// fingerprint holds bytes >= 0x80.
TEST(NeedleSearch, BytesFrom0x80AroundNeedlesAtBlockEdges) {
  using Needles = std::vector<std::pair<std::string, bool>>;
  const Needles raw = {
      {"th", true}, {"tc", true}, {"cuda", false}, {"import", true}, {"xpu", false}};
  const std::vector<Needles> sets = {
      raw,
      {{"th", true}, {"F", true}, {"cuda", false}},
      {{"th", true}, {"ab", false}, {"cuda", false}},
      {{"th", true}, {"\xC3\xA9t\xC3\xA9", false}, {"cuda", false}},
  };
  const char* words[] = {"th", "tc", "F", "ab", "cuda", "xpu", "import", "\xC3\xA9t\xC3\xA9"};
  const char* afters[] = {"", "\xC3\xA9", " \xC3\xA9", "  \xC3\xA9", "\x80", " \xFF x", "_"};
  for (const Needles& needles : sets) {
    for (size_t at = 0; at < 100; at += (at < 24 || (at > 26 && at < 36) || at > 58 ? 1 : 5)) {
      for (const char* w : words) {
        for (const char* after : afters) {
          std::string t(at, '\xC3');
          for (size_t k = 1; k < at; k += 2) t[k] = static_cast<char>('\xA9');
          if (at > 0 && at % 3 == 0) t[at - 1] = ' ';
          t += w;
          t += after;
          CheckSearch(needles, t, 0);
          // The text cut right after the needle: the byte after is text.
          const size_t cut = at + std::string(w).size();
          CheckSearch(needles, t, 0, cut);
        }
      }
    }
  }
}


// The AVX2 kernel's rounds of four 32-byte blocks, then two, then one, then
// the scalar loop: a needle at every offset of texts of 140 to 300 bytes
// (each searched from every offset), so that each block of each round, and
// each step down, holds the first match somewhere; the text cut right after
// the needle and 0 to 40 bytes after it.
TEST(NeedleSearch, MatchesInEachBlockOfARound) {
  const std::vector<std::pair<std::string, bool>> needles = {
      {"th", true}, {"cuda", false}, {"import", true}, {"xpu", false}};
  for (const size_t len : {140, 191, 224, 300}) {
    for (size_t at = 90; at + 6 <= len; at += (at % 32 < 4 || at % 32 > 28 ? 1 : 9)) {
      for (const char* w : {"th", "cuda", "import"}) {
        std::string t(len, 'w');
        for (size_t k = 5; k < len; k += 6) t[k] = ' ';
        t.replace(at, std::string(w).size(), w);
        if (at > 0) t[at - 1] = ' ';
        if (at + 2 < len) t[at + std::string(w).size()] = ' ';
        CheckSearch(needles, t, 0);
        CheckSearch(needles, t.substr(0, at + std::string(w).size()), 0);
      }
    }
  }
}


// Note [Raw low nibbles] across Builds: a search built without masking the
// low nibbles must mask them once a later Add (a Build that goes on from
// the needles built) brings a 1-byte needle, or turns a whole-word 2-byte
// needle into one that is not (a Build that starts over).
TEST(NeedleSearch, RawLowNibblesAfterMoreAdds) {
  using Needles = std::vector<std::pair<std::string, bool>>;
  const std::string text =
      "th F \xC3\xA9 ab\xC3\xA9 F\n\xC3\xA9 cuda F \xC3\xA9\xC3\xA9 ab \xC3\xA9 xab\xFF";
  for (const auto& [first, more] : std::vector<std::pair<Needles, Needles>>{
           {{{"th", true}, {"cuda", false}}, {{"F", true}}},
           {{{"th", true}, {"ab", true}, {"cuda", false}}, {{"ab", false}}},
       }) {
    internal::NeedleSearch search;
    for (const auto& [n, word] : first) ASSERT_TRUE(search.Add(n, word));
    search.Build();
    testing::CheckBuiltSearch(search, first, text, 0);
    Needles all = first;
    for (const auto& [n, word] : more) {
      ASSERT_TRUE(search.Add(n, word));
      all.emplace_back(n, word);
    }
    search.Build();
    testing::CheckBuiltSearch(search, all, text, 0);
  }
}

}  // namespace
}  // namespace anydev::scan
