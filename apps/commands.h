// The attnlab subcommands. Each registers its options on the CLI11 app and runs from the
// callback; errors are thrown (attn::UserError) and reported by main.cpp.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace attn {

void data_command_register(CLI::App& app);
void list_command_register(CLI::App& app);
void run_command_register(CLI::App& app);
void plot_command_register(CLI::App& app);
void export_command_register(CLI::App& app);
void merge_command_register(CLI::App& app);
void qk_stats_command_register(CLI::App& app);
void features_command_register(CLI::App& app);
void fit_command_register(CLI::App& app);
void predict_command_register(CLI::App& app);
// import-gpt2 and export-gpt2 (apps/cmd_gpt2.cpp).
void gpt2_command_register(CLI::App& app);
// Sets *exit_code to 1 when a claim fails.
void reproduce_command_register(CLI::App& app, int* exit_code);
// `attnlab check SPEC --out DIR` (apps/cmd_reproduce.cpp): exit codes as reproduce's.
void check_command_register(CLI::App& app, int* exit_code);
// `attnlab status DIR...`: sets *exit_code to 3 when a directory misses or failed runs.
void status_command_register(CLI::App& app, int* exit_code);
// Sets *exit_code to 1 when a gradient check fails.
void gradcheck_command_register(CLI::App& app, int* exit_code);
// attnlab _job (hidden): the job of Python's run()/reproduce() in a fresh process.
void job_command_register(CLI::App& app);

// Folders of experiments/ (groups for `attnlab reproduce`).
std::vector<std::string> shipped_experiment_groups();

}  // namespace attn
