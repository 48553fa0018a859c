// A tmpfs of a few MiB, mounted for one test and gone after it: a segment folder too small for
// the segments asked of it (docs/formats.md, "File layout"; docs/brokerd.md, "Segment memory").
// Header-only, so broker-ext's daemon tests share it through native/test on their include path.
// Mounting needs root (CAP_SYS_ADMIN); without it `skip_reason` says so and the test skips,
// naming why.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace sluice::testing {

class SmallTmpfs {
 public:
  explicit SmallTmpfs(int megabytes) {
    char folder[] = "/tmp/sluice-small-tmpfs-XXXXXX";
    if (::mkdtemp(folder) == nullptr) {
      skip_reason_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    folder_ = folder;
    const std::string options = "size=" + std::to_string(megabytes) + "m,mode=0700";
    if (::mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      skip_reason_ = "cannot mount a " + std::to_string(megabytes) + " MiB tmpfs at " + folder_ +
                     " (needs root, CAP_SYS_ADMIN; euid " + std::to_string(::geteuid()) +
                     "): " + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  // Detached, since a daemon under test may still map its segments until it is killed.
  ~SmallTmpfs() {
    if (mounted_) ::umount2(folder_.c_str(), MNT_DETACH);
    if (!folder_.empty()) ::rmdir(folder_.c_str());
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& folder() const { return folder_; }
  std::vector<std::string> Files() const {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(folder_)) {
      found.push_back(entry.path().filename().string());
    }
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  std::string folder_;
  std::string skip_reason_;
  bool mounted_ = false;
};

}  // namespace sluice::testing
