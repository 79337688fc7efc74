"""The C++ scanner's fast path (Note [Fast path for C++] in core/scan/src/cpp_scan.cc)
against its full path (ANYDEV_SCAN_FULL_LEXER=1), each in its own process with every
rule of the compat table on (the literal rules included): the same findings, errors and
suppressions, to the byte, on generated C++/CUDA files, on random mutations of them and
on adversarial files (needles in comments, strings and raw strings, macros with
continuations, `#if 0` groups, aliases and using-directives in nested namespaces, CUDA
launches, a needle split by a continuation, unbalanced code), with LF, CRLF and CR.
tests/cpp/scan_fast_path_cpp_test.cc does the same with a small rule set.
"""

from __future__ import annotations

import os
import random
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "scan"))
import gen_corpus  # noqa: E402

# the same comparison as the Python files' (a subprocess per path, fast against full)
from test_scan_fast_path import assert_same  # noqa: E402


ADVERSARIAL = {
    "comments.cpp": '''#include <c10/cuda/CUDAStream.h>  // c10::cuda::device_count()
/* at::cuda::getCurrentCUDAStream()
   c10::cuda::set_device(0) */ int x = c10::cuda::device_count();
const char* s = "c10::cuda::device_count()"; auto r = R"d(c10::cuda::device_count())d";
auto w = u8R"(at::kCUDA)" LR"(x)"; char c = '"'; int n = 1'000'000;
int k = c10::cuda::device_count(); // anydev: ignore[AD601]
''',
    "macros.cu": '''#define CHECK(x) \\
  do { c10::cuda::device_count(); } while (0)
#if 0
c10::cuda::device_count(); { {
#elif defined(A)
void f(int) {
#else
void f() {
#endif
  kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(in, out, n);
  int a = c10::cu\\
da::device_count();
}
''',
    "scopes.cpp": '''namespace at { namespace native {
namespace cu = c10::cuda;
using c10::cuda::getCurrentCUDAStream;
Tensor f(const Tensor& self) {
  int pad = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4;
  auto s = getCurrentCUDAStream(); cu::device_count();
  if (self.is_cuda()) return self.cuda();
  { using namespace c10::cuda; int p = 1; int q = 2; int r = 3; device_count(); }
  device_count(); return cuda::getCurrentCUDAStream();
}
} }
namespace c10 { namespace cuda {
int pad1 = 1; int pad2 = 2; int pad3 = 3; int pad4 = 4; int pad5 = 5;
void g() { CUDACachingAllocator::emptyCache(); }
} }
''',
    "unbalanced.cpp": "int a = f(;\nint pad1 = 1; int pad2 = 2;\nc10::cuda::device_count();\n}}\n"
                      "int b = decltype(x; int pad = 1; y)::c10::cuda::device_count();\n",
    "unterminated.cpp": "int a = c10::cuda::device_count();\nconst char* s = \"abc\n"
                        "int b = c10::cuda::device_count();\n",
}


def test_adversarial(tmp_path):
    for name, text in ADVERSARIAL.items():
        stem, ext = os.path.splitext(name)
        (tmp_path / name).write_bytes(text.encode())
        (tmp_path / f"{stem}_crlf{ext}").write_bytes(text.replace("\n", "\r\n").encode())
        (tmp_path / f"{stem}_cr{ext}").write_bytes(text.replace("\n", "\r").encode())
    full = assert_same([str(tmp_path)])
    assert len(full["findings"]) > 30 and full["errors"]


def mutate(r: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(r.randint(1, 8)):
        i = r.randrange(len(lines))
        k = r.random()
        if k < 0.3:  # a line moved
            lines.insert(r.randrange(len(lines)), lines.pop(i))
        elif k < 0.7:  # a byte or word that opens, closes or binds something
            line = lines[i]
            at = r.randint(0, len(line))
            lines[i] = line[:at] + r.choice([
                '"', "'", "(", ")", "{", "}", ";", "/*", "*/", "//", "#", "\\", "R\"(", ")\"",
                " cuda ", "::", "namespace c10 {", "using namespace c10::cuda;",
                "namespace cu = at::cuda;", "#if 0\n", "#endif\n", "\r"]) + line[at:]
        else:  # a legacy or literal form
            lines.insert(i, r.choice(gen_corpus.CPP_LEGACY + gen_corpus.CPP_LITERAL)
                         .replace("{x}", "t") + ";")
    return "\n".join(lines)


def test_generated_and_mutated(tmp_path):
    r = random.Random(14)
    g = gen_corpus.Gen(14)
    for k in range(60):
        cuda = k % 2 == 0
        text = g.cpp_file(r.randint(500, 8000), cuda)
        ext = "cu" if cuda else "cpp"
        (tmp_path / f"g{k}.{ext}").write_text(text)
        (tmp_path / f"m{k}.{ext}").write_text(mutate(r, text))
    full = assert_same([str(tmp_path)])
    assert len(full["findings"]) > 100
