// Who may open the files a writer shares with its readers (docs/formats.md, "File layout"): its
// owner alone (mode 0600), or also one group (mode 0660), as docker.sock does; never others.
// A reader opens a segment read-write (it writes its lane's words) and a socket needs write
// permission to connect, so the group gets read and write.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

#include "sluice/status.h"

namespace sluice {

inline mode_t SharedFileMode(const std::optional<gid_t>& group) { return group ? 0660 : 0600; }

// Gives the file open at `fd` (named `path` in errors) the group and its mode. The group comes
// first, so the group bits never open the file to the group it was created with; callers do this
// before the file's name appears where readers look.
inline Status ShareFile(int fd, const std::string& path, const std::optional<gid_t>& group) {
  if (group && fchown(fd, static_cast<uid_t>(-1), *group) != 0) {
    return Status::FromErrno("chown " + path + " to gid " + std::to_string(*group), errno);
  }
  if (fchmod(fd, SharedFileMode(group)) != 0) return Status::FromErrno("chmod " + path, errno);
  return Status::OK();
}

// The same for the file of a bound Unix socket, which the socket's descriptor does not reach.
inline Status ShareSocketFile(const std::string& path, const std::optional<gid_t>& group) {
  if (group && chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    return Status::FromErrno("chown " + path + " to gid " + std::to_string(*group), errno);
  }
  if (chmod(path.c_str(), SharedFileMode(group)) != 0) {
    return Status::FromErrno("chmod " + path, errno);
  }
  return Status::OK();
}

}  // namespace sluice
