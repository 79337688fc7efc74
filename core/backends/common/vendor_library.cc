#include "backends/common/vendor_library.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/env.h"

namespace anydev::internal {
namespace {

bool IsNotFound(const std::string& dlopen_error) {
  return absl::StrContains(dlopen_error, "No such file or directory");
}

std::string LastDlError() {
  const char* e = dlerror();
  return e == nullptr ? std::string("unknown error") : std::string(e);
}

}  // namespace

absl::StatusOr<VendorLibrary> VendorLibrary::Open(const VendorLibrarySpec& spec) {
  std::vector<std::string> names;
  const std::optional<std::string> override_name = GetEnv(spec.env_override);
  if (override_name) {
    names.push_back(*override_name);
  } else {
    for (const char* soname : spec.sonames) {
      if (soname != nullptr) names.emplace_back(soname);
    }
  }
  std::vector<std::string> errors;
  for (const std::string& name : names) {
    dlerror();  // clear a stale error
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      errors.push_back(LastDlError());
      continue;
    }
    std::string path = name;
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0') {
      path = map->l_name;
    }
    return VendorLibrary(&spec, handle, name, std::move(path));
  }
  // Not on the loader's path: the installation roots.
  if (!override_name) {
    std::vector<std::string> roots;
    for (const char* var : spec.root_variables) {
      if (var == nullptr) continue;
      if (std::optional<std::string> root = GetEnv(var)) roots.push_back(*root);
    }
    if (spec.default_root != nullptr) roots.emplace_back(spec.default_root);
    for (const std::string& root : roots) {
      for (const char* subdir : spec.lib_subdirs) {
        for (const char* soname : spec.sonames) {
          if (subdir == nullptr || soname == nullptr) continue;
          const std::string path = absl::StrCat(root, "/", subdir, "/", soname);
          if (access(path.c_str(), F_OK) != 0) continue;
          if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            return VendorLibrary(&spec, handle, path, path);
          }
        }
      }
    }
  }
  // Nothing loaded: the first name's error in full, then the others.
  std::string message = absl::StrCat(spec.backend, ": ", names[0],
                                     IsNotFound(errors[0]) ? " not found" : " could not be loaded",
                                     " (dlopen: ", errors[0], ")");
  if (override_name) {
    absl::StrAppend(&message, ", named by ", spec.env_override);
  } else if (names.size() > 1) {
    std::vector<std::string> others;
    for (size_t i = 1; i < names.size(); ++i) {
      others.push_back(IsNotFound(errors[i]) ? names[i]
                                             : absl::StrCat(names[i], " (", errors[i], ")"));
    }
    absl::StrAppend(&message, "; also tried ", absl::StrJoin(others, ", "));
  }
  return absl::UnavailableError(message);
}

void* VendorLibrary::Find(const char* symbol) const {
  dlerror();
  return dlsym(handle_, symbol);
}

absl::Status VendorLibrary::MissingSymbol(const char* symbol) const {
  return absl::UnavailableError(absl::StrCat(spec_->backend, ": ", name_,
                                             path_ != name_ ? absl::StrCat(" (", path_, ")") : "",
                                             " lacks ", symbol, ", so it is too old for anydev"));
}

}  // namespace anydev::internal
