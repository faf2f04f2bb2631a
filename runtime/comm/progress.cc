//===- progress.cc - The communication thread's loop --------------------------===//

#include "comm/progress.h"

#include "comm/comm_mpi.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>

namespace pdrt {

void ProgressThread::start(TraceRecorder *trace) {
  trace_ = trace;
  stop_ = false;
  active_.clear();
  requests_.clear();
  thread_ = std::thread([this] { loop(); });
}

void ProgressThread::stop() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void ProgressThread::add(CommOp *op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    incoming_.push_back(op);
  }
  work_.notify_one();
}

Status ProgressThread::wait(CommOp &op) {
  bool done = op.done.load(std::memory_order_acquire);
  if (!done && !running())
    return Status::error(std::string(op.what) +
                         ": the communication thread is not running");
  if (!done) {
    std::unique_lock<std::mutex> lock(mu_);
    // Wake the thread from a long sleep: it polls faster while we wait.
    ++waiters_;
    ++wakeups_;
    work_.notify_one();
    done_.wait(lock, [&] { return op.done.load(std::memory_order_acquire); });
    --waiters_;
  }
  if (op.error != MPI_SUCCESS)
    return Status::error(mpiErrorString(op.what, op.error));
  return Status::ok();
}

int ProgressThread::testActive() {
  int n = (int)active_.size(), count = 0;
  indices_.resize(n);
  statuses_.resize(n);
  int rc = MPI_Testsome(n, requests_.data(), &count, indices_.data(),
                        statuses_.data());
  bool perRequest = rc == MPI_ERR_IN_STATUS;
  if (count == MPI_UNDEFINED || count <= 0) {
    if (rc == MPI_SUCCESS)
      return 0;
    perRequest = false;
    // A failed MPI_Testsome without a count: fail every active request.
    count = n;
    for (int i = 0; i < n; ++i)
      indices_[i] = i;
  }
  int64_t end = trace_ && trace_->on() ? trace_->now() : 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < count; ++i) {
      CommOp *op = active_[indices_[i]];
      op->error = perRequest ? statuses_[i].MPI_ERROR : rc;
      if (trace_ && trace_->on()) {
        op->event.endNs = end;
        trace_->record(TraceThread::Comm, op->event);
      }
      op->request = MPI_REQUEST_NULL;
      op->done.store(true, std::memory_order_release);
      active_[indices_[i]] = nullptr;
    }
  }
  done_.notify_all();
  // Keep the still active requests, in posting order.
  size_t kept = 0;
  for (size_t i = 0; i < active_.size(); ++i)
    if (active_[i]) {
      active_[kept] = active_[i];
      requests_[kept] = requests_[i];
      ++kept;
    }
  active_.resize(kept);
  requests_.resize(kept);
  return count;
}

void ProgressThread::loop() {
  // Wake-ups within a few microseconds of the requested sleep, not the
  // default 50 us timer slack.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  int sleepUs = kMinSleepUs;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    for (CommOp *op : incoming_) {
      active_.push_back(op);
      requests_.push_back(op->request);
    }
    incoming_.clear();
    if (stop_)
      return;
    if (active_.empty()) {
      work_.wait(lock, [&] { return stop_ || !incoming_.empty(); });
      continue;
    }
    lock.unlock();
    int completed = testActive();
    lock.lock();
    if (completed > 0) {
      sleepUs = kMinSleepUs;
      continue;
    }
    bool sending = std::any_of(active_.begin(), active_.end(),
                               [](const CommOp *op) { return op->isSend; });
    int cap = waiters_ > 0 ? kWaitingSleepUs
              : sending    ? kSendingSleepUs
                           : kIdleSleepUs;
    sleepUs = std::min(sleepUs, cap);
    uint64_t seen = wakeups_;
    work_.wait_for(lock, std::chrono::microseconds(sleepUs), [&] {
      return stop_ || !incoming_.empty() || wakeups_ != seen;
    });
    sleepUs = std::min(2 * sleepUs, cap);
  }
}

} // namespace pdrt
