// core/child_frames.h and core/child_process.h, the plumbing of the run workers and of
// Python's run(): frames arrive whole and in order whatever pieces the bytes come in, an
// incomplete or garbled stream hands out nothing it should not; a job's result, its errors
// by class, its warnings and progress reach the parent; a child that leaves without a whole
// report, is killed by a signal, or is stopped is reported as such and reaped.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/child_process.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"

namespace attn {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<ChildFrame> frames_of(ChildFrames& frames) {
  std::vector<ChildFrame> out;
  ChildFrame f;
  while (frames.next(&f)) out.push_back(f);
  return out;
}

TEST(ChildFrames, WholeFramesInOrderWhateverThePieces) {
  const std::vector<ChildFrame> sent = {{'W', "attnlab: a line\n"},
                                        {'O', std::string("\x1e"
                                                          "9:\0\x1f",
                                                          5)},
                                        {'K', ""},
                                        {'P', "3 7"}};
  std::string bytes;
  for (const auto& f : sent) bytes += child_frame_encode(f.kind, f.payload);
  for (const size_t piece : {size_t{1}, size_t{2}, size_t{7}, bytes.size()}) {
    SCOPED_TRACE(piece);
    ChildFrames frames;
    std::vector<ChildFrame> got;
    for (size_t at = 0; at < bytes.size(); at += piece) {
      frames.append(bytes.data() + at, std::min(piece, bytes.size() - at));
      for (auto& f : frames_of(frames)) got.push_back(f);
    }
    ASSERT_EQ(got.size(), sent.size());
    for (size_t k = 0; k < sent.size(); ++k) {
      EXPECT_EQ(got[k].kind, sent[k].kind);
      EXPECT_EQ(got[k].payload, sent[k].payload);
    }
    EXPECT_FALSE(frames.partial());
    EXPECT_FALSE(frames.garbled());
  }
}

TEST(ChildFrames, AnIncompleteLastFrameIsNeverHandedOut) {
  const std::string first = child_frame_encode('W', "first");
  const std::string whole = first + child_frame_encode('O', "{\"run_id\": \"abc\"}");
  for (size_t cut = first.size() + 1; cut < whole.size(); ++cut) {
    SCOPED_TRACE(cut);
    ChildFrames frames;
    frames.append(whole.data(), cut);
    const auto got = frames_of(frames);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].payload, "first");
    EXPECT_TRUE(frames.partial());
  }
}

TEST(ChildFrames, BytesThatAreNoFrameStopTheReader) {
  for (const std::string& bad :
       {std::string("x"), std::string("\x1eW:abc"), std::string("\x1eWx3:abc"),
        "\x1eW" + std::string(19, '9') + ":"}) {
    SCOPED_TRACE(bad);
    ChildFrames frames;
    const std::string bytes =
        child_frame_encode('W', "ok") + bad + child_frame_encode('W', "after");
    frames.append(bytes.data(), bytes.size());
    const auto got = frames_of(frames);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].payload, "ok");
    EXPECT_TRUE(frames.garbled());
    EXPECT_FALSE(frames.partial());
  }
}

TEST(ChildFrames, NumbersRoundTripAndAnythingElseIsRefused) {
  const std::vector<int64_t> v{0, -5, 1234567890123};
  EXPECT_EQ(child_numbers_decode(child_numbers_encode(v), 3), v);
  // Both ends are attnlab: a payload of anything else is a bug (ATTN_ASSERT).
  for (const std::string bad : {"", "1", "1 2 3", "1  2", "1 x", " 1 2", "1 2 ", "1 2x"})
    EXPECT_DEATH(child_numbers_decode(bad, 2), "internal error: .*whole numbers belong") << bad;
}

ChildWatch collecting(std::vector<ChildFrame>* frames) {
  ChildWatch watch;
  watch.on_frame = [frames](const ChildFrame& f) { frames->push_back(f); };
  return watch;
}

TEST(ChildProcess, AJobsResultWarningsAndProgressReachTheParent) {
  std::vector<ChildFrame> frames;
  const std::string big(200000, 'r');  // more than a pipe holds at once
  const std::string result = child_job_run(
      "the test child",
      [&big](int fd) {
        log_warn("attnlab: warned %d\n", 7);
        log_progress("runs", 3, 9);
        child_frame_write(fd, 'S', "a status line");
        return big;
      },
      collecting(&frames));
  EXPECT_EQ(result, big);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].kind, kFrameWarning);
  EXPECT_EQ(frames[0].payload, "attnlab: warned 7\n");
  EXPECT_EQ(frames[1].kind, kFrameProgress);
  EXPECT_EQ(child_numbers_decode(frames[1].payload, 2), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(frames[2].kind, 'S');
  EXPECT_EQ(frames[2].payload, "a status line");
}

// The message of what child_job_run throws for `job`, and whether it is an IoError /
// a UserError.
struct Thrown {
  std::string what;
  bool io = false, user = false;
};
Thrown thrown_by(const ChildJob& job) {
  try {
    child_job_run("the test child", job, ChildWatch{});
  } catch (const IoError& e) {
    return {e.what(), true, true};
  } catch (const UserError& e) {
    return {e.what(), false, true};
  } catch (const std::runtime_error& e) {
    return {e.what(), false, false};
  }
  return {"(nothing thrown)"};
}

TEST(ChildProcess, AJobsErrorsKeepTheirClassAndMessage) {
  Thrown t = thrown_by([](int) -> std::string { throw IoError("x.npz: no such file"); });
  EXPECT_TRUE(t.io);
  EXPECT_EQ(t.what, "x.npz: no such file");
  t = thrown_by([](int) -> std::string { throw UserError("task.q = 99 is too large"); });
  EXPECT_TRUE(t.user && !t.io);
  EXPECT_EQ(t.what, "task.q = 99 is too large");
  t = thrown_by([](int) -> std::string { throw std::bad_alloc(); });
  EXPECT_TRUE(t.user && !t.io);
  EXPECT_EQ(t.what, "out of memory; use a smaller size");
  // Any other exception of the job is a bug of attnlab: an internal error in the parent.
  EXPECT_DEATH(thrown_by([](int) -> std::string { throw std::logic_error("broken"); }),
               "internal error: .*the test child failed: broken");
}

TEST(ChildProcess, AChildKilledByASignalIsNamed) {
  // SIGKILL and SIGTERM: signals no sanitizer intercepts.
  Thrown t = thrown_by([](int) -> std::string {
    kill(getpid(), SIGKILL);
    pause();
    return "";
  });
  EXPECT_TRUE(t.user && !t.io);  // the environment killed it, not a bug
  EXPECT_EQ(t.what, "the test child was killed by signal 9 (Killed; out of memory?)");
  t = thrown_by([](int) -> std::string {
    raise(SIGTERM);
    pause();
    return "";
  });
  EXPECT_EQ(t.what, "the test child was killed by signal 15 (Terminated)");
}

TEST(ChildProcess, AChildThatLeavesWithoutAWholeReportSaysSo) {
  EXPECT_EQ(thrown_by([](int) -> std::string { _exit(3); }).what,
            "the test child exited with code 3 without a report");
  // A result frame cut short (the child died while writing it): the warning before it
  // arrives, the result does not.
  std::vector<ChildFrame> frames;
  EXPECT_THROW(child_job_run(
                   "the test child",
                   [](int fd) -> std::string {
                     child_frame_write(fd, kFrameWarning, "before");
                     const std::string f = child_frame_encode('K', "the whole result");
                     if (::write(fd, f.data(), f.size() - 3) < 0) _exit(4);
                     _exit(0);
                   },
                   collecting(&frames)),
               UserError);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, "before");
}

// A job that tells its pid and then sleeps; the pid, once child_job_run has returned.
pid_t run_sleeper(ChildWatch watch, pid_t* pid, double* seconds) {
  auto on_frame = watch.on_frame;
  watch.on_frame = [pid, on_frame](const ChildFrame& f) {
    if (f.kind == 'S') *pid = static_cast<pid_t>(std::stol(f.payload));
    if (on_frame) on_frame(f);
  };
  const auto start = Clock::now();
  try {
    child_job_run(
        "the test child",
        [](int fd) -> std::string {
          child_frame_write(fd, 'S', std::to_string(getpid()));
          std::this_thread::sleep_for(std::chrono::seconds(60));
          return "slept";
        },
        watch);
  } catch (...) {
    *seconds = std::chrono::duration<double>(Clock::now() - start).count();
    throw;
  }
  return *pid;
}

// True when `pid` is no child of this process any more (it was reaped).
bool reaped(pid_t pid) { return waitpid(pid, nullptr, WNOHANG) == -1 && errno == ECHILD; }

TEST(ChildProcess, StopKillsAndReapsTheChild) {
  pid_t pid = 0;
  double seconds = 0;
  ChildWatch watch;
  watch.poll_ms = 10;
  watch.stop = [&pid] { return pid != 0; };
  EXPECT_THROW(run_sleeper(watch, &pid, &seconds), Interrupted);
  ASSERT_NE(pid, 0);
  EXPECT_LT(seconds, 30);
  EXPECT_TRUE(reaped(pid));
}

TEST(ChildProcess, AThrowingHandlerStopsTheChildAndPropagates) {
  pid_t pid = 0;
  double seconds = 0;
  ChildWatch watch;
  watch.on_frame = [](const ChildFrame&) { throw std::invalid_argument("the handler failed"); };
  EXPECT_THROW(run_sleeper(watch, &pid, &seconds), std::invalid_argument);
  ASSERT_NE(pid, 0);
  EXPECT_LT(seconds, 30);
  EXPECT_TRUE(reaped(pid));
}

TEST(ChildProcess, ABodyThatThrowsLeavesTheChildWithCode1) {
  const Child child = child_fork("the test child", [](int) { throw std::runtime_error("boom"); });
  ChildFrames frames;
  while (child_read(child.fd, frames)) {
  }
  ::close(child.fd);
  EXPECT_EQ(child_status_text(child_wait(child.pid), "the test child"),
            "the test child exited with code 1");
  const auto got = frames_of(frames);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].payload, "attnlab: the test child failed: boom\n");
}

}  // namespace
}  // namespace attn
