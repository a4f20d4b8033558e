#include "costmodel/sim/simulate.h"

#include "costmodel/sim/replay.h"
#include "costmodel/sim/result_json.h"
#include "devices/support/check.h"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace yirage::costmodel {
namespace {

void write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string s;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    s.append(buf, static_cast<std::size_t>(n));
  }
  return s;
}

// The child: simulate, write "ok\n" and the JSON result, or "error\n" and the message.
[[noreturn]] void run_child(int fd,
                            const devices::ClusterSpec& cluster,
                            const SimProgram& program,
                            const SimOptions& options) {
  int code = 0;
  try {
    write_all(fd, "ok\n" + sim_result_to_json(replay(cluster, program, options)));
  } catch (const std::exception& e) {
    write_all(fd, std::string("error\n") + e.what());
    code = 1;
  }
  ::close(fd);
  ::_exit(code);  // no atexit handlers, no flushing of the parent's copied stdio buffers
}

}  // namespace

SimResult simulate(const devices::ClusterSpec& cluster,
                   const SimProgram& program,
                   const SimOptions& options) {
  // The child inherits unwritten output; SimGrid may flush it there, printing it twice.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fds[2];
  CHECK(::pipe(fds) == 0) << "pipe failed";
  pid_t pid = ::fork();
  CHECK(pid >= 0) << "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], cluster, program, options);
  }
  ::close(fds[1]);
  std::string text = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (text.rfind("error\n", 0) == 0) {
    CHECK(false) << "simulation failed: " << text.substr(6);
  }
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && text.rfind("ok\n", 0) == 0)
      << "the simulation process died (status " << status << ")";
  SimResult r = sim_result_from_json(text.substr(3));
  r.peak_memory_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux: KiB
  return r;
}

bool SimResult::same_simulation(const SimResult& o) const {
  return makespan == o.makespan && devices == o.devices && links == o.links &&
         most_contended == o.most_contended && transfers == o.transfers &&
         aggregation == o.aggregation && notes == o.notes;
}

}  // namespace yirage::costmodel
