// CHECK: an internal invariant that stays on in release builds. A failed check is a bug in
// yirage, never bad input; it throws InternalError naming the file and line.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace yirage::devices {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {

/// Collects the streamed message of a failed CHECK and throws when destroyed.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    msg_ << "internal error at " << file << ":" << line << ": check failed: " << cond;
  }

  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  CheckFailure(CheckFailure&&) = delete;
  CheckFailure& operator=(CheckFailure&&) = delete;

  // Throwing is the point: the message is streamed into the temporary, which throws when the
  // full expression ends (never during unwinding: a CHECK is a statement of its own).
  ~CheckFailure() noexcept(false) {  // NOLINT(bugprone-exception-escape)
    throw InternalError(msg_.str());
  }

  template <class T>
  CheckFailure& operator<<(const T& v) {
    msg_ << (first_ ? ": " : "") << v;
    first_ = false;
    return *this;
  }

 private:
  std::ostringstream msg_;
  bool first_ = true;
};

}  // namespace detail
}  // namespace yirage::devices

#define YIRAGE_CHECK(cond) \
  if (cond) {              \
  } else                   \
    ::yirage::devices::detail::CheckFailure(__FILE__, __LINE__, #cond)

#define CHECK(cond) YIRAGE_CHECK(cond)
