// attnlab: the command line. Dispatches to one subcommand (apps/cmd_*.cpp) and turns
// errors into one line on stderr: exit 2 for a user error, 1 for anything else.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <functional>
#include <new>
#include <string>

#include "apps/cli_unknown.h"
#include "apps/commands.h"
#include "core/blas_core.h"
#include "core/blas_threads.h"
#include "core/error.h"
#include "core/float_env.h"
#include "core/front_option.h"
#include "core/memory.h"
#include "core/version.h"
#include "io/atomic_file.h"
#include "ops/isa.h"

namespace {

// How library messages name the options and commands (core/front_option.h): as typed on this
// command line.
constexpr attn::FrontOptionSpellings kCliSpellings = {
    "--out",
    "--force-new",
    "--retry-failed",
    "--jobs",
    "--quick",
    "--report-only",
    "--set",
    "--shard",
    "--mpi",
    "--heads",
    "--head-size",
    "--layout",
    "--query-pattern",
    "--key-pattern",
    "--layers",
    "--heatmap-layers",
    "--heatmap-heads",
    "--heatmap-block",
    "--n",
    "--first",
};
static_assert(attn::front_option_spellings_complete(kCliSpellings),
              "a FrontOption has no command-line spelling");
constexpr attn::FrontCommandSpellings kCliCommands = {
    "attnlab run SPEC --out {}",
    "attnlab run --mpi",
    "mpirun -np K attnlab run ... --mpi",
    "attnlab fit --save",
    "attnlab fit MODEL --in DATA.npz --save FILE.safetensors",
    "attnlab reproduce {}",
    "attnlab reproduce {} --quick",
};
static_assert(attn::front_command_spellings_complete(kCliCommands),
              "a FrontCommand has no command-line spelling, or its {} does not fit");

}  // namespace

int main(int argc, char** argv) {
  // Once more with OPENBLAS_NUM_THREADS=1, so OpenBLAS starts no worker thread, whatever the
  // core count (core/blas_threads.h), and with kernels the CPU runs where OpenBLAS did not know
  // it (core/blas_core.h).
  attn::blas_reexec_once(argv);
  // Under too small an address-space limit OpenBLAS's threads may already spin (core/memory.h):
  // one line and leave at once, without the exit handlers that would wait for them.
  if (const std::string problem = attn::memory_address_limit_problem(
          attn::memory_address_limit(), attn::blas_threads_configured());
      !problem.empty()) {
    std::fprintf(stderr, "attnlab: error: %s\n", problem.c_str());
    std::fflush(stderr);
    _exit(2);
  }
  attn::front_option_spellings_set(kCliSpellings);
  attn::front_command_spellings_set(kCliCommands);
  CLI::App app{
      "attnlab: a fast laboratory for the representational theory of attention.\n"
      "Tasks and models of Fu et al. (2023) and Sanford et al. (2023).",
      "attnlab"};
  // Second line: the kernels this process computes with (results may differ by rounding
  // between OpenBLAS's kernel sets, so reports record them too).
  // (A callback: a bad ATTNLAB_ISA is then the usual one-line error.)
  app.set_version_flag("--version", std::function<std::string()>([] {
                         return std::string("attnlab ") + attn::kVersion + " (" + attn::kGitCommit +
                                ")\nOpenBLAS core " + attn::blas_core_name() +
                                ", attnlab kernels " + attn::isa_name(attn::isa_active()) +
                                attn::blas_core_replaced_note() + ", subnormals " +
                                attn::subnormals_text();
                       }));
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  attnlab list                                  tasks with their parameters\n"
      "  attnlab data qsa --n 1000 --seed 0 --set task.q=3 -o qsa.npz\n"
      "  attnlab run experiments/demo/baselines.toml --out runs/demo --quick\n"
      "  attnlab plot runs/demo\n"
      "  attnlab reproduce demo --quick\n"
      "  attnlab check my_spec.toml --out runs/mine   claims and figures of any spec\n"
      "  attnlab status runs/demo                      planned, stored, missing runs\n"
      "Exit codes: 0 success, 2 bad input (one line says what to fix), 1 internal error.");
  int exit_code = 0;
  attn::data_command_register(app);
  attn::list_command_register(app);
  attn::run_command_register(app);
  attn::plot_command_register(app);
  attn::export_command_register(app);
  attn::merge_command_register(app);
  attn::qk_stats_command_register(app);
  attn::features_command_register(app);
  attn::fit_command_register(app);
  attn::predict_command_register(app);
  attn::gpt2_command_register(app);
  attn::reproduce_command_register(app, &exit_code);
  attn::check_command_register(app, &exit_code);
  attn::status_command_register(app, &exit_code);
  attn::gradcheck_command_register(app, &exit_code);
  attn::job_command_register(app);
  attn::atomic_file_install_signal_cleanup();

  try {
    attn::isa_active();  // a bad ATTNLAB_ISA is an error before any work, not in the middle of it
    // Every command computes with subnormals flushed to zero (core/float_env.h), unless
    // ATTNLAB_SUBNORMALS=keep (a bad value: the usual one-line error, before any work).
    const attn::SubnormalsFlushed flush;
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = attn::cli_unknown_argument(app);
    if (!unknown.empty()) {
      std::fprintf(stderr, "attnlab: error: %s\n", unknown.c_str());
      return attn::kUserErrorExit;
    }
    std::fprintf(stderr, "attnlab: error: %s (see attnlab --help)\n", e.what());
    return attn::kUserErrorExit;
  } catch (const attn::UserError& e) {
    std::fprintf(stderr, "attnlab: error: %s\n", e.what());
    return attn::kUserErrorExit;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attnlab: error: out of memory; use a smaller size\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: internal error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
