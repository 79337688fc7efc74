// Fuzzes the native scanner (ScanSource: text checks, prefilter, both
// lexers and resolvers, LineMap, suppressions). The first byte picks the
// language; the rest is the file. Besides memory errors (ASan/UBSan), it
// checks what callers rely on: findings in order and inside the file, their
// text the bytes they span, lines and columns from 1 and consistent with the
// offsets, the same result with and without the prefilter's shortcut (a file
// that MayMatch rejects has no finding), every error with a message, and the
// same findings and errors from each scanner's fast path as from its full
// path (Note [Fast path] in core/scan/src/python_scan.cc, Note [Fast path
// for C++] in core/scan/src/cpp_scan.cc).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "anydev/scan.h"
#include "fuzz_common.h"
#include "internal.h"

namespace sc = anydev::scan;

namespace {

const sc::RuleSet& Rules() {
  static const sc::RuleSet* rules = new sc::RuleSet({
      {"AD101", sc::Language::kPython, false, {"torch.cuda.is_available"}},
      {"AD103", sc::Language::kPython, false, {"torch.cuda.current_device"}},
      {"AD107", sc::Language::kPython, false, {"torch.cuda.synchronize"}},
      {"AD109", sc::Language::kPython, true, {"torch.cuda.default_stream"}},
      {"AD312", sc::Language::kPython, false, {"torch.cuda.amp"}},
      {"AD313", sc::Language::kPython, false, {"torch.cuda.amp.autocast"}},
      {"AD501", sc::Language::kPython, false, {"torch.accelerator.current_device_idx"}},
      {"AD601", sc::Language::kCpp, false, {"c10::cuda::device_count", "at::cuda::device_count"}},
      {"AD619", sc::Language::kCpp, false, {"c10::cuda::CUDAStream", "at::cuda::CUDAStream"}},
      {"AD620", sc::Language::kCpp, true, {"c10::cuda::CUDAStream::priority_range"}},
      {"AD701", sc::Language::kCpp, false, {"c10::cuda::CUDACachingAllocator::emptyCache"}},
      {"AD625", sc::Language::kCpp, false, {"c10::cuda::getCurrentCUDAStream"}},
      {"AD901", sc::Language::kPython, false, {}, {}, "py.device_call"},
      {"AD902", sc::Language::kPython, false, {}, {}, "py.device_keyword"},
      {"AD903", sc::Language::kPython, false, {}, {}, "py.to_call"},
      {"AD905", sc::Language::kPython, false, {}, {}, "py.availability"},
      {"AD906", sc::Language::kPython, false, {}, {}, "py.availability_statement"},
      {"AD907", sc::Language::kPython, false, {}, {}, "py.cuda_method"},
      {"AD908", sc::Language::kPython, false, {}, {}, "py.is_cuda"},
      {"AD910", sc::Language::kPython, false, {}, {}, "py.nccl_backend"},
      {"AD951", sc::Language::kCpp, false, {}, {}, "cpp.device_type"},
      {"AD952", sc::Language::kCpp, false, {}, {}, "cpp.cuda_method"},
      {"AD953", sc::Language::kCpp, false, {}, {}, "cpp.is_cuda"},
  });
  return *rules;
}

bool Same(const sc::FileResult& a, const sc::FileResult& b) {
  if (a.findings.size() != b.findings.size() || a.errors.size() != b.errors.size()) return false;
  for (size_t k = 0; k < a.findings.size(); ++k) {
    const sc::Finding& x = a.findings[k];
    const sc::Finding& y = b.findings[k];
    if (x.rule != y.rule || x.kind != y.kind || x.start != y.start || x.end != y.end ||
        x.call_end != y.call_end || x.line != y.line || x.column != y.column ||
        x.end_line != y.end_line || x.end_column != y.end_column) {
      return false;
    }
  }
  for (size_t k = 0; k < a.errors.size(); ++k) {
    if (a.errors[k].message != b.errors[k].message || a.errors[k].line != b.errors[k].line) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const sc::Language lang = (data[0] & 1) ? sc::Language::kCpp : sc::Language::kPython;
  const std::string_view src(reinterpret_cast<const char*>(data + 1), size - 1);
  sc::internal::SetFastPathForTesting(1);
  const sc::FileResult r = sc::ScanSource(Rules(), lang, src);
  sc::internal::SetFastPathForTesting(0);
  const sc::FileResult full = sc::ScanSource(Rules(), lang, src);
  FUZZ_CHECK(Same(r, full));
  // Both paths read the comments on the findings' lines, and their `# noqa`
  // directives (Note [noqa directives]) the same way.
  FUZZ_CHECK(r.noqa_fallback == full.noqa_fallback);
  FUZZ_CHECK(r.noqa.size() == full.noqa.size());
  for (size_t k = 0; k < r.noqa.size() && k < full.noqa.size(); ++k) {
    FUZZ_CHECK(r.noqa[k].line == full.noqa[k].line && r.noqa[k].all == full.noqa[k].all &&
               r.noqa[k].codes == full.noqa[k].codes);
  }
  uint32_t last = 0;
  for (const sc::Finding& f : r.findings) {
    FUZZ_CHECK(f.rule >= 0 && static_cast<size_t>(f.rule) < Rules().rules().size());
    FUZZ_CHECK(!Rules().rules()[static_cast<size_t>(f.rule)].kept);
    FUZZ_CHECK(f.start < f.end && f.end <= src.size());
    FUZZ_CHECK(f.start >= last);
    last = f.start;
    FUZZ_CHECK(f.text == src.substr(f.start, f.end - f.start));
    FUZZ_CHECK(f.line >= 1 && f.column >= 1 && f.end_line >= f.line);
    FUZZ_CHECK(f.end_line > f.line || f.end_column > f.column);
    FUZZ_CHECK(f.call_end < 0 || (f.kind == sc::RefKind::kCall &&
                                  static_cast<uint64_t>(f.call_end) <= src.size()));
    FUZZ_CHECK(Rules().MayMatch(lang, src));
  }
  for (const sc::FileError& e : r.errors) {
    FUZZ_CHECK(!e.message.empty() && e.line >= 0);
  }
  return 0;
}
