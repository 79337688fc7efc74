// The C++ scanner's fast path (Note [Fast path for C++] in
// core/scan/src/cpp_scan.cc) against its full path, on inputs chosen to
// break a scanner that skims: needles in comments, strings, raw strings and
// `#if 0` groups; macros with continuations; aliases, using-declarations
// and using-directives in nested namespaces and their scopes; the enclosing
// namespaces of a chain and the files that define a legacy name themselves;
// templates, CUDA launches, digit separators, encoding prefixes; a needle
// split by a line continuation; unbalanced parentheses and braces; CRLF and
// lone CR; lexical errors. Each input is scanned both ways and must give the
// same findings (codes, offsets, lines, columns, call ends), errors and
// suppressions; some findings are checked outright. Random concatenations
// of the same snippets follow. tests/python/scan/test_scan_fast_path.py compares
// the two paths on generated trees with the real compat table.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anydev/scan.h"
#include "fast_path_compare.h"
#include "internal.h"

namespace anydev::scan {
namespace {

using testing::CheckBuiltSearch;
using testing::CheckSearch;
using testing::Lines;

RuleSet& Rules() {
  static RuleSet* rules = [] {
    std::vector<Rule> r;
    r.push_back({"AD601", Language::kCpp, false,
                 {"c10::cuda::device_count", "at::cuda::device_count"}});
    r.push_back({"AD619", Language::kCpp, false, {"c10::cuda::CUDAStream", "at::cuda::CUDAStream"}});
    r.push_back({"AD620", Language::kCpp, true, {"c10::cuda::CUDAStream::priority_range"}});
    r.push_back({"AD625", Language::kCpp, false,
                 {"c10::cuda::getCurrentCUDAStream", "at::cuda::getCurrentCUDAStream"}});
    r.push_back({"AD701", Language::kCpp, false, {"c10::cuda::CUDACachingAllocator::emptyCache"}});
    r.push_back({"AD702", Language::kCpp, false, {"c10::cuda::set_device"}});
    const char* detectors[] = {"cpp.device_type", "cpp.cuda_method", "cpp.is_cuda"};
    int code = 951;
    for (const char* d : detectors) {
      Rule rule{"AD" + std::to_string(code++), Language::kCpp, false, {}};
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
  return testing::BothPaths(Rules(), Language::kCpp, src, fast_taken);
}

bool Has(const std::string& out, const std::string& what) {
  return out.find(what) != std::string::npos;
}

TEST(CppFastPath, FindsWhatTheFullPathFinds) {
  const std::string src = Lines({
      "#include <c10/cuda/CUDAStream.h>",          // 1
      "int f() {",                                 // 2
      "  int a = 1; int b = 2;",                   // 3
      "  return c10::cuda::device_count() + a;",   // 4
      "}",                                         // 5
      "void g(at::Tensor t) {",                    // 6
      "  if (t.is_cuda()) t = t.cuda();",          // 7
      "  auto d = at::kCUDA;",                     // 8
      "}"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_TRUE(Has(out, "AD601 call 4:10-4:33")) << out;
  EXPECT_TRUE(Has(out, "AD953 call 7:9")) << out;
  EXPECT_TRUE(Has(out, "AD952 call 7:26")) << out;
  EXPECT_TRUE(Has(out, "AD951 literal 8:12")) << out;
}

// Note [C++ needles as words] in cpp_scan.cc: the rules' words are searched
// as whole identifiers (CUDA code is full of `cudaStream_t`, `__CUDA_ARCH__`,
// `CUDA_CHECK`), in the fast path and in the file's prefilter; a finding
// whose only word is `kCUDA`, `CUDA` after `DeviceType::`, `.cuda(` or
// `.is_cuda(` is still found (each alone in a file, the rest of which holds
// the words only inside others), and a name a using-directive brings in
// that holds a rule's word inside it (`getCurrentCUDAStream`) is a needle
// of its own, as it is no more found by `CUDA`.
TEST(CppFastPath, NeedlesAsWords) {
  const std::string noise = Lines({
      "#include <cuda_runtime.h>", "#ifdef __CUDA_ARCH__", "#define CUDA_CHECK(x) x",
      "#endif", "cudaStream_t s0; int cudaDevice = 0; float xpus = 1;",
      "void k() { CUDA_CHECK(cudaMemcpyAsync(0, 0, 0, cudaMemcpyDefault, s0)); }"});
  struct Case {
    const char* body;
    const char* finding;
  };
  const Case cases[] = {
      {"auto d = at::kCUDA;", "AD951 literal 8:10"},
      {"auto d = c10::DeviceType::CUDA;", "AD951 literal 8:10"},
      {"void g(at::Tensor t) { t = t.cuda(); }", "AD952 call 8:30"},
      {"bool g(at::Tensor t) { return t.is_cuda(); }", "AD953 call 8:33"},
      {"using namespace c10::cuda;\nvoid h() { auto x = getCurrentCUDAStream(); }",
       "AD625 call 9:21"},
      {"namespace cu = c10::cuda;\nint n() { return cu::device_count(); }", "AD601 call 9:18"},
  };
  for (const Case& c : cases) {
    for (int pad = 0; pad < 70; pad += 3) {
      const std::string src = noise + std::string(static_cast<size_t>(pad), ' ') + "\n" + c.body +
                              "\n" + "int tail() { return cudaSuccess; }\n";
      bool taken = false;
      const std::string out = Both(src, &taken);
      EXPECT_TRUE(taken) << src;
      EXPECT_TRUE(Has(out, c.finding)) << src << "\n" << out;
    }
  }
  // A file that defines the name in its own `namespace at { namespace cuda
  // {` (Note [Shim namespaces]): the definition, whose name holds `CUDA`
  // inside it, is lexed, and the call to it is no finding.
  for (int pad = 0; pad < 70; pad += 3) {
    const std::string src =
        noise + "namespace at {\nnamespace cuda {\nint pad1 = 1; int pad2 = 2;" +
        std::string(static_cast<size_t>(pad), ' ') +
        "\nint* getCurrentCUDAStream() { return nullptr; }\n}  // namespace cuda\n}\n"
        "void user() { auto s = at::cuda::getCurrentCUDAStream(); }\n";
    EXPECT_FALSE(Has(Both(src), "AD625")) << src;
  }
  // The prefilter: a file whose words are all inside others is not read.
  const std::string padded = noise + std::string(internal::kPadding, '\0');
  EXPECT_FALSE(
      Rules().MayMatchPadded(Language::kCpp, std::string_view(padded.data(), noise.size())));
}

TEST(CppFastPath, NeedlesInCommentsStringsAndSkippedGroups) {
  const std::string src = Lines({
      "// c10::cuda::device_count() in a comment",
      "/* c10::cuda::device_count()",
      "   c10::cuda::set_device(0) */ int x = c10::cuda::device_count();",
      "const char* s = \"c10::cuda::device_count()\"; int y = 0;",
      "const char* r = R\"xy(c10::cuda::device_count() )\" )xy\"; int z = c10::cuda::device_count();",
      "auto w = u8R\"(c10::cuda::set_device(1))\" LR\"d(at::kCUDA)d\" uR\"(x)\";",
      "char c = '\"'; char d = u8'x'; int n = 1'000'000; auto e = 0x1'f'u;",
      "#if 0",
      "c10::cuda::device_count(); { { {",
      "#elif 0",
      "}",
      "#else",
      "int k = c10::cuda::device_count();",
      "#endif",
      "#error c10::cuda::device_count() is \"gone",
      "#include \"c10/cuda/x.h\" // c10::cuda::device_count()",
      "int last = c10::cuda::device_count(); // anydev: ignore[AD601]",
      "int more = c10::cuda::device_count(); /* anydev: ignore */ int other = 1;",
      "// noqa: nothing"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_TRUE(Has(out, "AD601 call 3:40")) << out;
  EXPECT_TRUE(Has(out, "AD601 call 5:65")) << out;
  EXPECT_TRUE(Has(out, "AD601 call 13:9")) << out;
  EXPECT_FALSE(Has(out, " 9:")) << out;
  EXPECT_FALSE(Has(out, " 17:")) << out;
  EXPECT_FALSE(Has(out, " 18:")) << out;
  // `# noqa` is Python's: a C/C++ comment that mentions it is no directive.
  EXPECT_FALSE(Has(out, "noqa")) << out;
}

// Note [Comments in a directive's name]: `#/**/if 0` is `#if 0` on both
// paths, where the skim meets the '#' (at the start, after skimmed code,
// far from a needle and near one) and inside skipped groups.
TEST(CppFastPath, CommentsBetweenTheHashAndTheDirective) {
  const std::string pad(300, ' ');
  const char* groups[] = {
      "#/**/if 0\nc10::cuda::device_count();\n#endif\n",
      "# /* x */ if 0\nc10::cuda::device_count(); {\n#/**/else\nint k = c10::cuda::set_device(1);\n"
      "#/* y */endif\n",
      "#\\\nif 0\nc10::cuda::device_count();\n#endif\n",
      "#if 0\n#/**/if 1\n#/**/endif\nc10::cuda::device_count();\n/* c\n */ #endif\n",
      "#if 0\n  /**/ #else\nint j = c10::cuda::device_count();\n#endif\n",
      "#/* anydev: ignore */if 0\n}\n#endif\n"};
  for (const char* g : groups) {
    for (const std::string& before : {std::string(), std::string("int a;\n"),
                                      "void f() { g(1); }\n" + pad + "\n",
                                      std::string("int a = c10::cuda::device_count();\n")}) {
      const std::string src = before + g + "int z = c10::cuda::device_count();\n" + pad + "x();\n";
      bool taken = false;
      const std::string out = Both(src, &taken);
      EXPECT_TRUE(taken);
      EXPECT_FALSE(Has(out, "error")) << out;
    }
  }
  const std::string out = Both("#/**/if 0\nint a = c10::cuda::device_count();\n#endif\n" + pad +
                               "\nint b = c10::cuda::device_count();\n");
  EXPECT_FALSE(Has(out, " 2:")) << out;
  EXPECT_TRUE(Has(out, "AD601 call 5:9")) << out;
}

TEST(CppFastPath, MacrosAndContinuations) {
  const std::string src = Lines({
      "#define CHECK(x) \\",
      "  do { c10::cuda::device_count(); } \\",
      "  while (0)",
      "#define NS_BEGIN namespace c10 { namespace cuda {",
      "#define NS_END } }",
      "NS_BEGIN",
      "int f() { return CUDACachingAllocator::emptyCache(); }",
      "NS_END",
      "int a = c10::cu\\",
      "da::device_count();",
      "int b = c10::\\",
      "cuda::device_count();",
      "  # define X c10::cuda::set_device(2)",
      "int c = 1; # not a directive c10::cuda::device_count()",
      "/* a */ # pragma c10::cuda::device_count()",
      "x = 1 \\",
      "# define Y c10::cuda::device_count()"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_TRUE(Has(out, "AD601 call 2:8")) << out;
  EXPECT_TRUE(Has(out, "AD601 call 11:9-12:19")) << out;
}

TEST(CppFastPath, ScopesOfAliasesUsingsAndNamespaces) {
  const std::string src = Lines({
      "namespace outer {",
      "namespace cu = c10::cuda;",
      "int f() {",
      "  int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "  return cu::device_count();",
      "}",
      "void g() {",
      "  using namespace c10::cuda;",
      "  int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "  device_count();",
      "  { using c10::cuda::set_device;",
      "    int pad6 = 6; int pad7 = 7; int pad8 = 8; int pad9 = 9;",
      "    set_device(0); }",
      "  int pad10 = 10; int pad11 = 11; int pad12 = 12; int pad13 = 13;",
      "  set_device(1);",
      "}",
      "void h() { int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; device_count(); }",
      "}  // namespace outer",
      "int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "int k = cu::device_count();",
      "namespace c10 {",
      "namespace cuda {",
      "int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "void f() { CUDACachingAllocator::emptyCache(); }",
      "}",
      "int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "void f2() { cuda::device_count(); CUDACachingAllocator::emptyCache(); }",
      "}",
      "namespace at::native { namespace {",
      "int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "void f() { cuda::getCurrentCUDAStream(); }",
      "} }"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_TRUE(Has(out, "AD601 call 5:10")) << out;
  EXPECT_TRUE(Has(out, "AD601 call 10:3")) << out;
  EXPECT_TRUE(Has(out, "AD702 call 13:5")) << out;
  EXPECT_TRUE(Has(out, "AD702 call 15:3")) << out;  // by g's using-directive still
  EXPECT_FALSE(Has(out, " 17:")) << out;  // out of g's using-directive
  EXPECT_FALSE(Has(out, " 20:")) << out;  // out of the alias's namespace
  EXPECT_TRUE(Has(out, "AD701 call 24:12")) << out;
  EXPECT_TRUE(Has(out, "AD601 call 27:13")) << out;
  EXPECT_TRUE(Has(out, "AD625 call 31:12")) << out;
}

TEST(CppFastPath, ShimsDefinedByTheFile) {
  const std::string src = Lines({
      "int caller() { int pad1 = 1; int pad2 = 2; int pad3 = 3; return c10::cuda::device_count(); }",
      "int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "namespace c10 {",
      "namespace cuda {",
      "int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;",
      "int device_count() noexcept { return 1; }",
      "struct CUDAStream final {};",
      "} }"});
  const std::string out = Both(src);
  EXPECT_FALSE(Has(out, "AD601")) << out;
}

TEST(CppFastPath, TemplatesLaunchesAndQualifiers) {
  const std::string src = Lines({
      "std::vector<c10::cuda::CUDAStream> streams;",
      "template <typename T> int f() { return T::device_count() + ::c10::cuda::device_count(); }",
      "int a = vector<int>::c10::cuda::device_count();",
      "int b = decltype(x)::c10::cuda::device_count();",
      "int c = decltype([] { return 1; }())::c10::cuda::device_count();",
      "return ::c10::cuda::device_count();",
      "kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(in, out, n);",
      "auto p = c10::cuda::CUDAStream::priority_range();",
      "x.c10::cuda::device_count(); y->cuda(); z.cuda(1, 2);",
      "auto t = c10::DeviceType::CUDA; auto u = DispatchKey::CUDA;"});
  bool taken = false;
  const std::string out = Both(src, &taken);
  EXPECT_TRUE(taken);
  EXPECT_TRUE(Has(out, "AD619 reference 1:13")) << out;
  EXPECT_TRUE(Has(out, "AD625 call 7:26")) << out;
  EXPECT_TRUE(Has(out, "AD951 literal 10:10")) << out;
}

TEST(CppFastPath, UnbalancedCodeAndOddBrackets) {
  for (const std::string& src : {
           Lines({"int a = f(;", "int pad1 = 1; int pad2 = 2;", "c10::cuda::device_count();"}),
           Lines({"int a = f());", "int pad1 = 1; int pad2 = 2;", "c10::cuda::device_count();"}),
           Lines({"}}} int pad1 = 1; int pad2 = 2; int pad3 = 3;", "c10::cuda::device_count();"}),
           Lines({"namespace x", "#define M {", "}", "int pad1 = 1; int pad2 = 2;",
                  "void f() { c10::cuda::device_count(); }"}),
           Lines({"#ifdef A", "void f(int) {", "#else", "void f() {", "#endif",
                  "int pad1 = 1; int pad2 = 2; int pad3 = 3;", "c10::cuda::device_count(); }"}),
           Lines({"auto x = (y + (z;", "int pad1 = 1; int pad2 = 2; int pad3 = 3;",
                  "c10::cuda::device_count(", "  1, (2, 3));"}),
           std::string("int a = 1;\r\nint b = c10::cuda::device_count();\r\n#if 0\r\nx\r\n#endif\r\n"),
           std::string("int a = 1;\rint b = c10::cuda::device_count();\r// c\rint c = 2;\r"),
           std::string("\xEF\xBB\xBFint b = c10::cuda::device_count();\n"),
           std::string("int b = c10::cuda::device_count();"),
           std::string("int a = 1; /* unterminated c10::cuda::device_count();\n"),
           std::string("int a = c10::cuda::device_count(); const char* s = \"abc\n"),
           std::string("int pad1 = 1; int pad2 = 2; int pad3 = 3; auto r = R\"x(abc\n"),
           std::string("int a = c10::cuda::device_count(); auto r = R\"0123456789abcdefgh(x)\";\n"),
           std::string("#if 1\nint a = c10::cuda::device_count();\n#else\n#if 0\n"),
           std::string("int a = 1;\n#if 0\nc10::cuda::device_count();\n"),
           std::string("char c = 'x; int b = c10::cuda::device_count();\n"),
           // A ';' inside parentheses ends no stretch: the '(' and what is
           // before it decide (decltype(...)::name is no global name).
           Lines({"int a = decltype(x; int pad1 = 1; int pad2 = 2; int pad3 = 3; y)"
                  "::c10::cuda::device_count();"}),
           Lines({"int a = decltype(c10::cuda::device_count; int pad1 = 1; int pad2 = 2; "
                  "int pad3 = 3; int pad4 = 4; y)::c10::cuda::device_count();"}),
       }) {
    Both(src);
  }
}

// The skim looks for the last '\n' only where a line start or the end of a
// directive matters ('#', "/*", a continuation, a ';' or brace in a
// `#define`), and keeps a run of ';' as one token: directives after
// skimmed code on the same line and on the next, defines whose ';' and
// braces come before and after continuations and comments, CR line ends,
// and needles right after a run of ';', at every offset in a 64-byte block.
TEST(CppFastPath, LazyLineStartsAndRunsOfSemicolons) {
  const std::string pad = "int pad1 = f(1); int pad2 = (2); int pad3 = g(h(3));\n";
  std::vector<std::string> cases = {
      "int a = 1;;;\n# define X c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "f(x) ; g(y);  # not c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "int a = (1\n);# x c10::cuda::device_count();\nint b = c10::cuda::device_count();\n",
      "#define A 1 ; 2 ; { \\\n } ; c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "#define B /* two\nlines */ ; { c10::cuda::device_count() }\nint b = c10::cuda::device_count();\n",
      "x; /* c */ # pragma c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "x;\n  /* c */ #define C c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "#define D a; \\\n b; \\\n c10::cuda::device_count();\nint b = c10::cuda::device_count();\n",
      "a;\r#define E c10::cuda::device_count()\rint b = c10::cuda::device_count();\r",
      "a; // c\n# define F c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "a; 'x'; \"s\"  # x c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "a; \\\n# define G c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "for (;;) ;;; { ;; } ;;c10::cuda::device_count();;; c10::cuda::set_device(0);\n",
      "#define H ;;\n;; c10::cuda::device_count();\n#define I { ;; }\n;c10::cuda::set_device(1);\n",
  };
  for (size_t k = 0; k < 64; ++k) {
    cases.push_back(pad + std::string(k, ' ') + ";;\n#define J c10::cuda::device_count()\n" + pad +
                    std::string(k, ';') + "c10::cuda::device_count();" + std::string(k % 7, '\n') +
                    "#if 0\nc10::cuda::set_device(0);\n#endif\n" + pad);
  }
  for (const std::string& src : cases) {
    Both(src);
    if (HasFailure()) break;
  }
}

// A division does not stop the skim (Note [Divisions in the skim]): it
// leaves line_start_ and in_directive_ to be settled where they are asked,
// so a '#' after one on the same line is no directive and one on the next
// line is, a division in a directive's line keeps the line the directive's,
// and a "//" or "/*" after a division (or split by one) is still a comment;
// at every offset of a block, and right before a needle or the file's end.
TEST(CppFastPath, DivisionsInTheSkim) {
  const std::string pad = "int pad1 = f(1) / 2; int pad2 = (2); int pad3 = g(h(3) / 4);\n";
  std::vector<std::string> cases = {
      "int a = b / c; # define X c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "int a = b / c;\n# define X c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "int a = b /\n#if 0\nc10::cuda::device_count(); {\n#endif\nc;\nc10::cuda::set_device(0);\n",
      "#define D a / b; { \\\n c / d; } c10::cuda::device_count()\n"
      "int b = c10::cuda::device_count();\n",
      "#define E a / b\n; { c10::cuda::device_count(); }\n",
      "a = b / /* c10::cuda::device_count() */ c; # x\nc10::cuda::set_device(0);\n",
      "a = b / // c10::cuda::device_count()\n c; # x\nc10::cuda::set_device(0);\n",
      "a = b // c / d\n; c10::cuda::device_count();\n",
      "a = b / * c; /\\\n/ c10::cuda::device_count()\nc10::cuda::set_device(0);\n",
      "a = b /\\\n* c10::cuda::device_count() */ c;\nc10::cuda::set_device(0);\n",
      "a = b / 'c'; d = e / \"c10::cuda::device_count()\"; c10::cuda::set_device(0);\n",
      "/ / / ;\n  / # define F c10::cuda::device_count()\nint b = c10::cuda::device_count();\n",
      "a;\r/ b;\r#define G c10::cuda::device_count()\rint b = c10::cuda::device_count();\r",
      "x = y /c10::cuda::device_count();\n",
      "x = y /",
      // Braces in a comment after a division are the comment's.
      "namespace c10 {\n" + pad + "a = b / 2; /* } } { */ x = y / 3;\n" + pad +
          "int e = cuda::device_count();\n}\nint c = cuda::device_count();\n",
      "namespace c10 {\n" + pad + "a = b / 2; // } } {\n x = y / 3;\n" + pad +
          "int e = cuda::device_count();\n}\nint c = cuda::device_count();\n",
  };
  for (size_t k = 0; k < 70; ++k) {
    cases.push_back(pad + std::string(k, ' ') + "a / b;\n#define J c10::cuda::device_count()\n" +
                    std::string(k, '/').replace(0, k / 2, std::string(k / 2, ' ')) +
                    " c10::cuda::device_count();\n" + std::string(k % 5, ' ') + "/ x; #if 0\n" +
                    pad + "c10::cuda::set_device(0);\n");
    cases.push_back(pad + std::string(k, 'x') + " / c10::cuda::device_count() / 2;");
    cases.push_back(pad + std::string(k, 'x') + " /");
  }
  for (const std::string& src : cases) {
    Both(src);
    if (HasFailure()) break;
  }
  // A '#' after a division on its line is no directive; on the next line it is.
  EXPECT_TRUE(Has(Both("int a = b / c; # if 0\nc10::cuda::device_count();\n"), "AD601"));
  EXPECT_FALSE(Has(Both("int a = b / c;\n# if 0\nc10::cuda::device_count();\n#endif\n"), "AD601"));
}

// The skim's 64-byte blocks end where the next needle or the end of the
// file is (one test a block), and the lexer skips the spaces after each
// token it lexes: needles and file ends at every offset of a block from
// where the skim began, after parentheses, ';', braces, names with '$' and
// runs of spaces, the same as the full path.
TEST(CppFastPath, NeedlesAndEndsAtEveryOffsetOfABlock) {
  const std::vector<std::string> fillers = {"(", ")", ";", "{", "}", " ", "a$b  ", "$x ", "(;)"};
  for (size_t k = 0; k < 140; ++k) {
    for (const std::string& fill : fillers) {
      std::string body;
      while (body.size() < k) body += fill;
      body.resize(k);
      const std::string head = "int a = f(1);\nvoid g() { h(2); }\n";
      // A needle k bytes after a boundary, then the file's end k bytes on.
      Both(head + body + "c10::cuda::device_count();\n" + body);
      // The file ends in the filler (its last block cut at every offset).
      Both(head + "int $n  = c10::cuda::device_count( 1 ) ;  " + body);
      Both(head + body);
      if (HasFailure()) return;
    }
  }
}

// The skim classifies the blocks that lie whole in the input itself and
// leaves the last ones (the input's end within 64 bytes) to its cursor,
// which it hands the block it stops in (Note [Skim blocks classified in the
// loop]): skimmed code of every length from 0 to 330 bytes (so across up to
// five blocks and every offset of the last), then what leaves the skim's
// loop (a prefixed literal, whose token start the cursor finds looking back
// in that block, a comment, a directive, a division, a quote; runs of ';'
// in and out of a directive, the last boundary's in_directive_ read back
// from its token) before a needle or at the end, the same as the full path.
TEST(CppFastPath, SkimBlocksUpToTheEnd) {
  const std::vector<std::string> tails = {
      "x = u8\"s\";", "y = R\"d(a;b)d\";", "z = L'c';", "s = \"q;\";", "/* c; */", "// c;\n",
      "\n#define X(a) (a);\n", "\n#define Z a;; b; ", ";;\n#define W {;\n;;", "w = a / b;", "v = 1'000;", "u = f(\"a\" \"b\");"};
  for (size_t len = 0; len <= 330; ++len) {
    std::string body;
    while (body.size() < len) body += len % 3 ? "f(x); " : "{g(y);} ";
    body.resize(len);
    for (const std::string& tail : tails) {
      const std::string head = "int a = f(1);\n";
      Both(head + body + tail);
      Both(head + body + tail + " c10::cuda::device_count();\n");
      Both(head + body + tail + body + "c10::cuda::device_count();" + body);
      if (HasFailure()) return;
    }
  }
  // A needle far (past kNear) from the last boundary, a ';' in a #define:
  // the stretch lexed from there is in the directive, and its '}' does not
  // close the namespace.
  const std::string filler(70, '+');
  for (const char* semis : {";", ";;", "; ;"}) {
    const std::string src = std::string("namespace c10 {\nint q;\n#define Z a") + semis + " b " +
                            filler + " cuda::x }\nvoid f() { cuda::device_count(); }\n}\n";
    EXPECT_TRUE(Has(Both(src), "AD601")) << src;
  }
}

// More bound names than the needle search holds: everything is lexed while
// they are in scope, and the findings are still those of the full path.
TEST(CppFastPath, ManyBindings) {
  std::string src = "namespace c10 { namespace cuda {\n";
  for (int k = 0; k < 150; ++k) {
    src += "namespace a" + std::to_string(k) + " = c10::cuda;\n";
    src += "int pad" + std::to_string(k) + " = 1; int more" + std::to_string(k) + " = 2;\n";
  }
  src += "void f() { a7::device_count(); a149::set_device(0); CUDAStream s; }\n} }\n";
  src += "int pad = 1; int pad2 = 2; int pad3 = 3; a7::device_count(); c10::cuda::device_count();\n";
  const std::string out = Both(src);
  EXPECT_TRUE(Has(out, "AD601 call 302:12")) << out;
  EXPECT_TRUE(Has(out, "AD702 call 302:32")) << out;
}

// Random files made of the snippets above and more, both ways.
// The prefilter (words, Note [C++ needles as words]): returns whether it
// lets `src` through; where it does not, the full lexer finds nothing there.
bool PrefilterSound(const std::string& src) {
  const std::string padded = src + std::string(internal::kPadding, '\0');
  const std::string_view text(padded.data(), src.size());
  if (Rules().MayMatchPadded(Language::kCpp, text)) return true;
  internal::SetFastPathForTesting(0);
  internal::LexOutput out;
  internal::ScanCpp(Rules(), text, 0, &out);
  internal::SetFastPathForTesting(-1);
  EXPECT_TRUE(out.findings.empty()) << src;
  return false;
}

TEST(CppFastPath, RandomConcatenations) {
  const std::vector<std::string> snippets = {
      "int a = 1;\n", "int b = f(x, y) + g(z);\n", "  for (int i = 0; i < n; ++i) {\n", "}\n",
      "{\n", "c10::cuda::device_count();\n", "auto s = at::cuda::getCurrentCUDAStream();\n",
      "namespace cu = c10::cuda;\n", "cu::set_device(0);\n", "using namespace c10::cuda;\n",
      "device_count();\n", "using c10::cuda::set_device;\n", "set_device(1);\n",
      "namespace c10 { namespace cuda {\n", "namespace at {\n", "namespace {\n",
      "CUDACachingAllocator::emptyCache();\n", "cuda::device_count();\n",
      "// c10::cuda::device_count()\n", "/* c10::cuda::set_device(0)\n */\n",
      "const char* s = \"c10::cuda::device_count()\";\n", "auto r = R\"x(c10::cuda::device_count())x\";\n",
      "#if 0\nc10::cuda::device_count(); {\n#endif\n", "#ifdef A\nvoid f(int) {\n#else\nvoid f() {\n#endif\n",
      "#define M(x) \\\n  c10::cuda::device_count(x)\n", "#define B {\n", "#include <c10/cuda/CUDAStream.h>\n",
      "t.cuda(); t.is_cuda();\n", "auto d = at::kCUDA;\n", "auto e = c10::DeviceType::CUDA;\n",
      "kernel<<<1, 2, 0, c10::cuda::getCurrentCUDAStream()>>>(x);\n", "int n = 1'000;\n",
      "char q = '\\'';\n", "x = f(\n", ");\n", "int device_count() { return 0; }\n",
      "struct CUDAStream {};\n", "int c = c10::cu\\\nda::device_count();\n",
      "auto v = u8\"cuda\" L\"x\";\n", "foo(c10::cuda::device_count(),\n  bar(1));\n",
      "int k = 0; // anydev: ignore\n", "int m = c10::cuda::device_count(); // anydev: ignore[AD601]\n",
      "#pragma once\n", "  # if 1\n", "#else\n", "#endif\n", "template <class T> struct X {};\n",
      "std::vector<c10::cuda::CUDAStream> v;\n", "decltype(a; b)::c10::cuda::device_count();\n", ";\n", "(\n", ")\n", "\\\n", "\r\n",
      ";;\n", ";; ", "#define D a; \\\n b; {\n", "f(); # x\n", "  /* c */ # define Q cu::device_count()\n",
      "#define B /* x\n */ ; }\n", "x; /* c */ #if 0\n", "g(;\n",
      // Note [C++ needles as words]: the words inside others, next to '$'
      // (an identifier byte to the lexer, none to the search) and after a
      // continuation, and a definition whose name holds one.
      "cudaStream_t s; CUDA_CHECK(cudaFree(p));\n", "int a$cuda = 0; b = $CUDA;\n",
      "auto k = at::kCUDAx + is_cuda_y + DeviceType::CUDA_;\n", "x\\\ncuda::device_count();\n",
      "int* getCurrentCUDAStream() { return 0; }\n", "t.cuda_(); t.xcuda();\n",
  };
  std::mt19937 gen(14);
  for (int file = 0; file < 3000; ++file) {
    std::string src;
    const int count = 5 + static_cast<int>(gen() % 60);
    for (int k = 0; k < count; ++k) src += snippets[gen() % snippets.size()];
    Both(src);
    PrefilterSound(src);
    if (HasFailure()) break;
  }
  // Files of words inside others, a real snippet now and then: the
  // prefilter passes over many of them.
  const std::vector<std::string> noise = {
      "int a = 1;\n", "}\n", "{\n", "namespace at {\n", "f(x);\n", snippets.end()[-6],
      snippets.end()[-5], snippets.end()[-4], snippets.end()[-3], snippets.end()[-2],
      snippets.end()[-1]};
  int passed_over = 0;
  for (int file = 0; file < 2000; ++file) {
    std::string src;
    const int count = 2 + static_cast<int>(gen() % 12);
    for (int k = 0; k < count; ++k) {
      src += gen() % 40 == 0 ? snippets[gen() % snippets.size()] : noise[gen() % noise.size()];
    }
    Both(src);
    passed_over += PrefilterSound(src) ? 0 : 1;
    if (HasFailure()) break;
  }
  EXPECT_GT(passed_over, 200);
}

// NeedleSearch (prefilter.cc, Note [Needle kernel]: one load per 32 bytes,
// the fingerprint classes shifted in from the block before) against a plain
// search at every offset. The needles here are the C++ driver's kind (long
// and short, whole words and not, fingerprints at an offset, longer than 8
// bytes); each is put at every offset of the first 140 (so across the
// 32-byte blocks and the ends of the two-block reach), at the text's start
// and end, cut by the end of the search (the bytes after `end` real text,
// not padding), next to and overlapping another occurrence, and inside
// words. A random part follows. (testing::CheckSearch, fast_path_compare.h.)
const std::vector<std::pair<std::string, bool>>& DriverNeedles() {
  static const std::vector<std::pair<std::string, bool>> needles = {
      {"cuda", false},  {"CUDA", false},       {"xpu", false},         {"namespace", true},
      {"using", true},  {"cu", true},          {"accelerator", false}, {"getCurrentStream", true},
      {"F", true},      {"nnx", true}};
  return needles;
}

TEST(NeedleSearchKernel, EveryOffsetBothEndsAndCutByTheEnd) {
  const char* fillers[] = {" ", "a", "\xC3\xA9"};
  for (const auto& [needle, word] : DriverNeedles()) {
    for (size_t at = 0; at < 140; ++at) {
      for (const char* f : fillers) {
        std::string t;
        while (t.size() < at) t += (t.size() % 9 == 8) ? std::string(" ") : std::string(f);
        t.resize(at);
        const std::string alone = t + needle;  // the needle ends the text
        CheckSearch(DriverNeedles(), alone, 0);
        CheckSearch(DriverNeedles(), alone + " tail_" + needle + "x", 0);
        // Cut by the end of the search: the rest of the text follows it.
        CheckSearch(DriverNeedles(), alone + needle, 0, alone.size() - 1);
        CheckSearch(DriverNeedles(), alone + "(", 0, alone.size());
      }
    }
  }
}

TEST(NeedleSearchKernel, OverlapsRepeatsAndWordsInsideWords) {
  std::vector<std::string> texts = {
      "cudacuda", "cucuda", "cuda_cu cu.cu(cu)", "ccuuddaa cudda cuda", "CUDACUDA cuda", "xpuxpu",
      "namespacenamespace namespace", "usingusing using_ using", "accelerator accelerato",
      "acceleratoraccelerator", "getCurrentStreamgetCurrentStream getCurrentStream()",
      "FFF F F_F (F) nnxnnx nnx", std::string(200, 'c'), std::string(97, 'u') + "cuda"};
  for (size_t pad = 0; pad < 70; ++pad) {
    for (const std::string& t : texts) {
      const std::string shifted = std::string(pad, pad % 2 ? ' ' : 'q') + t;
      CheckSearch(DriverNeedles(), shifted, 0);
      CheckSearch(DriverNeedles(), "\xEF\xBB\xBF" + shifted, 3);  // after a BOM
    }
  }
}

// Random needle sets, none of which can begin inside another's occurrence
// (a needle of two whose end is another's start, or that holds another
// after its first byte): there NeedleSearch reports the match whose
// fingerprint (its rarest three bytes) comes first, which need not be the
// one that starts first (prefilter.cc, Note [Needle kernel]).
bool Overlapping(const std::vector<std::pair<std::string, bool>>& needles) {
  for (const auto& [a, wa] : needles) {
    for (const auto& [b, wb] : needles) {
      if (a == b) continue;
      for (size_t k = 1; k < a.size(); ++k) {
        const size_t len = std::min(a.size() - k, b.size());
        if (a.compare(k, len, b, 0, len) == 0) return true;
      }
    }
  }
  return false;
}

// The random needle sets and texts of the kernel tests below: needles of one
// to five bytes (now and then up to fourteen) from a few letters, half of them
// whole words, none overlapping another; texts of up to 260 bytes that hold
// some of them among the same letters and a few separators.
constexpr char kNeedleLetters[] = "abcdeuxpnmsgCUDA_9";
constexpr char kTextOthers[] = " .(\n;\xC3";

std::vector<std::pair<std::string, bool>> RandomNeedles(std::mt19937& rng, int count) {
  const std::string letters = kNeedleLetters;
  std::vector<std::pair<std::string, bool>> needles;
  for (int k = 0; k < count; ++k) {
    std::string n;
    const int len = 1 + static_cast<int>(rng() % (rng() % 4 == 0 ? 14 : 5));
    for (int j = 0; j < len; ++j) n += letters[rng() % letters.size()];
    needles.emplace_back(n, rng() % 2 == 0);
  }
  return needles;
}

std::string RandomText(std::mt19937& rng,
                       const std::vector<std::pair<std::string, bool>>& needles) {
  const std::string letters = kNeedleLetters, others = kTextOthers;
  std::string text;
  const size_t len = rng() % 260;
  while (text.size() < len) {
    const unsigned r = rng() % 10;
    if (r < 3) {
      text += needles[rng() % needles.size()].first;
    } else if (r < 7) {
      text += letters[rng() % letters.size()];
    } else {
      text += others[rng() % others.size()];
    }
  }
  return text;
}

TEST(NeedleSearchKernel, RandomNeedlesAndTexts) {
  std::mt19937 rng(20261202);
  int sets = 0;
  while (sets < 120) {
    const auto needles = RandomNeedles(rng, 1 + static_cast<int>(rng() % 10));
    if (Overlapping(needles)) continue;
    ++sets;
    for (int t = 0; t < 6; ++t) {
      const std::string text = RandomText(rng, needles);
      CheckSearch(needles, text, 0);
      if (!text.empty()) CheckSearch(needles, text, 0, rng() % text.size());
    }
  }
}

// Build after more Adds goes on from the first needle not built (the fast
// path's first search adds each import's names and builds again), and
// starts over where an Add made a built needle match inside words too: the
// same matches as one Build, on random needle sets built in two to four
// steps, with and without a weakened needle.
TEST(NeedleSearchKernel, BuildAfterMoreAddsGoesOn) {
  std::mt19937 rng(20261204);
  int sets = 0;
  while (sets < 150) {
    const auto needles = RandomNeedles(rng, 2 + static_cast<int>(rng() % 12));
    if (Overlapping(needles)) continue;
    ++sets;
    internal::NeedleSearch search;
    std::vector<std::pair<std::string, bool>> added;
    const int steps = 2 + static_cast<int>(rng() % 3);
    size_t next = 0;
    for (int step = 0; step < steps; ++step) {
      const size_t upto = step + 1 == steps ? needles.size()
                                            : next + rng() % (needles.size() - next + 1);
      for (; next < upto; ++next) {
        ASSERT_TRUE(search.Add(needles[next].first, needles[next].second));
        added.push_back(needles[next]);
      }
      // Now and then an Add that weakens a whole-word needle built already.
      if (step > 0 && rng() % 3 == 0) {
        for (auto& [n, word] : added) {
          if (word) {
            ASSERT_TRUE(search.Add(n, false));
            word = false;
            break;
          }
        }
      }
      search.Build();
      if (added.empty()) continue;
      for (int t = 0; t < 3; ++t) {
        const std::string text = RandomText(rng, needles);
        CheckBuiltSearch(search, added, text, 0);
        if (HasFailure()) return;
      }
    }
  }
}

// More than six needles that are no short whole word, then short whole
// words (prefilter.cc, Note [Buckets for whole words]): past six buckets
// such needles share one, chosen by what it admits, and the words keep
// buckets of their own; built in steps as the Python fast path builds
// (its statics, then each import's names), against the plain search. The
// Python fast path's kind of set first, with texts of the words inside
// words (`type`, `the`, `add`), then random ones.
TEST(NeedleSearchKernel, ManyNeedlesThenShortWords) {
  const std::vector<std::pair<std::string, bool>> python = {
      {"cuda", false},         {"xpu", false},        {"nccl", false},  {"GradScaler", true},
      {"is_available", true},  {"synchronize", true}, {"Stream", true}, {"benchmark", true},
      {"graph_pool", false},   {"np", true},          {"F", true},      {"th", true},
      {"cd", true}};
  ASSERT_FALSE(Overlapping(python));
  std::vector<std::string> texts = {
      "import torch as th\nx = th.cuda.synchronize() # the type of an xpu.Stream\n",
      "def method(self, add, type, cdx, npx): return F(np, cd) + F + thx + benchmarks",
      "xpu_type = typed + cuda; is_available(GradScaler); graph_pool_ (nccl) F.F",
      std::string(90, 'e') + "synchronize" + std::string(40, 'p') + "th cd"};
  for (const std::string& t : texts) {
    for (size_t pad = 0; pad < 40; ++pad) {
      const std::string shifted = std::string(pad, pad % 3 ? ' ' : 'y') + t;
      CheckSearch(python, shifted, 0);
      internal::NeedleSearch search;  // built in two steps
      for (size_t k = 0; k < python.size(); ++k) {
        ASSERT_TRUE(search.Add(python[k].first, python[k].second));
        if (k == 3) search.Build();
      }
      search.Build();
      CheckBuiltSearch(search, python, shifted, 0);
      if (HasFailure()) return;
    }
  }
  std::mt19937 rng(20261205);
  const std::string letters = kNeedleLetters;
  int sets = 0;
  while (sets < 100) {
    std::vector<std::pair<std::string, bool>> needles;
    const int plain = 7 + static_cast<int>(rng() % 8), words = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < plain + words; ++k) {
      const int len = k < plain ? 4 + static_cast<int>(rng() % 6) : 1 + static_cast<int>(rng() % 3);
      std::string n;
      for (int j = 0; j < len; ++j) n += letters[rng() % letters.size()];
      needles.emplace_back(n, k >= plain || rng() % 2 == 0);
    }
    if (Overlapping(needles)) continue;
    ++sets;
    internal::NeedleSearch search;
    const size_t first = 3 + rng() % 4;  // built once after these
    for (size_t k = 0; k < needles.size(); ++k) {
      ASSERT_TRUE(search.Add(needles[k].first, needles[k].second));
      if (k + 1 == first) search.Build();
    }
    search.Build();
    for (int t = 0; t < 4; ++t) {
      const std::string text = RandomText(rng, needles);
      CheckBuiltSearch(search, needles, text, 0);
      if (HasFailure()) return;
    }
  }
}

// NoteComment (scan_source.cc, Note [Comment markers in one pass]: one pass
// 16 bytes a step for the bytes that may end `noq` or `anydev:`) against the
// plain searches it replaced, on comments of every length to 80 made of the
// markers' pieces (so a marker, a `noqa` or a near miss falls across each
// 16-byte step and at both ends), with the padding the lexers' input has.
struct PlainMarks {
  bool noqa = false;
  std::vector<std::pair<uint32_t, std::string>> suppressions;
};

PlainMarks PlainNoteComment(std::string_view text, uint32_t offset) {
  PlainMarks m;
  for (size_t q = 2; q + 1 < text.size(); ++q) {
    if ((text[q] | 0x20) == 'q' && (text[q - 2] | 0x20) == 'n' && (text[q - 1] | 0x20) == 'o' &&
        (text[q + 1] | 0x20) == 'a') {
      m.noqa = true;
    }
  }
  const size_t at = text.find("anydev:");
  if (at == std::string_view::npos) return m;
  size_t p = at + 7;
  while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
  if (text.compare(p, 6, "ignore") != 0) return m;
  p += 6;
  std::string codes;
  if (p < text.size() && text[p] == '[') {
    const size_t close = text.find(']', p + 1);
    if (close == std::string_view::npos) return m;
    codes = std::string(text.substr(p + 1, close - p - 1));
    if (codes.find_first_not_of(" \t,") == std::string::npos) return m;
  } else if (p < text.size() && internal::IsIdentChar(static_cast<unsigned char>(text[p]))) {
    return m;
  }
  m.suppressions.emplace_back(static_cast<uint32_t>(offset + at), codes);
  return m;
}

TEST(CommentMarks, MatchesThePlainSearches) {
  const std::vector<std::string> pieces = {
      "noqa", "NoQA", "no", "q", "Q", "a", "nOq", "anydev:", "anydev: ignore",
      "anydev: ignore[AD601]",
      "anydev:ignored", "anydev: ignore[]", "anydev", "v:", "::", ":", " ", "x", "// ", "*/", "\n"};
  std::mt19937 rng(1414);
  for (int round = 0; round < 4000; ++round) {
    std::string text = round % 2 ? "//" : "/*";
    const size_t len = static_cast<size_t>(round % 81);
    while (text.size() < len) text += pieces[rng() % pieces.size()];
    text.resize(std::max<size_t>(len, 2));
    for (const size_t before : {size_t{0}, size_t{5}}) {
      // The comment in a buffer as the lexers have it: text before it, then
      // the padding (zero bytes) right after it.
      std::string buffer(before, 'v');
      buffer += text;
      buffer.append(internal::kPadding, '\0');
      const std::string_view view(buffer.data() + before, text.size());
      internal::LexOutput out;
      internal::NoteComment(view, static_cast<uint32_t>(before), &out);
      const PlainMarks want = PlainNoteComment(view, static_cast<uint32_t>(before));
      EXPECT_EQ(out.noqa_comment, want.noqa) << text;
      ASSERT_EQ(out.suppressions.size(), want.suppressions.size()) << text;
      for (size_t k = 0; k < want.suppressions.size(); ++k) {
        EXPECT_EQ(out.suppressions[k].offset, want.suppressions[k].first) << text;
        EXPECT_EQ(std::string(out.suppressions[k].codes), want.suppressions[k].second) << text;
      }
      if (HasFailure()) return;
    }
  }
}

// NoteBlockComment and NoteLineComment (Note [Comments in one pass with
// their end] in scan_source.cc: the end and the markers in one pass) against
// a plain search for the end and PlainNoteComment: comments of the markers'
// pieces, "*/", "/*/", continued lines (LF, CRLF), CR and LF ends, unclosed
// comments and comments at the input's end, at every length to 90 and with
// text before them.
TEST(CommentMarks, CppCommentsWithTheirEnds) {
  const std::vector<std::string> pieces = {
      "noqa", "NoQA", "no", "q", "a", "anydev:", "anydev: ignore", "anydev: ignore[AD601]",
      "anydev:ignored", "v:", "::", " ", "x", "*", "/", "*/", "/*", "\\\n", "\\\r\n", "\\",
      "\n", "\r", "\r\n", "**/", "noq*/"};
  std::mt19937 rng(2014);
  for (int round = 0; round < 6000; ++round) {
    const bool block = round % 2 == 0;
    std::string body;
    const size_t len = static_cast<size_t>(round % 91);
    while (body.size() < len) body += pieces[rng() % pieces.size()];
    body.resize(len);
    for (const std::string& head : {std::string(), std::string("int x; ")}) {
      std::string input = head + (block ? "/*" : "//") + body;
      if (round % 3 == 0) input += block ? "*/ int y;\n" : "\nint y;\n";
      const size_t start = head.size();
      std::string buffer = input;
      buffer.append(internal::kPadding, '\0');
      const char* s = buffer.data();
      const size_t n = input.size();
      // The plain way: the end first, then the comment's text.
      size_t want_end;
      if (block) {
        const size_t close = std::string_view(s + start + 2, n - start - 2).find("*/");
        want_end = close == std::string_view::npos ? close : start + 2 + close + 2;
      } else {
        want_end = n;
        for (size_t k = start; k < n; ++k) {
          if (s[k] != '\n' && s[k] != '\r') continue;
          if (k > start && s[k - 1] == '\\') {
            if (s[k] == '\r' && k + 1 < n && s[k + 1] == '\n') ++k;
            continue;
          }
          want_end = k;
          break;
        }
      }
      PlainMarks want;
      if (want_end != std::string_view::npos) {
        want = PlainNoteComment(std::string_view(s + start, want_end - start),
                                static_cast<uint32_t>(start));
      }
      internal::LexOutput out;
      const size_t end = block ? internal::NoteBlockComment(s, start, n, &out)
                               : internal::NoteLineComment(s, start, n, &out);
      ASSERT_EQ(end, want_end) << input;
      EXPECT_EQ(out.noqa_comment, want.noqa) << input;
      ASSERT_EQ(out.suppressions.size(), want.suppressions.size()) << input;
      for (size_t k = 0; k < want.suppressions.size(); ++k) {
        EXPECT_EQ(out.suppressions[k].offset, want.suppressions[k].first) << input;
        EXPECT_EQ(std::string(out.suppressions[k].codes), want.suppressions[k].second) << input;
      }
      if (HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace anydev::scan
