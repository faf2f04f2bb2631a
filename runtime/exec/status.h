//===- status.h - Error values of the runtime --------------------*- C++ -*-===//
//
// Library code never exits: it returns a Status, which is either OK or one
// human-readable line saying what failed and where. main() turns a failed
// Status into "pdrt: error: stage K: <message>" and MPI_Abort.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_STATUS_H
#define PDRT_EXEC_STATUS_H

#include <string>

namespace pdrt {

/// OK, or the message of the first failure.
class Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return !failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

/// printf-style formatting into a std::string.
std::string format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

} // namespace pdrt

/// Returns early from the enclosing function when `expr` fails.
#define PDRT_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::pdrt::Status pdrtStatus_ = (expr);                                       \
    if (!pdrtStatus_.isOk())                                                   \
      return pdrtStatus_;                                                      \
  } while (0)

#endif // PDRT_EXEC_STATUS_H
