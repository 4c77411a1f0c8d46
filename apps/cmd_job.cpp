// attnlab _job run|reproduce: the job of Python's attnlab.run()/reproduce() in a fresh process.
//
// The Python module never forks its interpreter to run a sweep (a forked copy of a
// multi-threaded Jupyter kernel can block for ever on a lock another thread held, e.g. inside
// SQLite): python/src/bind_run.cpp starts this binary with posix_spawn (core/child_process.h,
// child_job_spawn) and reads frames on fd 3 (kChildJobFd): warnings, progress, reproduce's
// status lines, and the end frame with the result (run: planned skipped ok failed; reproduce:
// reproduce_result_json) or the error by class. The caller passes, as arguments KEY=VALUE
// (job_settings_read), its version (a binary of another build is refused), its option and
// command spellings (so messages name Python's keywords), and the settings its keywords set.
// Hidden from --help: not a user command.
#include <fcntl.h>
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "core/child_process.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/threads.h"
#include "core/version.h"
#include "experiment/experiment_dir.h"
#include "experiment/reproduce.h"

namespace attn {
namespace {

// Separates the spellings in one argument.
constexpr char kSpellingSeparator = '\x1f';

struct JobOptions {
  std::vector<std::string> settings;  // KEY=VALUE, as given
  std::string caller_version, option_spellings, command_spellings;
  std::string target, out;  // run: the spec; reproduce: the group
  std::vector<std::string> overrides;
  int jobs = 1, threads = 0;
  bool quick = false, force_new = false, retry_failed = false, report_only = false;
  bool groups = true;
};

std::vector<std::string> spellings_split(const std::string& text) {
  std::vector<std::string> out(1);
  for (const char c : text)
    if (c == kSpellingSeparator)
      out.emplace_back();
    else
      out.back() += c;
  return out;
}

// Installs the caller's spellings for the whole process (they must outlive it: kept here).
void spellings_install(const JobOptions& o) {
  static const std::vector<std::string> options = spellings_split(o.option_spellings);
  static const std::vector<std::string> commands = spellings_split(o.command_spellings);
  FrontOptionSpellings option_table{};
  FrontCommandSpellings command_table{};
  const bool fits =
      options.size() == option_table.size() && commands.size() == command_table.size();
  ATTN_CHECK(fits,
             "the attnlab binary and the Python module were built from different "
             "sources; rebuild both (cmake --build build) or reinstall the package");
  for (size_t k = 0; k < options.size(); ++k) option_table[k] = options[k].c_str();
  for (size_t k = 0; k < commands.size(); ++k) command_table[k] = commands[k].c_str();
  ATTN_CHECK(front_option_spellings_complete(option_table) &&
                 front_command_spellings_complete(command_table),
             "the caller of attnlab _job sent incomplete option spellings");
  front_option_spellings_set(option_table);
  front_command_spellings_set(command_table);
}

// The settings KEY=VALUE into o's fields: target, out, caller, option_spellings,
// command_spellings, jobs, threads, quick, force_new, groups, retry_failed, report_only (flags
// 0 or 1) and set (repeatable).
void job_settings_read(JobOptions& o) {
  const std::map<std::string, std::function<void(const std::string&)>> fields = {
      {"target", [&o](const std::string& v) { o.target = v; }},
      {"out", [&o](const std::string& v) { o.out = v; }},
      {"caller", [&o](const std::string& v) { o.caller_version = v; }},
      {"option_spellings", [&o](const std::string& v) { o.option_spellings = v; }},
      {"command_spellings", [&o](const std::string& v) { o.command_spellings = v; }},
      {"jobs", [&o](const std::string& v) { o.jobs = std::stoi(v); }},
      {"threads", [&o](const std::string& v) { o.threads = std::stoi(v); }},
      {"quick", [&o](const std::string& v) { o.quick = v == "1"; }},
      {"force_new", [&o](const std::string& v) { o.force_new = v == "1"; }},
      {"groups", [&o](const std::string& v) { o.groups = v == "1"; }},
      {"retry_failed", [&o](const std::string& v) { o.retry_failed = v == "1"; }},
      {"report_only", [&o](const std::string& v) { o.report_only = v == "1"; }},
      {"set", [&o](const std::string& v) { o.overrides.push_back(v); }},
  };
  for (const std::string& s : o.settings) {
    const size_t eq = s.find('=');
    const auto field = fields.find(s.substr(0, eq));
    ATTN_CHECK(eq != std::string::npos && field != fields.end(),
               "attnlab _job: unknown setting '" + s +
                   "'; the binary and the Python module "
                   "differ: rebuild both (cmake --build build)");
    field->second(s.substr(eq + 1));
  }
}

// The job's first steps, inside the job so that the caller gets their errors: the settings
// read, the caller's build checked, its spellings installed.
JobOptions job_prepare(const JobOptions& given) {
  JobOptions o = given;
  job_settings_read(o);
  const std::string mine = std::string(kVersion) + " " + kGitCommit;
  ATTN_CHECK(o.caller_version == mine,
             "the attnlab binary (" + mine + ") is not the build of the Python module (" +
                 o.caller_version +
                 "); rebuild both (cmake --build build), reinstall the package, or point "
                 "ATTNLAB_CLI at the matching binary");
  spellings_install(o);
  threads_configure(o.threads);
  return o;
}

void job_run(const JobOptions& given) {
  child_job_serve(kChildJobFd, [&given](int) {
    const JobOptions o = job_prepare(given);
    const RunRequest rq{.spec_path = o.target,
                        .out_dir = o.out,
                        .overrides = o.overrides,
                        .quick = o.quick,
                        .jobs = o.jobs,
                        .force_new = o.force_new,
                        .retry_failed = o.retry_failed,
                        .groups = o.groups,
                        .progress = false};  // the caller draws progress from the frames
    const RunSummary s = experiment_run(rq);
    return child_numbers_encode({s.planned, s.skipped, s.ok, s.failed});
  });
}

void job_reproduce(const JobOptions& given) {
  child_job_serve(kChildJobFd, [&given](int fd) {
    const JobOptions o = job_prepare(given);
    const ReproduceOptions r{
        .name = o.target,
        .out = o.out,
        .overrides = {},
        .command = {},
        .quick = o.quick,
        .progress = false,
        .force_new = o.force_new,
        .report_only = o.report_only,
        .jobs = o.jobs,
        .groups = o.groups,
        .say = [fd](const std::string& line) { child_frame_write(fd, kFrameJobStatus, line); }};
    return reproduce_result_json(reproduce_run(r));
  });
}

}  // namespace

void job_command_register(CLI::App& app) {
  auto o = std::make_shared<JobOptions>();
  auto* job = app.add_subcommand("_job", "")->group("");  // hidden
  job->require_subcommand(1);
  auto* run = job->add_subcommand("run", "");
  run->add_option("settings", o->settings, "KEY=VALUE")->required();
  auto* reproduce = job->add_subcommand("reproduce", "");
  reproduce->add_option("settings", o->settings, "KEY=VALUE")->required();
  // Frames go to fd 3 only: programs the job starts (the plot script) do not inherit it.
  const auto close_on_exec = [] { fcntl(kChildJobFd, F_SETFD, FD_CLOEXEC); };
  run->callback([o, close_on_exec] {
    close_on_exec();
    job_run(*o);
  });
  reproduce->callback([o, close_on_exec] {
    close_on_exec();
    job_reproduce(*o);
  });
}

}  // namespace attn
