#include "sluice/file_access.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sluice {
namespace {

// The kernel's binary form of an access ACL (linux/posix_acl_xattr.h), which is what libacl
// writes: a version word, then entries sorted by tag, little-endian.
constexpr uint32_t kAclVersion = 2;
constexpr uint16_t kUserObj = 0x01;
constexpr uint16_t kUser = 0x02;
constexpr uint16_t kGroupObj = 0x04;
constexpr uint16_t kMask = 0x10;
constexpr uint16_t kOther = 0x20;
constexpr uint16_t kReadWrite = 06;
constexpr uint32_t kNoId = 0xFFFFFFFF;

void Append(std::vector<uint8_t>& acl, uint16_t tag, uint16_t perm, uint32_t id) {
  uint8_t entry[8];
  std::memcpy(entry, &tag, 2);
  std::memcpy(entry + 2, &perm, 2);
  std::memcpy(entry + 4, &id, 4);
  acl.insert(acl.end(), entry, entry + 8);
}

// user::rw- user:UID:rw- group::(rw- with a group, else ---) mask::rw- other::---
std::vector<uint8_t> AccessAcl(uid_t user, bool group) {
  std::vector<uint8_t> acl(4);
  std::memcpy(acl.data(), &kAclVersion, 4);
  Append(acl, kUserObj, kReadWrite, kNoId);
  Append(acl, kUser, kReadWrite, static_cast<uint32_t>(user));
  Append(acl, kGroupObj, group ? kReadWrite : 0, kNoId);
  Append(acl, kMask, kReadWrite, kNoId);
  Append(acl, kOther, 0, kNoId);
  return acl;
}

// The user's entry, written by `set` (fsetxattr or lsetxattr: the name and bytes of the ACL's
// extended attribute), for any user but the owner's own uid and root.
template <typename SetAttribute>
Status GiveUserEntry(const std::string& path, const Sharing& sharing, SetAttribute set) {
  if (!sharing.user.has_value() || *sharing.user == 0 || *sharing.user == geteuid()) {
    return Status::OK();
  }
  const std::vector<uint8_t> acl = AccessAcl(*sharing.user, sharing.group.has_value());
  if (set("system.posix_acl_access", acl.data(), acl.size()) == 0) return Status::OK();
  const int err = errno;
  Status failed = Status::FromErrno(
      "give " + path + " an ACL entry for uid " + std::to_string(*sharing.user), err);
  if (err != EOPNOTSUPP) return failed;
  return Status(failed.code(), failed.message() +
                                   ": its filesystem takes no POSIX ACL, which a reader of "
                                   "another uid needs (a tmpfs needs CONFIG_TMPFS_POSIX_ACL)");
}

}  // namespace

Status ShareFile(int fd, const std::string& path, const Sharing& sharing) {
  if (sharing.group && fchown(fd, static_cast<uid_t>(-1), *sharing.group) != 0) {
    return Status::FromErrno("chown " + path + " to gid " + std::to_string(*sharing.group), errno);
  }
  if (fchmod(fd, sharing.group ? 0660 : 0600) != 0)
    return Status::FromErrno("chmod " + path, errno);
  return GiveUserEntry(path, sharing, [fd](const char* name, const void* value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
  });
}

Status ShareSocketFile(const std::string& path, const Sharing& sharing) {
  if (sharing.group && chown(path.c_str(), static_cast<uid_t>(-1), *sharing.group) != 0) {
    return Status::FromErrno("chown " + path + " to gid " + std::to_string(*sharing.group), errno);
  }
  if (chmod(path.c_str(), sharing.group ? 0660 : 0600) != 0) {
    return Status::FromErrno("chmod " + path, errno);
  }
  return GiveUserEntry(path, sharing, [&path](const char* name, const void* value, size_t size) {
    return lsetxattr(path.c_str(), name, value, size, 0);
  });
}

}  // namespace sluice
