// Who may open the files a writer shares with its readers (docs/formats.md, "File layout"): its
// owner alone (mode 0600); also one group (mode 0660), as docker.sock does; or also one user, by a
// POSIX ACL entry, so that a reader of another uid opens its own segment and no other member of a
// group can. Never others. A reader opens a segment read-write (it writes its lane's words) and a
// socket needs write permission to connect, so whoever may gets read and write.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

struct Sharing {
  std::optional<gid_t> group;  // its members: mode 0660 and the file's group
  // One user more: the ACL entry `user:UID:rw-`, where the file's group gets nothing. None is
  // written for the owner's own uid or root, who open the file anyway.
  std::optional<uid_t> user;
};

// Gives the file open at `fd` (named `path` in errors) its group, mode and ACL. The group comes
// first, so the group bits never open the file to the group it was created with; callers do this
// before the file's name appears where readers look. On a filesystem that takes no POSIX ACL a
// `user` fails, and the message says so.
SLUICE_EXPORT Status ShareFile(int fd, const std::string& path, const Sharing& sharing);

// The same for the file of a bound Unix socket, which the socket's descriptor does not reach.
SLUICE_EXPORT Status ShareSocketFile(const std::string& path, const Sharing& sharing);

}  // namespace sluice
