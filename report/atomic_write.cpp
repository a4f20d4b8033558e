#include "report/atomic_write.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <system_error>
#include <unistd.h>

namespace yirage::report {
namespace {

/// Blocks the signals that end a run from the terminal or a job scheduler (SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT) on this thread for its lifetime: one that arrives meanwhile is delivered
/// when the write is complete or undone, so the run ends with the old file or the new one and
/// no temporary file beside them.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t hold;
    sigemptyset(&hold);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
      sigaddset(&hold, s);
    pthread_sigmask(SIG_BLOCK, &hold, &old_);
  }

  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t old_;
};

/// Writes all of `text` to `fd` and flushes it to the disk; an error message or empty.
std::string write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::strerror(errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0)
    return std::strerror(errno);
  return {};
}

/// Flushes the directory entry of a rename to the disk (best effort: not every file system
/// can sync a directory).
void sync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

std::string not_replaceable(const std::filesystem::path& path) {
  // The rename would replace whatever is there: a device node, a directory entry of a link,
  // a FIFO. Only a regular file, or nothing, is replaced.
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    return "will not replace " + path.string() + ": it is not a regular file";
  return {};
}

std::string atomic_write(const std::filesystem::path& path, const std::string& text) {
  if (std::string why = not_replaceable(path); !why.empty())
    return why;
  SignalsHeld held;
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return "cannot write " + tmp.string() + ": " + std::strerror(errno);
  std::string error = write_all(fd, text);
  if (::close(fd) != 0 && error.empty())
    error = std::strerror(errno);
  std::error_code ec;
  if (!error.empty()) {
    std::filesystem::remove(tmp, ec);
    return "cannot write " + tmp.string() + ": " + error;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    return "cannot write " + path.string() + ": " + why;
  }
  sync_directory(path.parent_path());
  return {};
}

}  // namespace yirage::report
