// The scanner's lexers and resolvers (core/scan), on small sources, with a
// few rules written out here (the real ones come from the compat table, in
// tests/python/scan/test_scan.py). Pairs with tests/python/scan/test_scan.py.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <random>
#include <cstdio>
#include <string>
#include <vector>

#include "anydev/scan.h"

namespace anydev::scan {
namespace {

const RuleSet& Rules() {
  static const RuleSet* rules = new RuleSet({
      {"AD101", Language::kPython, false, {"torch.cuda.is_available"}},
      {"AD103", Language::kPython, false, {"torch.cuda.current_device"}},
      {"AD107", Language::kPython, false, {"torch.cuda.synchronize"}},
      {"AD109", Language::kPython, true, {"torch.cuda.default_stream"}},
      {"AD113", Language::kPython, false, {"torch.cuda.Stream"}},
      {"AD201", Language::kPython, false, {"torch.cuda.empty_cache"}},
      {"AD233", Language::kPython, true, {"torch.cuda.memory"}},
      {"AD312", Language::kPython, false, {"torch.cuda.amp"}},
      {"AD313", Language::kPython, false, {"torch.cuda.amp.autocast"}},
      {"AD501", Language::kPython, false, {"torch.accelerator.current_device_idx"}},
      {"AD601", Language::kCpp, false, {"c10::cuda::device_count", "at::cuda::device_count"}},
      {"AD603", Language::kCpp, false, {"c10::cuda::current_device", "at::cuda::current_device"}},
      {"AD619", Language::kCpp, false, {"c10::cuda::CUDAStream", "at::cuda::CUDAStream"}},
      {"AD620",
       Language::kCpp,
       true,
       {"c10::cuda::CUDAStream::priority_range", "at::cuda::CUDAStream::priority_range"}},
      {"AD625",
       Language::kCpp,
       false,
       {"c10::cuda::getCurrentCUDAStream", "at::cuda::getCurrentCUDAStream"}},
      {"AD701",
       Language::kCpp,
       false,
       {"c10::cuda::CUDACachingAllocator::emptyCache",
        "at::cuda::CUDACachingAllocator::emptyCache"}},
  });
  return *rules;
}

// "line:col-end_line:end_col CODE kind `text`" per finding, then "! line message"
// per error.
std::vector<std::string> Scan(Language lang, std::string_view src) {
  const FileResult r = ScanSource(Rules(), lang, src);
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    out.push_back(std::to_string(f.line) + ":" + std::to_string(f.column) + "-" +
                  std::to_string(f.end_line) + ":" + std::to_string(f.end_column) + " " +
                  Rules().rules()[static_cast<size_t>(f.rule)].code + " " + RefKindName(f.kind) +
                  " `" + std::string(f.text) + "`");
  }
  for (const FileError& e : r.errors) {
    out.push_back("! " + std::to_string(e.line) + " " + e.message);
  }
  return out;
}

std::vector<std::string> Py(std::string_view src) { return Scan(Language::kPython, src); }
std::vector<std::string> Cpp(std::string_view src) { return Scan(Language::kCpp, src); }

using V = std::vector<std::string>;

// The lines between two findings are counted 256 and 32 bytes a step, the
// last n % 32 from a mask of the 32 bytes that end at the finding
// (CountNewlines in scan_source.cc): a span of every length up to 200, with
// its newlines at every offset of the last block, and the span after it.
TEST(ScanLines, LineNumbersAfterSpansOfEveryLength) {
  for (size_t gap = 0; gap <= 200; ++gap) {
    for (size_t period : {3u, 7u, 33u}) {
      std::string filler, rest;
      for (size_t k = 0; k < gap; ++k) filler += k % period == period - 1 ? '\n' : '#';
      for (size_t k = 0; k < 200 - gap; ++k) rest += k % period == period - 1 ? '\n' : '#';
      const std::string src = "import torch\n" + filler + "\ntorch.cuda.synchronize()\n" + rest +
                              "\n  torch.cuda.synchronize()\n";
      const int first = 3 + static_cast<int>(std::count(filler.begin(), filler.end(), '\n'));
      const int second = first + 2 + static_cast<int>(std::count(rest.begin(), rest.end(), '\n'));
      const std::string a = std::to_string(first), b = std::to_string(second);
      EXPECT_EQ(Py(src), (V{a + ":1-" + a + ":23 AD107 call `torch.cuda.synchronize`",
                            b + ":3-" + b + ":25 AD107 call `torch.cuda.synchronize`"}))
          << "gap " << gap << ", a newline every " << period;
    }
  }
}

// Long spans go 256 bytes a round, 31 rounds before the byte counters are
// summed (Note [Newlines 256 bytes a round]): spans around the multiples of
// 256 and of the 31 rounds' 7936 bytes, with a newline every byte (each
// counter at its most), every other byte and every 255th.
TEST(ScanLines, LineNumbersAfterLongSpans) {
  for (const size_t gap : {255u, 256u, 257u, 511u, 512u, 7935u, 7936u, 7937u, 8191u, 8192u,
                           15872u, 16131u, 40000u}) {
    for (const size_t period : {1u, 2u, 255u}) {
      std::string filler;
      for (size_t k = 0; k < gap; ++k) filler += k % period == period - 1 ? '\n' : '#';
      const std::string src =
          "import torch\n" + filler + "\ntorch.cuda.synchronize()\ntorch.cuda.synchronize()\n";
      const int first = 3 + static_cast<int>(std::count(filler.begin(), filler.end(), '\n'));
      const std::string a = std::to_string(first), b = std::to_string(first + 1);
      EXPECT_EQ(Py(src), (V{a + ":1-" + a + ":23 AD107 call `torch.cuda.synchronize`",
                            b + ":1-" + b + ":23 AD107 call `torch.cuda.synchronize`"}))
          << "gap " << gap << ", a newline every " << period;
    }
  }
}

// Columns are code points since the line start (or the last finding on the
// line), counted 32 bytes a step and the rest from the 32 that end at the
// finding (CountCodePoints): strings of one- to three-byte characters of
// every length to 80 before the first finding and after it.
TEST(ScanLines, ColumnsAfterTextOfEveryLength) {
  for (size_t k = 0; k <= 80; ++k) {
    for (const std::string ch : {"a", "\xC3\xA9", "\xE2\x82\xAC"}) {
      std::string a, b;
      for (size_t j = 0; j < k; ++j) a += ch;
      for (size_t j = k; j < 80; ++j) b += ch;
      const std::string src = "import torch\n" + std::string(k % 37, '#') + "\ns = '" + a +
                              "'; torch.cuda.synchronize(); t = '" + b +
                              "'; torch.cuda.synchronize()\n";
      const std::string first = std::to_string(k + 9);
      EXPECT_EQ(Py(src), (V{"3:" + first + "-3:" + std::to_string(k + 31) +
                                " AD107 call `torch.cuda.synchronize`",
                            "3:123-3:145 AD107 call `torch.cuda.synchronize`"}))
          << k << " of " << ::testing::PrintToString(ch);
    }
  }
}

// --- Python -------------------------------------------------------------------

// Note [Rule tables]: a key is told apart by its length and its first and
// last eight bytes, the rest compared only when those agree; keys that agree
// there (or are shorter than eight bytes, or empty) must still be told apart.
TEST(RuleTables, KeysThatShareTheirEndsAndShortKeys) {
  const RuleSet rules({
      {"A1", Language::kPython, false, {"torch.cuda.aaaaaaaa.current_device"}},
      {"A2", Language::kPython, false, {"torch.cuda.aaaaaaab.current_device"}},
      {"A3", Language::kPython, false, {"torch.cuda.baaaaaaa.current_device"}},
      {"A4", Language::kPython, false, {"x.y", "ab.c", "abcd.e", "abcdefgh.i"}},
      {"A5", Language::kPython, false, {"torch.cuda.aaaaaaaa.current_device"}},  // a repeat
      {"C1", Language::kCpp, false, {"c10::cuda::a", "c10::cuda::b", "c10::cuda::a::x"}},
  });
  const Language py = Language::kPython;
  for (const auto& [text, rule] : std::vector<std::pair<std::string, int>>{
           {"torch.cuda.aaaaaaaa.current_device", 0},
           {"torch.cuda.aaaaaaab.current_device", 1},
           {"torch.cuda.baaaaaaa.current_device", 2},
           {"x.y", 3},
           {"ab.c", 3},
           {"abcd.e", 3},
           {"abcdefgh.i", 3}}) {
    const RuleSet::Spelling* s = rules.Find(py, text);  // a copy: not the rule's own bytes
    ASSERT_NE(s, nullptr) << text;
    EXPECT_EQ(s->rule, rule) << text;
    EXPECT_EQ(s->text, text);
  }
  for (const char* text :
       {"torch.cuda.aaaaaaac.current_device", "torch.cuda.caaaaaaa.current_device",
        "torch.cuda.aaaaaaa.current_device", "x.z", "y.y", "ab.d", "abcd.f", "abcdefgh.j",
        "abcdefgi.i", "", "torch.cuda", "c10::cuda::a"}) {
    EXPECT_EQ(rules.Find(py, text), nullptr) << text;
  }
  EXPECT_TRUE(rules.IsRoot(py, "torch"));
  EXPECT_TRUE(rules.IsRoot(py, "x"));
  EXPECT_TRUE(rules.IsRoot(py, "ab"));
  EXPECT_FALSE(rules.IsRoot(py, "a"));
  EXPECT_FALSE(rules.IsRoot(py, ""));
  EXPECT_FALSE(rules.IsRoot(py, "torc"));
  EXPECT_FALSE(rules.IsRoot(Language::kCpp, "torch"));
  EXPECT_TRUE(rules.HasComponent(py, "aaaaaaab"));
  EXPECT_TRUE(rules.HasComponent(py, "current_device"));
  EXPECT_FALSE(rules.HasComponent(py, "aaaaaaac"));
  EXPECT_TRUE(rules.IsNamespace(py, "torch.cuda.aaaaaaab"));
  EXPECT_FALSE(rules.IsNamespace(py, "torch.cuda.aaaaaaac"));
  EXPECT_FALSE(rules.IsNamespace(py, "torch.cuda.aaaaaaab.current_device"));
  const std::vector<std::string_view>* f = rules.Followers(py, "torch.cuda");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f, (std::vector<std::string_view>{"aaaaaaaa", "aaaaaaab", "baaaaaaa"}));
  f = rules.Followers(Language::kCpp, "c10::cuda");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f, (std::vector<std::string_view>{"a", "b"}));
  f = rules.Followers(Language::kCpp, "c10::cuda::a");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f, (std::vector<std::string_view>{"x"}));
  f = rules.Followers(Language::kCpp, "c10::cuda::b");  // a spelling, no namespace
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(rules.Followers(py, "torch.cuda.aaaaaaaa")->size(), 1u);
}

// Note [Finding texts]: the texts view one block that the FileResult shares
// with its copies. A file whose texts are short in all (here 13 bytes: a
// std::string would keep them inside itself, and a move would leave the
// views behind) must keep them, in that block, through copies, moves and a
// vector's growth, its original gone; a file whose findings were all
// suppressed holds none.
TEST(ScanTexts, ViewsOutliveCopiesMovesAndTheOriginal) {
  const std::string src = "import torch.cuda as c\nc.Stream()\nc.amp\n";
  std::vector<FileResult> results;
  {
    FileResult r = ScanSource(Rules(), Language::kPython, src);
    ASSERT_EQ(r.findings.size(), 2u);
    ASSERT_NE(r.texts, nullptr);
    EXPECT_EQ(r.texts->size(), 13u);
    const FileResult copy = r;
    results.push_back(std::move(r));
    results.push_back(copy);
  }
  for (int i = 0; i < 100; ++i) {  // grows (moves) the vector many times over
    results.push_back(ScanSource(Rules(), Language::kPython, src));
  }
  for (const FileResult& r : results) {
    ASSERT_EQ(r.findings.size(), 2u);
    ASSERT_NE(r.texts, nullptr);
    for (const Finding& f : r.findings) {
      EXPECT_GE(f.text.data(), r.texts->data());
      EXPECT_LE(f.text.data() + f.text.size(), r.texts->data() + r.texts->size());
      EXPECT_EQ(f.text, src.substr(f.start, f.end - f.start));
    }
    EXPECT_EQ(r.findings[0].text, "c.Stream");
    EXPECT_EQ(r.findings[1].text, "c.amp");
  }
  const FileResult quiet = ScanSource(
      Rules(), Language::kPython, "import torch\ntorch.cuda.synchronize()  # anydev: ignore\n");
  EXPECT_TRUE(quiet.findings.empty());
  EXPECT_EQ(quiet.texts, nullptr);
}

TEST(ScanPython, QualifiedCallAndPositions) {
  EXPECT_EQ(Py("import torch\nx = torch.cuda.current_device()\n"),
            V({"2:5-2:30 AD103 call `torch.cuda.current_device`"}));
}

TEST(ScanPython, PatchTargetsAreMockFindings) {
  // Note [Mock targets]: a string target spans the literal, an object target
  // the object and the literal.
  EXPECT_EQ(Py("import torch as th\nmock.patch(\"torch.cuda.empty_cache\")\n"
               "monkeypatch.setattr(th.cuda, 'current_device', f)\n"
               "patch.object(th.cuda, \"empty_cache\")\n"),
            V({"2:12-2:36 AD201 mock `\"torch.cuda.empty_cache\"`",
               "3:21-3:46 AD103 mock `th.cuda, 'current_device'`",
               "4:14-4:36 AD201 mock `th.cuda, \"empty_cache\"`"}));
  EXPECT_EQ(Py("mock.patch(\"th.cuda.empty_cache\")\nmock.patch(f\"torch.cuda.empty_cache\")\n"
               "mock.patch(\"torch.cuda.\" \"empty_cache\")\nx.object(torch.cuda, \"empty_cache\")\n"
               "mock.patch(\"torch.cuda.memory\")\n"),
            V());
}

TEST(ScanPython, NothingWithoutAnImport) {
  EXPECT_EQ(Py("torch.cuda.current_device()\n"), V());
}

TEST(ScanPython, ImportForms) {
  EXPECT_EQ(Py("import torch as th\nth.cuda.synchronize()\n"),
            V({"2:1-2:20 AD107 call `th.cuda.synchronize`"}));
  EXPECT_EQ(Py("import torch.cuda as tc\ntc.synchronize()\n"),
            V({"2:1-2:15 AD107 call `tc.synchronize`"}));
  EXPECT_EQ(Py("import torch.cuda\ntorch.cuda.synchronize()\n"),
            V({"2:1-2:23 AD107 call `torch.cuda.synchronize`"}));
  EXPECT_EQ(Py("from torch import cuda\ncuda.synchronize()\n"),
            V({"2:1-2:17 AD107 call `cuda.synchronize`"}));
  EXPECT_EQ(Py("from torch import cuda as c\nc.synchronize()\n"),
            V({"2:1-2:14 AD107 call `c.synchronize`"}));
  EXPECT_EQ(Py("from torch.cuda import current_device as cd\ncd()\n"),
            V({"1:24-1:38 AD103 import `current_device`", "2:1-2:3 AD103 call `cd`"}));
  EXPECT_EQ(Py("from torch.cuda.amp import autocast\nwith autocast(dtype=x):\n  pass\n"),
            V({"1:28-1:36 AD313 import `autocast`", "2:6-2:14 AD313 call `autocast`"}));
  EXPECT_EQ(Py("import torch.cuda.amp as amp\namp.autocast()\n"),
            V({"1:8-1:22 AD312 import `torch.cuda.amp`", "2:1-2:13 AD313 call `amp.autocast`"}));
  EXPECT_EQ(Py("from torch.cuda import (\n  synchronize,\n  empty_cache as ec,\n)\nec\n"),
            V({"2:3-2:14 AD107 import `synchronize`", "3:3-3:14 AD201 import `empty_cache`",
               "5:1-5:3 AD201 reference `ec`"}));
  EXPECT_EQ(Py("from torch import accelerator\naccelerator.current_device_idx()\n"),
            V({"2:1-2:31 AD501 call `accelerator.current_device_idx`"}));
}

TEST(ScanPython, AssignedAliases) {
  EXPECT_EQ(Py("import torch\ncuda = torch.cuda\ncuda.synchronize()\n"
               "sync = torch.cuda.synchronize\nsync()\namp = torch.cuda.amp; amp.autocast()\n"
               "cuda = cuda.amp\ncuda.autocast()\n"),
            V({"3:1-3:17 AD107 call `cuda.synchronize`",
               "4:8-4:30 AD107 reference `torch.cuda.synchronize`",
               "5:1-5:5 AD107 call `sync`",
               "6:7-6:21 AD312 reference `torch.cuda.amp`",
               "6:23-6:35 AD313 call `amp.autocast`",
               "7:8-7:16 AD312 reference `cuda.amp`",
               "8:1-8:14 AD313 call `cuda.autocast`"}));
  // Only a plain chain on its own: anything else rebinds.
  EXPECT_EQ(Py("import torch\ncuda = torch.cuda if ok else None\ncuda.synchronize()\n"), V());
}

TEST(ScanPython, RelativeAndOtherImportsBindNothing) {
  EXPECT_EQ(Py("from . import cuda\ncuda.synchronize()\n"), V());
  EXPECT_EQ(Py("from .torch import cuda\ncuda.synchronize()\n"), V());
  EXPECT_EQ(Py("import torch\nfrom mylib import torch\ntorch.cuda.synchronize()\n"), V());
  EXPECT_EQ(Py("import numpy as torch\ntorch.cuda.synchronize()\n"), V());
}

TEST(ScanPython, ImportInsideAFunctionLastsForItsBody) {
  EXPECT_EQ(Py("def f():\n    import torch\n    torch.cuda.synchronize()\n"
               "torch.cuda.synchronize()\n"),
            V({"3:5-3:27 AD107 call `torch.cuda.synchronize`"}));
}

TEST(ScanPython, LookAlikesAreNotFindings) {
  EXPECT_EQ(Py("import torch\nself.cuda.synchronize()\nx.cuda()\nx.torch.cuda.synchronize()\n"
               "cuda.synchronize()\n"),
            V());
  // A local `cuda` that did not come from torch.
  EXPECT_EQ(Py("from torch import cuda\ncuda = make()\ncuda.synchronize()\n"), V());
  EXPECT_EQ(Py("from torch import cuda\ndef cuda(): pass\ncuda.synchronize()\n"), V());
  EXPECT_EQ(Py("from torch import cuda\nwith open(p) as cuda:\n  cuda.synchronize()\n"), V());
  EXPECT_EQ(Py("from torch import cuda\nfor cuda in xs:\n  cuda.synchronize()\n"), V());
}

TEST(ScanPython, OptionalImportFallbackKeepsTheBinding) {
  EXPECT_EQ(Py("try:\n    import torch\nexcept ImportError:\n    torch = None\n"
               "torch.cuda.synchronize()\n"),
            V({"5:1-5:23 AD107 call `torch.cuda.synchronize`"}));
}

TEST(ScanPython, ParametersAndKeywordsShadow) {
  EXPECT_EQ(Py("from torch.cuda import synchronize as sync\n"
               "def f(sync, x=1):\n    sync()\nf(sync=3)\nsync()\n"
               "def g(a, *, sync=None):\n    sync()\n"),
            V({"1:24-1:35 AD107 import `synchronize`", "5:1-5:5 AD107 call `sync`"}));
}

TEST(ScanPython, ReferencesWithoutACall) {
  EXPECT_EQ(Py("import torch\nfn = torch.cuda.empty_cache\nisinstance(s, torch.cuda.Stream)\n"
               "def f(s: torch.cuda.Stream) -> None: ...\n@torch.cuda.amp.autocast()\ndef g(): ...\n"),
            V({"2:6-2:28 AD201 reference `torch.cuda.empty_cache`",
               "3:15-3:32 AD113 reference `torch.cuda.Stream`",
               "4:10-4:27 AD113 reference `torch.cuda.Stream`",
               "5:2-5:25 AD313 call `torch.cuda.amp.autocast`"}));
  // The longest spelling wins; the rest of the chain is an attribute of it.
  EXPECT_EQ(Py("import torch\ntorch.cuda.Stream.wait_event(s, e)\n"),
            V({"2:1-2:18 AD113 reference `torch.cuda.Stream`"}));
}

TEST(ScanPython, KeptRowsAreNeverFindings) {
  EXPECT_EQ(Py("import torch\ntorch.cuda.default_stream()\ntorch.cuda.memory.empty_cache()\n"),
            V());
  EXPECT_EQ(Py("from torch.cuda import memory\nmemory.empty_cache()\n"), V());
}

TEST(ScanPython, StringsCommentsDocstringsBytes) {
  EXPECT_EQ(Py("import torch\n"
               "'''torch.cuda.synchronize()'''\n"
               "\"torch.cuda.synchronize()\"  # torch.cuda.synchronize()\n"
               "r'torch.cuda.synchronize()' b'torch.cuda.synchronize()' Rb\"x\\\"\" bR'\\''\n"
               "u'torch.cuda.synchronize()' BR\"\"\"\ntorch.cuda.synchronize()\n\"\"\"\n"
               "def f():\n    \"\"\"torch.cuda.synchronize()\"\"\"\n"
               "    return torch.cuda.synchronize()\n"),
            V({"10:12-10:34 AD107 call `torch.cuda.synchronize`"}));
}

TEST(ScanPython, FStrings) {
  EXPECT_EQ(Py("import torch\n"
               "f'{torch.cuda.current_device()} torch.cuda.synchronize() {{torch.cuda.empty_cache()}}'\n"),
            V({"2:4-2:29 AD103 call `torch.cuda.current_device`"}));
  // Nested fields in a format spec, conversions, self-documenting '=', PEP
  // 701 quotes, \N{...}.
  EXPECT_EQ(Py("import torch\n"
               "f\"{x:{torch.cuda.current_device()}>{w}} {y!r:>10} {torch.cuda.synchronize=}\"\n"
               "f\"{d[\"k\"]} \\N{DASH} {torch.cuda.empty_cache()}\"\n"
               "rf'\\{torch.cuda.is_available()}'\n"),
            V({"2:7-2:32 AD103 call `torch.cuda.current_device`",
               "2:52-2:74 AD107 reference `torch.cuda.synchronize`",
               "3:22-3:44 AD201 call `torch.cuda.empty_cache`",
               "4:6-4:29 AD101 call `torch.cuda.is_available`"}));
  // A triple-quoted f-string across lines.
  EXPECT_EQ(Py("import torch\nf'''\n{\n torch.cuda.synchronize()\n}'''\n"),
            V({"4:2-4:24 AD107 call `torch.cuda.synchronize`"}));
}

TEST(ScanPython, MultiLineCallsAndContinuations) {
  const std::string src =
      "import torch\nx = torch.cuda.synchronize(\n    a,\n    (b),\n)\n"
      "y = torch \\\n  .cuda.empty_cache()\n"
      "z = (torch\n     .cuda\n     .current_device())\n";
  EXPECT_EQ(Py(src), V({"2:5-2:27 AD107 call `torch.cuda.synchronize`",
                        "6:5-7:20 AD201 call `torch \\\n  .cuda.empty_cache`",
                        "8:6-10:21 AD103 call `torch\n     .cuda\n     .current_device`"}));
  const FileResult r = ScanSource(Rules(), Language::kPython, src);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].call_end, static_cast<int64_t>(src.find(")\ny")) + 1);
  EXPECT_EQ(src.substr(r.findings[0].start, r.findings[0].end - r.findings[0].start),
            "torch.cuda.synchronize");
}

TEST(ScanPython, LineEndingsBomAndColumns) {
  EXPECT_EQ(Py("import torch\r\n\r\nx = torch.cuda.synchronize()\r\n"),
            V({"3:5-3:27 AD107 call `torch.cuda.synchronize`"}));
  EXPECT_EQ(Py("import torch\rx = torch.cuda.synchronize()\r"),
            V({"2:5-2:27 AD107 call `torch.cuda.synchronize`"}));
  EXPECT_EQ(Py("\xEF\xBB\xBFimport torch; torch.cuda.synchronize()\n"),
            V({"1:15-1:37 AD107 call `torch.cuda.synchronize`"}));
  // Columns count code points: "é" is two bytes, one column.
  EXPECT_EQ(Py("import torch\ns = 'é'; torch.cuda.synchronize()\n"),
            V({"2:10-2:32 AD107 call `torch.cuda.synchronize`"}));
}

TEST(ScanPython, SuppressionComments) {
  EXPECT_EQ(Py("import torch\n"
               "torch.cuda.synchronize()  # anydev: ignore\n"
               "torch.cuda.synchronize()  # anydev: ignore[AD107]\n"
               "torch.cuda.synchronize()  # noqa  # anydev: ignore[AD2, AD1]\n"
               "torch.cuda.synchronize()  # anydev: ignore[AD201]\n"
               "torch.cuda.synchronize()  # anydev: ignored\n"),
            V({"5:1-5:23 AD107 call `torch.cuda.synchronize`",
               "6:1-6:23 AD107 call `torch.cuda.synchronize`"}));
}

TEST(ScanPython, LexicalErrorsKeepTheFindingsBefore) {
  EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize()\ns = '''never closed\ntorch.cuda.empty_cache()\n"),
            V({"2:1-2:23 AD107 call `torch.cuda.synchronize`",
               "! 3 unterminated triple-quoted string literal; findings after it are not reported"}));
  EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize()\ns = 'oops\ntorch.cuda.empty_cache()\n"),
            V({"2:1-2:23 AD107 call `torch.cuda.synchronize`",
               "! 3 unterminated string literal; findings after it are not reported"}));
  EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize()\nf(]\n"),
            V({"2:1-2:23 AD107 call `torch.cuda.synchronize`",
               "! 3 closing parenthesis ']' does not match opening parenthesis '('; findings "
               "after it are not reported"}));
  EXPECT_EQ(Py("import torch\nf(\ntorch.cuda.synchronize()\n"),
            V({"! 2 '(' was never closed; findings after it are not reported"}));
  EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize() $\n"),
            V({"2:1-2:23 AD107 call `torch.cuda.synchronize`",
               "! 2 invalid character '$' in code; findings after it are not reported"}));
}

// Note [Text check without a '\r']: a NUL, a '\r' and a byte over 0x7F are
// told by one signed minimum of 256 (then 128, then 64) bytes at a time;
// each, at any place in a long file (so in every lane of every block), is
// seen, and the bytes beside them (0x7F, 0x0C, 0x0E) are not taken for
// them.
TEST(ScanPython, EveryBadByteIsSeenAnywhere) {
  std::string base = "import torch\n";
  while (base.size() < 700) base += "# " + std::string(61, 'x') + "\n";
  const int last = static_cast<int>(std::count(base.begin(), base.end(), '\n')) + 1;
  base += "torch.cuda.synchronize()\n";
  const std::string call = ":1-" + std::to_string(last) + ":23 AD107 call `torch.cuda.synchronize`";
  for (size_t k = 13; k < 700; k += 7) {
    if (base[k] != 'x') continue;
    const std::string line = std::to_string(std::count(base.begin(), base.begin() + k, '\n') + 1);
    for (const unsigned char b : {0x00, 0x0D, 0x80, 0x8D, 0xFF, 0x7F, 0x0C, 0x0E, 0x01}) {
      SCOPED_TRACE(std::to_string(k) + " " + std::to_string(b));
      std::string src = base;
      src[k] = static_cast<char>(b);
      const std::vector<std::string> got = Py(src);
      if (b == 0) {
        EXPECT_EQ(got, V({"! " + line + " binary file (a NUL byte); skipped"}));
      } else if (b == 0x0D) {  // a line break (not before a '\n'): the call a line further on
        const std::string after = std::to_string(base[k + 1] == '\n' ? last : last + 1);
        EXPECT_EQ(got, V({after + ":1-" + after + ":23 AD107 call `torch.cuda.synchronize`"}));
      } else if (b >= 0x80) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", b);
        EXPECT_EQ(got, V({"! " + line + " invalid UTF-8 (byte " + hex +
                          "); not scanned from there on"}));
      } else {
        EXPECT_EQ(got, V({std::to_string(last) + call}));
      }
    }
  }
}

TEST(ScanPython, NotTextIsReported) {
  EXPECT_EQ(Py(std::string("import torch\ntorch.cuda.synchronize()\n\0\0", 39)),
            V({"! 3 binary file (a NUL byte); skipped"}));
  EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize()\n# \xff\ntorch.cuda.empty_cache()\n"),
            V({"2:1-2:23 AD107 call `torch.cuda.synchronize`",
               "! 3 invalid UTF-8 (byte 0xFF); not scanned from there on"}));
  EXPECT_EQ(Py("\xff\xfei\0m\0"), V({"! 0 UTF-16 encoded (byte-order mark); only UTF-8 sources "
                                     "are scanned"}));
  // A coding declaration makes other bytes fine.
  EXPECT_EQ(Py("# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9'; torch.cuda.synchronize()\n"),
            V({"3:10-3:32 AD107 call `torch.cuda.synchronize`"}));
}

// A coding declaration counts in the first two lines, in a comment that is
// the line's first byte but spaces (a line of code before it ends the
// search); a latin-1 one makes the byte 0xE9 on line 4 fine (and its
// columns bytes), where without one it is invalid UTF-8.
TEST(ScanPython, CodingDeclarations) {
  const std::string rest = "import torch\ns = '\xe9'; torch.cuda.synchronize()\n";
  const std::string latin = "4:10-4:32 AD107 call `torch.cuda.synchronize`";
  const std::string invalid = "! 4 invalid UTF-8 (byte 0xE9); not scanned from there on";
  const std::vector<std::pair<std::string, bool>> heads = {
      {"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n", true},
      {"\n# coding=latin-1\n", true},
      {" \t\f# vim: set fileencoding=latin-1 :\n\n", true},
      {"#!python\r# coding: latin-1\r", true},
      {"#!python\r\n# coding: latin-1\r\n", true},
      {"# coding: utf-8\n# coding: latin-1\n", false},
      {"# coding: UTF_8-sig\n\n", false},
      {"x = 1\n# coding: latin-1\n", false},
      {"  x = 1 # coding: latin-1\n\n", false},
      {"# a comment\n# another\n", false},
      {"#\n#\n", false},
      {"   \n\t\n", false},
      {"# coding latin-1\n\n", false},
      {"# coding:\n\n", true},  // (an empty name is no UTF-8)
  };
  for (const auto& [head, bytes] : heads) {
    EXPECT_EQ(Py(head + rest), V({bytes ? latin : invalid})) << head;
  }
  // On the third line, or after a BOM and code: no declaration.
  EXPECT_EQ(Py("#\n#\n# coding: latin-1\nimport torch\ns = '\xe9'\n"),
            V({"! 5 invalid UTF-8 (byte 0xE9); not scanned from there on"}));
  EXPECT_EQ(Py("\xEF\xBB\xBF# coding: latin-1\n\n" + rest), V({latin}));
  EXPECT_EQ(Py("# coding: latin-1"), V());
  EXPECT_EQ(Py("  "), V());
}

// The text checks (NUL, UTF-8, '\r') go 64, 32 and 8 bytes at a time over
// ASCII: the byte that matters at each offset around those blocks, at the
// start of the file, after a non-ASCII byte and at the end.
TEST(ScanPython, TextChecksAtBlockBoundaries) {
  for (const size_t pos : {0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 95, 127, 128, 129, 200}) {
    SCOPED_TRACE(pos);
    const std::string head(pos, '#');
    const std::string tail = "\nimport torch\ntorch.cuda.synchronize()\n";
    const std::string found = "3:1-3:23 AD107 call `torch.cuda.synchronize`";
    EXPECT_EQ(Py(head + "\xC3\xA9" + tail), V({found}));
    EXPECT_EQ(Py(head + "\r#" + tail), V({"4:1-4:23 AD107 call `torch.cuda.synchronize`"}));
    EXPECT_EQ(Py(head + "\r\n#" + tail), V({"4:1-4:23 AD107 call `torch.cuda.synchronize`"}));
    EXPECT_EQ(Py(head + "\x9B" + tail),
              V({"! 1 invalid UTF-8 (byte 0x9B); not scanned from there on"}));
    EXPECT_EQ(Py(head + "\xC3\xA9\xE2\x82" + tail),  // a cut sequence after a valid one
              V({"! 1 invalid UTF-8 (byte 0xE2); not scanned from there on"}));
    EXPECT_EQ(Py(head + std::string("\0", 1) + tail), V({"! 1 binary file (a NUL byte); skipped"}));
    EXPECT_EQ(Py(head + std::string("\xC3\xA9\0", 3) + tail),
              V({"! 1 binary file (a NUL byte); skipped"}));
    // The byte last in the file.
    EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize()\n" + head + "\r"),
              V({"2:1-2:23 AD107 call `torch.cuda.synchronize`"}));
    EXPECT_EQ(Py("import torch\ntorch.cuda.synchronize()\n" + head + "\xF0"),
              V({"2:1-2:23 AD107 call `torch.cuda.synchronize`",
                 "! 3 invalid UTF-8 (byte 0xF0); not scanned from there on"}));
    if (pos >= 2) {
      const std::string cpp_tail = "\nint n = c10::cuda::device_count();\n";
      EXPECT_EQ(Cpp(std::string(pos, '/') + "\x9B" + cpp_tail),
                V({"2:9-2:32 AD601 call `c10::cuda::device_count`",
                   "! 1 invalid UTF-8 (byte 0x9B); scanned as bytes"}));
      EXPECT_EQ(Cpp(std::string(pos, '/') + "\r//" + cpp_tail),
                V({"3:9-3:32 AD601 call `c10::cuda::device_count`"}));
    }
  }
}

// The ASCII check goes 256 and 128 bytes a step while there is no '\r' (a
// NUL and a '\r' are one minimum: Note [Text check without a '\r'] in
// scan_source.cc), then 64: a NUL, a lone CR, a CRLF and an invalid byte at
// every offset of the first three steps, after lines of every length, and
// each of them after a '\r' earlier in the file (the check then goes on 64
// bytes a step), with the line each error and finding is on.
TEST(ScanSource, TextChecksAcrossTheWideSteps) {
  for (size_t pos = 0; pos < 400; ++pos) {
    SCOPED_TRACE(pos);
    std::string head;
    for (int k = 0; head.size() < pos; ++k) head += "# " + std::string(k % 9, 'x') + "\n";
    head.resize(pos);
    const int line = 1 + static_cast<int>(std::count(head.begin(), head.end(), '\n'));
    const auto at = [](int n) { return std::to_string(n) + ":1-" + std::to_string(n) + ":23"; };
    // (A long comment last, so that the wide steps reach the byte at pos.)
    const std::string tail =
        "\nimport torch\ntorch.cuda.synchronize()\n#" + std::string(600, 'x') + "\n";
    const std::string call = " AD107 call `torch.cuda.synchronize`";
    const std::string cpp_tail = "\nint n = c10::cuda::device_count();\n//" + std::string(600, 'x');
    for (const std::string& before : {std::string(), std::string("#\r")}) {
      const int shift = before.empty() ? 0 : 1;
      const std::string ls = std::to_string(line + shift);
      EXPECT_EQ(Py(before + head + std::string("\0", 1) + tail),
                V({"! " + ls + " binary file (a NUL byte); skipped"}));
      EXPECT_EQ(Py(before + head + "\r#" + tail), V({at(line + shift + 3) + call}));
      EXPECT_EQ(Py(before + head + "\r\n#" + tail), V({at(line + shift + 3) + call}));
      EXPECT_EQ(Py(before + head + "\x9B" + tail),
                V({"! " + ls + " invalid UTF-8 (byte 0x9B); not scanned from there on"}));
      EXPECT_EQ(Py(before + head + "#\xC3\xA9" + tail), V({at(line + shift + 2) + call}));
      EXPECT_EQ(Cpp(before + head + std::string("\0", 1) + cpp_tail),
                V({"! " + ls + " binary file (a NUL byte); skipped"}));
      EXPECT_EQ(Cpp(before + head + "\r" + cpp_tail),
                V({std::to_string(line + shift + 1) + ":9-" + std::to_string(line + shift + 1) +
                   ":32 AD601 call `c10::cuda::device_count`"}));
    }
    if (HasFailure()) return;
  }
}

// --- C++ ----------------------------------------------------------------------

TEST(ScanCpp, QualifiedNames) {
  EXPECT_EQ(Cpp("int n = c10::cuda::device_count();\nauto s = ::at::cuda::getCurrentCUDAStream();\n"
                "c10 :: cuda ::current_device();\nreturn ::c10::cuda::device_count();\n"),
            V({"1:9-1:32 AD601 call `c10::cuda::device_count`",
               "2:12-2:42 AD625 call `at::cuda::getCurrentCUDAStream`",
               "3:1-3:29 AD603 call `c10 :: cuda ::current_device`",
               "4:10-4:33 AD601 call `c10::cuda::device_count`"}));
  EXPECT_EQ(Cpp("c10::cuda::CUDAStream s = x;\nstd::optional<at::cuda::CUDAStream> o;\n"
                "c10::cuda::CUDACachingAllocator::emptyCache();\n"),
            V({"1:1-1:22 AD619 reference `c10::cuda::CUDAStream`",
               "2:15-2:35 AD619 reference `at::cuda::CUDAStream`",
               "3:1-3:44 AD701 call `c10::cuda::CUDACachingAllocator::emptyCache`"}));
}

TEST(ScanCpp, KeptAndLookAlikes) {
  EXPECT_EQ(Cpp("auto r = c10::cuda::CUDAStream::priority_range();\n"
                "x.current_device(); p->device_count(); current_device();\n"
                "mylib::cuda::current_device(); std::vector<int>::device_count();\n"),
            V());
}

TEST(ScanCpp, CommentsStringsRawStringsChars) {
  EXPECT_EQ(Cpp("// c10::cuda::device_count()\n/* c10::cuda::device_count()\n*/\n"
                "const char* s = \"c10::cuda::device_count()\";\n"
                "auto r = R\"x(c10::cuda::device_count() )\" )x\";\n"
                "auto w = u8R\"(c10::cuda::device_count())\"; char c = '\"'; long n = 1'000;\n"
                "auto k = L'x'; // a comment \\\n c10::cuda::device_count()\n"
                "int m = c10::cuda::device_count();\n"),
            V({"9:9-9:32 AD601 call `c10::cuda::device_count`"}));
}

TEST(ScanCpp, PreprocessorGroups) {
  EXPECT_EQ(Cpp("#if 0\nc10::cuda::device_count();\n#if 1\n#endif\ndon't\n#else\n"
                "int a = c10::cuda::current_device();\n#endif\n"
                "#if 1\nint b;\n#else\nc10::cuda::device_count();\n#endif\n"
                "#if false // off\nc10::cuda::device_count();\n#elif defined(X)\n"
                "int c = c10::cuda::device_count();\n#endif\n"
                "#error don't\n#include <c10/cuda/CUDAFunctions.h>\n"
                "#define CUR() ::c10::cuda::current_device()\n"
                "#define MULTI \\\n  c10::cuda::device_count()\n"),
            V({"7:9-7:34 AD603 call `c10::cuda::current_device`",
               "17:9-17:32 AD601 call `c10::cuda::device_count`",
               "21:17-21:42 AD603 call `c10::cuda::current_device`",
               "23:3-23:26 AD601 call `c10::cuda::device_count`"}));
}

// Note [Comments in a directive's name] in cpp_scan.cc: a comment between
// '#' and the directive's name is a space, and so is a continuation; in a
// group that is not compiled too (the nested `#if`, its `#endif`, the
// `#else`), and before the '#' of a line there.
// A directive's line, and each line of a group not compiled, is passed a
// run at a time up to its next '\n', '\r', backslash or '/' (Note
// [Directive lines a run at a time] in cpp_scan.cc): those at every offset
// of the first 16-byte steps, in conditions, includes and skipped lines.
TEST(ScanCpp, DirectiveLinesAtEveryOffset) {
  const std::string call = "int b = c10::cuda::device_count();\n";
  const auto at = [](int line) {
    return std::to_string(line) + ":9-" + std::to_string(line) +
           ":32 AD601 call `c10::cuda::device_count`";
  };
  for (size_t k = 0; k < 40; ++k) {
    SCOPED_TRACE(k);
    const std::string sp(k, ' '), x(k, 'x');
    const std::string hidden = "int a = c10::cuda::device_count();\n#endif\n" + call;
    EXPECT_EQ(Cpp("#if" + sp + " 0" + std::string(k % 3, ' ') + "\n" + hidden), V({at(4)}));
    EXPECT_EQ(Cpp("#if" + sp + " /* c */ 0\n" + hidden), V({at(4)}));
    EXPECT_EQ(Cpp("#if 0 // " + x + "\n" + hidden), V({at(4)}));
    EXPECT_EQ(Cpp("#if \\\n" + sp + "0\n" + hidden), V({at(5)}));
    EXPECT_EQ(Cpp("#if" + sp + " \\ 0\n" + hidden),
              V({"2:9-2:32 AD601 call `c10::cuda::device_count`", at(4)}));
    EXPECT_EQ(Cpp("#if 1" + sp + "/ 2\n" + hidden),
              V({"2:9-2:32 AD601 call `c10::cuda::device_count`", at(4)}));
    EXPECT_EQ(Cpp("#if 0\r" + x + "/ y\r#endif\r" + call), V({at(4)}));
    EXPECT_EQ(Cpp("#include <" + x + "a/b.h> // c10::cuda::device_count()\n" + call), V({at(2)}));
    // (A comment over two lines does not end the directive's line.)
    EXPECT_EQ(Cpp("#include \"" + x + "\" /* c10::cuda::device_count()\n */ " + call), V());
    // In a group not compiled: a '/' that opens no comment, a comment that
    // hides an #endif, a continuation that does.
    EXPECT_EQ(Cpp("#if 0\n" + x + " / y; /* c10\n#endif\n */ z;\n#endif\n" + call), V({at(6)}));
    EXPECT_EQ(Cpp("#if 0\n" + x + " \\\n#endif\n#endif\n" + call), V({at(5)}));
    EXPECT_EQ(Cpp("#if 0\n" + x + "/\n#endif\n" + call), V({at(4)}));
    if (HasFailure()) return;
  }
}

// A file with no byte over 0x7F counts its columns in bytes (Note [Columns
// of an ASCII file] in scan_source.cc); one with such a byte anywhere, even
// after the finding or on another line, counts code points, which are the
// same bytes where the line is ASCII.
TEST(ScanCpp, ColumnsOfAsciiAndOtherFiles) {
  const std::string at = "1:9-1:32 AD601 call `c10::cuda::device_count`";
  EXPECT_EQ(Cpp("int n = c10::cuda::device_count();\n"), V({at}));
  EXPECT_EQ(Cpp("\xEF\xBB\xBFint n = c10::cuda::device_count();\n"), V({at}));
  EXPECT_EQ(Cpp("int n = c10::cuda::device_count(); // \xC3\xA9\n"), V({at}));
  EXPECT_EQ(Cpp("// \xC3\xA9\nint n = c10::cuda::device_count();\n"),
            V({"2:9-2:32 AD601 call `c10::cuda::device_count`"}));
  EXPECT_EQ(Cpp("int \xC3\xA9 = 1; int n = c10::cuda::device_count();\n"),
            V({"1:20-1:43 AD601 call `c10::cuda::device_count`"}));
  EXPECT_EQ(Cpp("int \xE2\x82\xAC = 1; int n = c10::cuda::device_count();\n"),
            V({"1:20-1:43 AD601 call `c10::cuda::device_count`"}));
}

TEST(ScanCpp, CommentsBetweenTheHashAndTheDirective) {
  EXPECT_EQ(Cpp("#/**/if 0\nc10::cuda::device_count();\n#endif\n"
                "# /* x */ if 0\nc10::cuda::device_count();\n#/**/else\n"
                "int a = c10::cuda::current_device();\n#/* y */endif\n"
                "#\\\nif 0\nc10::cuda::device_count();\n#endif\n"
                "int b = c10::cuda::current_device();\n"),
            V({"7:9-7:34 AD603 call `c10::cuda::current_device`",
               "13:9-13:34 AD603 call `c10::cuda::current_device`"}));
  // Inside a skipped group: a nested `#/**/if` needs its own `#/**/endif`,
  // and `/* c */ #endif` ends the group.
  EXPECT_EQ(Cpp("#if 0\n#/**/ifdef X\n#/**/endif\nc10::cuda::device_count();\n"
                "/* c\n */ #endif\nint a = c10::cuda::current_device();\n"
                "#if 0\n#/**/else\nint b = c10::cuda::current_device();\n#endif\n"),
            V({"7:9-7:34 AD603 call `c10::cuda::current_device`",
               "10:9-10:34 AD603 call `c10::cuda::current_device`"}));
  // An unterminated comment there is the lexer's error, as anywhere.
  const std::vector<std::string> v = Cpp("int a = c10::cuda::current_device();\n#/* open\nif 0\n");
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v.back().find("unterminated comment"), std::string::npos) << ::testing::PrintToString(v);
}

TEST(ScanCpp, AliasesAndUsing) {
  EXPECT_EQ(Cpp("namespace cu = c10::cuda;\nvoid f() { cu::current_device(); }\n"
                "namespace cca = cu::CUDACachingAllocator;\nvoid g() { cca::emptyCache(); }\n"),
            V({"2:12-2:30 AD603 call `cu::current_device`",
               "4:12-4:27 AD701 call `cca::emptyCache`"}));
  // A using-directive lasts to the end of its block.
  EXPECT_EQ(Cpp("void f() {\n  current_device();\n  {\n    using namespace c10::cuda;\n"
                "    current_device();\n    x.current_device();\n  }\n  current_device();\n}\n"),
            V({"5:5-5:19 AD603 call `current_device`"}));
  EXPECT_EQ(Cpp("using namespace at;\nvoid f() { cuda::device_count(); }\n"),
            V({"2:12-2:30 AD601 call `cuda::device_count`"}));
  EXPECT_EQ(Cpp("using c10::cuda::getCurrentCUDAStream;\nauto s = getCurrentCUDAStream();\n"),
            V({"1:7-1:38 AD625 import `c10::cuda::getCurrentCUDAStream`",
               "2:10-2:30 AD625 call `getCurrentCUDAStream`"}));
  EXPECT_EQ(Cpp("using Stream = at::cuda::CUDAStream;\nStream s;\n"),
            V({"1:16-1:36 AD619 reference `at::cuda::CUDAStream`"}));
  // Relative to the enclosing namespace.
  EXPECT_EQ(Cpp("namespace at { namespace native {\nvoid k() { cuda::getCurrentCUDAStream(); }\n}}\n"
                "namespace mine {\nvoid k() { cuda::getCurrentCUDAStream(); }\n}\n"),
            V({"2:12-2:38 AD625 call `cuda::getCurrentCUDAStream`"}));
}

TEST(ScanCpp, NamesTheFileDefinesInItsOwnShimNamespaceAreNotFindings) {
  // Note [Shim namespaces]: a definition (a body, a class, an alias) makes the
  // file's references to that spelling its own; a declaration does not.
  EXPECT_EQ(Cpp("int a = c10::cuda::current_device();\n"
                "namespace c10 { namespace cuda {\nint current_device() { return 0; }\n}}\n"
                "int b = c10::cuda::current_device() + at::cuda::current_device();\n"),
            V({"5:39-5:63 AD603 call `at::cuda::current_device`"}));
  EXPECT_EQ(Cpp("namespace at::cuda { using CUDAStream = c10::Stream; int device_count(); }\n"
                "at::cuda::CUDAStream s = x; int n = at::cuda::device_count();\n"),
            V({"2:37-2:59 AD601 call `at::cuda::device_count`"}));
  EXPECT_EQ(Cpp("namespace mine { int current_device() { return 0; } }\n"
                "int n = c10::cuda::current_device();\n"),
            V({"2:9-2:34 AD603 call `c10::cuda::current_device`"}));
}

TEST(ScanCpp, BracesAcrossPreprocessorBranches) {
  // One block opens, not two, so the directive ends with it.
  EXPECT_EQ(Cpp("#ifdef A\nvoid f(int) {\n#else\nvoid f() {\n#endif\n"
                "  using namespace c10::cuda;\n  device_count();\n}\ndevice_count();\n"
                "#define OPEN {\nOPEN\n"),
            V({"7:3-7:15 AD601 call `device_count`"}));
}

TEST(ScanCpp, ErrorsAndSuppressions) {
  EXPECT_EQ(Cpp("int a = c10::cuda::device_count(); // anydev: ignore[AD601]\n"
                "int b = c10::cuda::device_count(); /* anydev: ignore */\n"
                "int c = c10::cuda::device_count();\n/* never closed\n"),
            V({"3:9-3:32 AD601 call `c10::cuda::device_count`",
               "! 4 unterminated comment; findings after it are not reported"}));
  EXPECT_EQ(Cpp("auto s = \"abc\nint c = c10::cuda::device_count();\n"),
            V({"! 1 unterminated string literal; findings after it are not reported"}));
  // Latin-1 in a comment: reported, and the file is still scanned.
  EXPECT_EQ(Cpp("// (c) \xa9 2010\nint c = c10::cuda::device_count();\n"),
            V({"2:9-2:32 AD601 call `c10::cuda::device_count`",
               "! 1 invalid UTF-8 (byte 0xA9); scanned as bytes"}));
}

// --- walks ------------------------------------------------------------------------

void WriteFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// Note [Paths made when needed]: a file's path is made only once it is a
// source, its absolute path only where an ignore pattern could match it, and
// the path is moved on into its result: the results' paths, in walk order,
// whatever the patterns (none, a .gitignore, an exclude) and the threads.
TEST(ScanWalk, PathsWithAndWithoutIgnorePatterns) {
  char dir_template[] = "/tmp/anydev_scan_walk_XXXXXX";
  const char* made = mkdtemp(dir_template);
  ASSERT_NE(made, nullptr);
  const std::string root = made;
  const std::string src = "import torch\ntorch.cuda.synchronize()\n";
  ASSERT_EQ(mkdir((root + "/.git").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root + "/sub").c_str(), 0700), 0);
  WriteFile(root + "/.gitignore", "skip.py\n");
  WriteFile(root + "/a.py", src);
  WriteFile(root + "/clean.py", "x = 1\n");
  WriteFile(root + "/notes.txt", src);
  WriteFile(root + "/sub/b.py", src);
  WriteFile(root + "/sub/a_name_longer_than_fifteen_bytes.py", src);
  WriteFile(root + "/sub/skip.py", src);
  auto walk = [&](bool gitignore, std::vector<ScanOptions::Exclude> excludes, int jobs) {
    ScanOptions o;
    o.paths = {root};
    o.respect_gitignore = gitignore;
    o.excludes = std::move(excludes);
    o.jobs = jobs;
    const ScanSummary s = ScanPaths(Rules(), o);
    std::vector<std::string> out;
    for (const FileResult& r : s.files) {
      out.push_back(r.path.substr(root.size()) + " " + std::to_string(r.findings.size()));
    }
    std::vector<FileResult> errors;
    std::vector<std::string> listed = ListFiles(o, &errors);
    for (std::string& p : listed) p = p.substr(root.size());
    out.push_back(std::to_string(s.files_scanned) + " scanned");
    out.insert(out.end(), listed.begin(), listed.end());
    return out;
  };
  for (int jobs : {1, 3}) {
    SCOPED_TRACE(jobs);
    EXPECT_EQ(walk(true, {}, jobs),
              (std::vector<std::string>{"/a.py 1", "/sub/a_name_longer_than_fifteen_bytes.py 1",
                                        "/sub/b.py 1", "4 scanned", "/a.py", "/clean.py",
                                        "/sub/a_name_longer_than_fifteen_bytes.py",
                                        "/sub/b.py"}));
    EXPECT_EQ(walk(false, {}, jobs),
              (std::vector<std::string>{"/a.py 1", "/sub/a_name_longer_than_fifteen_bytes.py 1",
                                        "/sub/b.py 1", "/sub/skip.py 1", "5 scanned", "/a.py",
                                        "/clean.py", "/sub/a_name_longer_than_fifteen_bytes.py",
                                        "/sub/b.py", "/sub/skip.py"}));
    EXPECT_EQ(walk(false, {{"b.py", root}}, jobs),
              (std::vector<std::string>{"/a.py 1", "/sub/a_name_longer_than_fifteen_bytes.py 1",
                                        "/sub/skip.py 1", "4 scanned", "/a.py", "/clean.py",
                                        "/sub/a_name_longer_than_fifteen_bytes.py",
                                        "/sub/skip.py"}));
  }
  for (const char* f : {"/sub/skip.py", "/sub/b.py", "/sub/a_name_longer_than_fifteen_bytes.py",
                        "/notes.txt", "/clean.py", "/a.py", "/.gitignore"}) {
    std::remove((root + f).c_str());
  }
  for (const char* d : {"/sub", "/.git", ""}) std::remove((root + d).c_str());
}

// --- globs and .gitignore ---------------------------------------------------------

TEST(ScanIgnore, Globs) {
  EXPECT_TRUE(GlobMatch("*.py", "a.py"));
  EXPECT_FALSE(GlobMatch("*.py", "d/a.py"));
  EXPECT_TRUE(GlobMatch("**/a.py", "a.py"));
  EXPECT_TRUE(GlobMatch("**/a.py", "x/y/a.py"));
  EXPECT_TRUE(GlobMatch("a/**", "a/b/c"));
  EXPECT_FALSE(GlobMatch("a/**", "a"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/b"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/x/y/b"));
  EXPECT_TRUE(GlobMatch("f?o[0-9][!a]", "foo1b"));
  EXPECT_FALSE(GlobMatch("f?o[0-9][!a]", "foo1a"));
  EXPECT_TRUE(GlobMatch("\\*x", "*x"));
  // `*` then bytes only (a shortcut of the automaton): the bytes end the
  // path, and nothing before them is a '/'.
  EXPECT_TRUE(GlobMatch("*.so", ".so"));
  EXPECT_TRUE(GlobMatch("*.so", "lib.so.so"));
  EXPECT_FALSE(GlobMatch("*.so", "so"));
  EXPECT_FALSE(GlobMatch("*.so", "lib.so.1"));
  EXPECT_TRUE(GlobMatch("*/x", "a/x"));
  EXPECT_FALSE(GlobMatch("*/x", "a/b/x"));
  EXPECT_TRUE(GlobMatch("*", "abc"));
  EXPECT_FALSE(GlobMatch("*", "a/b"));
}

// Note [Extension from the last four bytes] (rules.cc): LanguageOfPath
// looks for the '.' in the last four bytes only; random paths (folders
// with dots, names with several dots, upper-case extensions, a '/' after
// the last '.', extensions of 0 to 5 bytes, names that are only an
// extension) against the whole-path search it replaced. Fails with the '.'
// looked for in the last three bytes or the extension's '/' let through.
bool LanguageByWholePath(std::string_view path, Language* language) {
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
  for (const char* e : {"h", "hpp", "hh", "c", "cc", "cpp", "cxx", "cu", "cuh", "hip"}) {
    if (ext == e) {
      *language = Language::kCpp;
      return true;
    }
  }
  return false;
}

TEST(ScanWalk, LanguageOfPathFromTheLastFourBytes) {
  const std::vector<std::string> parts = {"a",  ".", "/",  "py", "PY", "pyi", "h",  "Cu", "cuh",
                                          "hip", "c", "cc", "x",  "pyx", "hpp", "cpp", "CXX", ""};
  std::mt19937 gen(4);
  int sources = 0;
  for (int k = 0; k < 200000; ++k) {
    std::string path;
    for (int n = static_cast<int>(gen() % 7); n >= 0; --n) path += parts[gen() % parts.size()];
    Language want = Language::kPython, got = Language::kPython;
    const bool is = LanguageByWholePath(path, &want);
    ASSERT_EQ(LanguageOfPath(path, &got), is) << path;
    if (is) {
      ASSERT_EQ(got, want) << path;
      ++sources;
    }
  }
  EXPECT_GT(sources, 5000);
}

TEST(ScanIgnore, GitignoreRules) {
  IgnoreList l;
  for (const char* line : {"# comment", "*.gen.py", "!keep.gen.py", "build/", "/top.py",
                           "docs/**/*.cc", "\\#hash", "trailing   "}) {
    l.AddLine(line, "/r");
  }
  EXPECT_EQ(l.Match("/r/a/x.gen.py", false), 1);
  EXPECT_EQ(l.Match("/r/a/keep.gen.py", false), -1);
  EXPECT_EQ(l.Match("/r/a/build", true), 1);
  EXPECT_EQ(l.Match("/r/a/build", false), 0);  // dir-only
  EXPECT_EQ(l.Match("/r/top.py", false), 1);
  EXPECT_EQ(l.Match("/r/a/top.py", false), 0);  // anchored
  EXPECT_EQ(l.Match("/r/docs/x/y/z.cc", false), 1);
  EXPECT_EQ(l.Match("/r/#hash", false), 1);
  EXPECT_EQ(l.Match("/r/trailing", false), 1);
  EXPECT_EQ(l.Match("/other/top.py", false), 0);
}

// Note [Ignore patterns by their last byte] (walk.cc): Match asks only the
// patterns a bitset of the name's last byte lets through; random lists (up
// to 200 lines, so rows of one to four words, with bases of every kind as
// nested .gitignore files give them) against MatchEveryPattern, for folders
// and files. Fails with the filter keyed on another byte, a dir-only
// pattern asked for files, or the words' order or layout wrong.
TEST(ScanIgnore, IgnoreFilterAgainstEveryPattern) {
  const std::vector<std::string> parts = {"a", "b", "ab", "x.py", "y.so", "__pycache__", "build",
                                          "a.b", "py", "o", "so", "b.", "", "a b"};
  const std::vector<std::string> globs = {"*", "*.py", "*.so", "x*", "*o", "?", "[ab]", "[!a]*",
                                          "**", "a*b", "\\!", "*.", "a?", "*y", "b[.]*",
                                          "*.py[cod]", "x[yo]", "[ab]?[!s]", "*[a-c]", "**/a*b"};
  const std::vector<std::string> bases = {"", ".", "/", "/r", "/r/a", "r", "r/b"};
  std::mt19937 gen(31);
  const auto pick = [&gen](const std::vector<std::string>& v) { return v[gen() % v.size()]; };
  const auto component = [&]() { return gen() % 3 == 0 ? pick(globs) : pick(parts); };
  int matched = 0;
  for (int list = 0; list < 300; ++list) {
    IgnoreList l;
    const int lines = 1 + static_cast<int>(gen() % 200);
    std::string base = pick(bases);
    for (int k = 0; k < lines; ++k) {
      if (gen() % 40 == 0) base = pick(bases);  // the next .gitignore's lines
      std::string line = gen() % 6 == 0 ? "!" : "";
      if (gen() % 5 == 0) line += "/";
      line += component();
      for (int more = static_cast<int>(gen() % 3); gen() % 3 == 0 && more > 0; --more) {
        line += "/" + component();
      }
      if (gen() % 5 == 0) line += "/";
      l.AddLine(line, base);
    }
    for (int q = 0; q < 60; ++q) {
      std::string path = gen() % 4 == 0 ? pick(bases) : std::string("/r");
      for (int depth = 1 + static_cast<int>(gen() % 4); depth > 0; --depth) {
        path += (path.empty() || path.back() == '/' ? "" : "/") + pick(parts);
      }
      for (bool is_dir : {false, true}) {
        const int want = l.MatchEveryPattern(path, is_dir);
        matched += want != 0;
        ASSERT_EQ(l.Match(path, is_dir), want) << "list " << list << " path " << path;
      }
    }
  }
  EXPECT_GT(matched, 5000);
}

TEST(ScanIgnore, DoubleStarIsSpecialOnlyAsASegment) {
  // As git's wildmatch: `**` inside a segment is `*` and does not cross '/'.
  EXPECT_TRUE(GlobMatch("a**b", "axxb"));
  EXPECT_FALSE(GlobMatch("a**b", "a/x/b"));
  EXPECT_TRUE(GlobMatch("**", "a/b/c"));
  EXPECT_TRUE(GlobMatch("a/**/**/b", "a/b"));
  EXPECT_TRUE(GlobMatch("a/**/**/b", "a/x/y/b"));
  EXPECT_FALSE(GlobMatch("a/**b", "a/x/b"));
  EXPECT_TRUE(GlobMatch("[a-c]/*.py", "b/x.py"));
  EXPECT_FALSE(GlobMatch("[!/]x", "/x"));  // a class never matches '/'
  EXPECT_FALSE(GlobMatch("abc\\", "abc\\"));  // a trailing '\\' matches nothing
  // An unclosed '[' makes git's wildmatch give up: the pattern matches nothing
  // (it was once a literal '[', so `*[.py` in a .gitignore hid a[.py from scans).
  EXPECT_FALSE(GlobMatch("*[.py", "a[.py"));
  EXPECT_FALSE(GlobMatch("a[.py", "a[.py"));
  EXPECT_FALSE(GlobMatch("*[", "x["));
  EXPECT_FALSE(GlobMatch("[!", "[!"));
  EXPECT_TRUE(GlobMatch("\\[.py", "[.py"));  // an escaped '[' is a byte
  EXPECT_TRUE(GlobMatch("[[]x", "[x"));
  EXPECT_TRUE(GlobMatch("[\xe9]", "\xe9"));  // bytes from 0x80 are bytes, not negative chars
}

// git's wildmatch with WM_PATHNAME (wildmatch.c, dowild), as a backtracking
// matcher: the reference for GlobMatch on short random globs and paths.
bool Wildmatch(const char* pattern, const char* p, const char* pe, const char* t, const char* te) {
  for (; p < pe; ++p, ++t) {
    if (t == te && *p != '*') return false;
    switch (*p) {
      case '\\':
        if (++p == pe || *t != *p) return false;
        break;
      case '?':
        if (*t == '/') return false;
        break;
      case '[': {
        const char* q = p + 1;
        bool negate = false;
        if (q < pe && (*q == '!' || *q == '^')) {
          negate = true;
          ++q;
        }
        bool hit = false, first = true;
        for (; q < pe && (*q != ']' || first); ++q) {
          first = false;
          char lo = *q;
          if (lo == '\\' && q + 1 < pe) lo = *++q;
          char hi = lo;
          if (q + 2 < pe && q[1] == '-' && q[2] != ']') {
            hi = q[2];
            if (hi == '\\' && q + 3 < pe) hi = *++q;
            q += 2;
          }
          if (*t >= lo && *t <= hi) hit = true;
        }
        if (q >= pe) return false;  // unclosed: no match
        if (hit == negate || *t == '/') return false;
        p = q;
        break;
      }
      case '*': {
        const char* q = p;
        while (q < pe && *q == '*') ++q;
        bool slash = false;
        if (q - p >= 2 && (p == pattern || p[-1] == '/') && (q == pe || *q == '/')) {
          if (q < pe && Wildmatch(pattern, q + 1, pe, t, te)) return true;  // no folder
          slash = true;
        }
        if (q == pe) return slash || std::find(t, te, '/') == te;
        for (;; ++t) {
          if (t < te && Wildmatch(pattern, q, pe, t, te)) return true;
          if (t == te || (!slash && *t == '/')) return false;
        }
      }
      default:
        if (*t != *p) return false;
    }
  }
  return t == te;
}

// Note [Glob heads and tails] in walk.cc: a general glob's automaton is run
// only where the path's first and last bytes match the glob's steps of one
// byte at either end, and the path holds the glob's longest run of bytes;
// GlobMatch must still say what wildmatch says, on every short glob.
TEST(ScanIgnore, GlobsAgainstWildmatch) {
  const char* glob_parts[] = {"a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "[a-c]",
                              "\\*", "ab", "**/", "/**", "[/]"};
  const char* path_parts[] = {"a", "b", ".", "/", "*", "c", "ab", "ba"};
  std::mt19937 rng(2024);
  int matched = 0;
  for (int round = 0; round < 60000; ++round) {
    std::string glob, path;
    for (int k = 1 + static_cast<int>(rng() % 6); k-- > 0;) glob += glob_parts[rng() % 15];
    for (int k = static_cast<int>(rng() % 7); k-- > 0;) path += path_parts[rng() % 8];
    const bool want = Wildmatch(glob.data(), glob.data(), glob.data() + glob.size(),
                                path.data(), path.data() + path.size());
    matched += want;
    ASSERT_EQ(GlobMatch(glob, path), want) << "glob " << glob << " path " << path;
  }
  EXPECT_GT(matched, 3000);  // the globs match often enough to tell
}

// The patterns that took a backtracking matcher 69 s and over 120 s
// (issue 14): the automaton answers at once, whatever the stars.
TEST(ScanIgnore, GlobIsLinearForAnyPattern) {
  const std::string name(40, 'a');
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*b", name));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*b", name + name + name));
  EXPECT_FALSE(GlobMatch("**/*a*a*a*a*a*a*a*a*a*a*a*a*b", "x/y/" + name + "/" + name));
  EXPECT_TRUE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a", name));
  std::string long_name(1 << 20, 'a');
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", long_name));
  IgnoreList l;
  l.AddLine("*a*a*a*a*a*a*a*a*a*a*b", "/r");
  EXPECT_EQ(l.Match("/r/" + name, false), 0);
}

// --- costs and the prefilter -----------------------------------------------------

TEST(ScanSource, ManyFindingsOnOneLineHaveTheirColumns) {
  // Each finding's column counts code points from the line start; the
  // LineMap counts on from the last one (10k on a line took 3.4 s before).
  std::string src = "import torch\n";
  const int n = 20000;
  for (int i = 0; i < n; ++i) src += "\xc3\xa9=torch.cuda.synchronize();";
  src += "\n";
  const FileResult r = ScanSource(Rules(), Language::kPython, src);
  ASSERT_EQ(r.findings.size(), static_cast<size_t>(n));
  const int width = 27;  // "é=torch.cuda.synchronize();" in code points
  for (int i = 0; i < n; i += 997) {
    EXPECT_EQ(r.findings[static_cast<size_t>(i)].line, 2);
    EXPECT_EQ(r.findings[static_cast<size_t>(i)].column, i * width + 3);
    EXPECT_EQ(r.findings[static_cast<size_t>(i)].end_column, i * width + 3 + 22);
  }
}

TEST(ScanSource, SuppressionsAreMatchedByLine) {
  // Many markers, many findings: each finding looks at its own line's.
  std::string src;
  for (int i = 0; i < 3000; ++i) {
    src += "int a = c10::cuda::device_count(); /* anydev: ignore[AD601] */ /* anydev: "
           "ignore[AD601] */ int b = c10::cuda::current_device();\n";
  }
  src += "int c = c10::cuda::device_count(); /* anydev: ignore */\n";
  src += "int d = c10::cuda::device_count(); // anydev: ignore[AD603]\n";
  const FileResult r = ScanSource(Rules(), Language::kCpp, src);
  ASSERT_EQ(r.findings.size(), 3001u);
  EXPECT_EQ(Rules().rules()[static_cast<size_t>(r.findings[0].rule)].code, "AD603");
  EXPECT_EQ(r.findings[0].line, 1);
  EXPECT_EQ(r.findings.back().line, 3002);
  EXPECT_EQ(Rules().rules()[static_cast<size_t>(r.findings.back().rule)].code, "AD601");
}

TEST(ScanPrefilter, NeedlesComeFromTheRules) {
  // One component per spelling, the most shared (ties: the longer): "cuda"
  // covers torch.cuda.*, "current_device_idx" the one spelling without it.
  EXPECT_EQ(Rules().Needles(Language::kPython), V({"cuda", "current_device_idx"}));
  EXPECT_EQ(Rules().Needles(Language::kCpp), V({"cuda"}));
  EXPECT_FALSE(Rules().MayMatch(Language::kPython, "import torch\nx = 1\n"));
  EXPECT_TRUE(Rules().MayMatch(Language::kPython, "import torch\nx = torch.cuda\n"));
  // Every position, including the ends and the vector loop's edge.
  for (size_t len = 4; len < 80; ++len) {
    for (size_t at = 0; at + 4 <= len; ++at) {
      std::string s(len, 'x');
      s.replace(at, 4, "cuda");
      ASSERT_TRUE(Rules().MayMatch(Language::kCpp, s)) << len << " " << at;
      s[at + 3] = 'b';
      ASSERT_FALSE(Rules().MayMatch(Language::kCpp, s)) << len << " " << at;
    }
  }
  // A rule may name its own needles (a rule on string literals, say).
  const RuleSet own({{"AD900", Language::kPython, false, {"torch.cuda.nccl"}, {"\"nccl\""}},
                     {"AD901", Language::kPython, true, {"torch.xpu.never"}}});
  EXPECT_EQ(own.Needles(Language::kPython), V({"\"nccl\""}));
  EXPECT_TRUE(own.Needles(Language::kCpp).empty());
  EXPECT_FALSE(own.MayMatch(Language::kCpp, "cuda"));
}

TEST(ScanSource, TextChecksAtEveryLength) {
  // The vectorised checks for NUL and invalid UTF-8 end exactly at the end
  // (a file of 32k bytes once read the padding's NUL as its own).
  for (size_t len = 39; len < 140; ++len) {
    std::string src = "import torch\ntorch.cuda.synchronize()\n";  // 38 bytes
    src.resize(len - 1, '#');
    src += '\n';
    const FileResult r = ScanSource(Rules(), Language::kPython, src);
    ASSERT_TRUE(r.errors.empty()) << len << ": " << r.errors[0].message;
    ASSERT_EQ(r.findings.size(), 1u) << len;
  }
  std::string latin = "import torch\n# \xe9\n";
  latin.resize(64, ' ');
  EXPECT_EQ(Py(latin), V({"! 2 invalid UTF-8 (byte 0xE9); not scanned from there on"}));
}

TEST(ScanPrefilter, AFileWithoutANeedleIsNotLexed) {
  // Nothing in it could be a finding, so a syntax error hides none: not
  // reported. What is wrong with its bytes still is.
  EXPECT_EQ(Py("import torch\nx = '\n"), V());
  EXPECT_EQ(Py("import torch\nx = '\n\xff\n"),
            V({"! 3 invalid UTF-8 (byte 0xFF); not scanned from there on"}));
  EXPECT_EQ(Py(std::string("x = 1\n\0", 7)), V({"! 2 binary file (a NUL byte); skipped"}));
  // A needle only after invalid UTF-8 is in the part not scanned.
  EXPECT_EQ(Py("import torch\nx = '\n\xff torch.cuda.synchronize()\n"),
            V({"! 3 invalid UTF-8 (byte 0xFF); not scanned from there on"}));
  // With one, the lexer runs and reports as before.
  EXPECT_EQ(Py("import torch\nx = '\ntorch.cuda.synchronize()\n"),
            V({"! 2 unterminated string literal; findings after it are not reported"}));
}

// --- the literal rules' detectors (core/scan/src/literal_rules.cc) ---------------------

const RuleSet& LiteralRules() {
  static const RuleSet* rules = new RuleSet({
      {"AD101", Language::kPython, false, {"torch.cuda.is_available"}},
      {"AD901", Language::kPython, false, {}, {}, "py.device_call"},
      {"AD905", Language::kPython, false, {}, {}, "py.availability"},
      {"AD907", Language::kPython, false, {}, {}, "py.cuda_method"},
      {"AD951", Language::kCpp, false, {}, {}, "cpp.device_type"},
      {"AD952", Language::kCpp, false, {}, {}, "cpp.cuda_method"},
  });
  return *rules;
}

std::vector<std::string> ScanLiterals(Language lang, std::string_view src) {
  const FileResult r = ScanSource(LiteralRules(), lang, src);
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    out.push_back(std::to_string(f.line) + ":" + std::to_string(f.column) + " " +
                  LiteralRules().rules()[static_cast<size_t>(f.rule)].code + " " +
                  RefKindName(f.kind) + " `" + std::string(f.text) + "`" +
                  (f.call_end >= 0 ? " ->" + std::to_string(f.call_end) : ""));
  }
  return out;
}

TEST(LiteralRules, DetectorsAreIndexedWithTheirNeedles) {
  EXPECT_TRUE(IsKnownDetector("py.device_call"));
  EXPECT_FALSE(IsKnownDetector("py.nothing"));
  EXPECT_FALSE(IsKnownDetector(""));
  EXPECT_TRUE(LiteralRules().HasDetectors(Language::kPython));
  EXPECT_TRUE(LiteralRules().HasDetectors(Language::kCpp));
  EXPECT_FALSE(Rules().HasDetectors(Language::kPython));
  EXPECT_EQ(LiteralRules().DetectorNeedles(Language::kPython), std::vector<std::string>{"cuda"});
  EXPECT_EQ(LiteralRules().DetectorNeedles(Language::kCpp),
            (std::vector<std::string>{"CUDA", "cuda"}));
}

TEST(LiteralRules, PythonDeviceCallIdiomAndMethod) {
  EXPECT_EQ(ScanLiterals(Language::kPython,
                         "import torch as th\n"
                         "d = th.device('cuda', 1)\n"
                         "e = 'cuda' if th.cuda.is_available() else 'cpu'\n"
                         "x = y.cuda()\n"
                         "print('cuda')\n"),
            (std::vector<std::string>{"2:5 AD901 call `th.device` ->43",
                                      "3:5 AD905 idiom `'cuda' if th.cuda.is_available() else 'cpu'`",
                                      "3:15 AD101 call `th.cuda.is_available` ->80",
                                      "4:7 AD907 call `cuda` ->104"}));
}

// Note [Findings in two runs]: a detector's finding comes in the second run;
// one that starts where a spelling's does (here `th.device`, a spelling and
// py.device_call's call) follows it, as a stable sort put it, on every line.
TEST(LiteralRules, ATieBetweenTheRunsKeepsTheirOrder) {
  const RuleSet rules({
      {"AD100", Language::kPython, false, {"torch.device"}},
      {"AD901", Language::kPython, false, {}, {}, "py.device_call"},
  });
  const FileResult r = ScanSource(rules, Language::kPython,
                                  "import torch as th\n"
                                  "a = th.device('cuda')\n"
                                  "b = 'cuda'\n"
                                  "c = th.device('cuda', 1)\n");
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    out.push_back(std::to_string(f.line) + ":" + std::to_string(f.column) + " " +
                  rules.rules()[static_cast<size_t>(f.rule)].code);
  }
  EXPECT_EQ(out, (std::vector<std::string>{"2:5 AD100", "2:5 AD901", "4:5 AD100", "4:5 AD901"}));
}

TEST(LiteralRules, WithoutItsRuleADetectorFindsNothing) {
  EXPECT_EQ(Scan(Language::kPython, "import torch\nd = torch.device('cuda')\nx.cuda()\n"),
            std::vector<std::string>{});
}

TEST(LiteralRules, CppDeviceTypeButNotDispatchKey) {
  EXPECT_EQ(ScanLiterals(Language::kCpp,
                         "auto o = x.options().device(at::kCUDA);\n"
                         "auto k = c10::DispatchKey::CUDA;\n"
                         "auto t = c10::DeviceType::CUDA;\n"
                         "auto y = x.cuda();\n"),
            (std::vector<std::string>{"1:29 AD951 literal `at::kCUDA`",
                                      "3:10 AD951 literal `c10::DeviceType::CUDA`",
                                      "4:12 AD952 call `cuda` ->122"}));
}

}  // namespace
}  // namespace anydev::scan
