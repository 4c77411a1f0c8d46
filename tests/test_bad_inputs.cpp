// The bad-input corpus: malformed inputs at every CLI entry point (flags and their values,
// --set values, specs, .npz files, safetensors files, output paths), one table row each.
// Every row must exit with code 2, print exactly one line that contains the row's expected
// text (the offending key, path or value), and leave the case's directory (the output
// location, also holding the case's input files) and the shared fixtures unchanged.
// The Python calls have their own corpus in tests/python/test_py_bad_inputs.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "experiment/report.h"
#include "io/npy.h"
#include "test_paths.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::cli_run;
using test::CliResult;
using test::file_read;
using test::file_write;

// The shared inputs (a valid dataset and a fitted model), written once by the suite.
std::string g_fixtures;

// `cd DIR && attnlab ARGS`: exit code and combined output.
CliResult cli_run_in(const fs::path& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.string() + "' && " + test_cli_path() + " " + args + " 2>&1";
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, got);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Every regular file below dir, relative path -> content (directories as "<dir>").
std::map<std::string, std::string> tree_snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_directory() ? "<dir>" : file_read(e.path().string());
  }
  return out;
}

// A safetensors file from a header text and raw data bytes.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string s(8, '\0');
  const uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) s[k] = static_cast<char>((n >> (8 * k)) & 0xff);
  return s + header + data;
}

// A dataset .npz with X (n, T, d) and Y (n, 1, 1), X[0, 0, 1] = bad_x and Y[0] = bad_y.
void dataset_with(const std::string& path, int64_t n, int64_t T, int64_t d, double bad_x,
                  double bad_y) {
  std::vector<double> X(static_cast<size_t>(n * T * d), 0.5), Y(static_cast<size_t>(n), 1.0);
  X[1] = bad_x;
  Y[0] = bad_y;
  npz_write(path, {{"X", DType::F64, {n, T, d}, X.data()}, {"Y", DType::F64, {n, 1, 1}, Y.data()}});
}

const char* kGoodSpec =
    "[experiment]\nname = \"bad_inputs\"\nseeds = 1\n[task]\nname = \"qsa\"\nN = 4\nq = 1\n"
    "[model]\nname = \"mean\"\n[train]\nn = 4\n[eval]\nn = 4\n";

// A numeric sweep axis, a trend claim without its `along`, a plot named "p".
const char* kClaimAxis = "[sweep]\n\"train.n\" = [4, 8]\n";
// kClaimAxis with a second swept key that [select] may choose among.
const std::string kSelectAxes = std::string(kClaimAxis) + "\"train.lr\" = [0.001, 0.01]\n";
const char* kClaim = "[[claim]]\ntype = \"increasing\"\nmetric = \"test_mse\"\ntext = \"t\"\n";
const char* kPlot = "[[plot]]\nname = \"p\"\nmetric = \"test_mse\"\nx = \"train.n\"\n";

// DIR/s0: a finished run of kGoodSpec (a shard's output directory), its spec in DIR/s.toml.
void stored_shard(const fs::path& d) {
  file_write((d / "s.toml").string(), kGoodSpec);
  ASSERT_EQ(
      test::cli_run("run " + (d / "s.toml").string() + " -q -o " + (d / "s0").string()).exit_code,
      0);
}

struct BadInput {
  std::string name;
  std::string args;      // after `attnlab`; {F} is the fixtures directory
  std::string expected;  // must appear in the one-line message
  std::function<void(const fs::path& dir)> setup = nullptr;  // writes the case's inputs
};

std::vector<BadInput> bad_input_corpus() {
  const double nan = std::nan(""), inf = INFINITY;
  auto text_file = [](const std::string& name, std::string text) {
    return [name, text](const fs::path& d) { file_write((d / name).string(), text); };
  };
  auto spec_file = [&](const std::string& extra) { return text_file("s.toml", kGoodSpec + extra); };
  auto st_file = [](const std::string& name, const std::string& header, const std::string& data) {
    return [=](const fs::path& d) {
      file_write((d / name).string(), safetensors_bytes(header, data));
    };
  };
  const std::string f64x4(32, '\0');
  const std::string tensor = "\"a\":{\"dtype\":\"F64\",\"shape\":[4],\"data_offsets\":[0,32]}";
  return {
      // Commands, flags and their values.
      {"unknown_command", "frobnicate", "unknown command 'frobnicate'"},
      {"misspelt_command", "dat --n 5", "did you mean 'data'"},
      {"unknown_top_flag", "--frob", "unknown option --frob"},
      {"unknown_option", "data qsa --num 100 -o o.npz", "unknown option --num"},
      {"seed_minus_one", "data qsa --n 5 --seed -1 -o o.npz", "--seed: '-1'"},
      {"seed_wraps_to_one", "data qsa --n 5 --seed -18446744073709551615 -o o.npz",
       "--seed: '-18446744073709551615'"},
      {"seed_too_large", "data qsa --n 5 --seed 99999999999999999999999 -o o.npz",
       "--seed: 99999999999999999999999 is too large"},
      {"seed_exponent", "data qsa --n 5 --seed 1e3 -o o.npz", "--seed: '1e3'"},
      {"seed_equals_negative", "data qsa --n 5 --seed=-7 -o o.npz", "--seed: '-7'"},
      {"n_negative", "data qsa --n -1 -o o.npz", "--n: '-1'"},
      {"n_zero", "data qsa --n 0 -o o.npz", "--n: 0 is too small"},
      {"n_saturates", "data qsa --n 99999999999999999999 -o o.npz", "--n: 99999999999999999999"},
      {"n_text", "data qsa --n many -o o.npz", "--n: 'many'"},
      {"first_negative", "data qsa --n 5 --first -1 -o o.npz", "--first: '-1'"},
      {"first_saturates", "data qsa --n 5 --first 99999999999999999999 -o o.npz", "--first"},
      {"chunk_zero", "data qsa --n 5 --chunk 0 -o o.npz", "--chunk: 0"},
      {"threads_too_many", "data qsa --n 5 --threads 2000 -o o.npz", "--threads: 2000"},
      {"threads_negative", "data qsa --n 5 --threads -1 -o o.npz", "--threads: '-1'"},
      {"unknown_task", "data nosuchtask --n 5 -o o.npz", "nosuchtask"},
      {"data_output_not_npz", "data qsa --n 5 -o o.txt", "-o o.txt"},
      {"fit_seed_negative", "fit mean --in {F}/qsa.npz --seed -1 --save m.safetensors",
       "--seed: '-1'"},
      {"features_seed_negative", "features --model rfa --in {F}/qsa.npz --seed -5 -o f.npz",
       "--seed: '-5'"},
      {"gradcheck_seed_negative", "gradcheck --seed -1", "--seed: '-1'"},
      {"qk_heads_negative", "qk-stats {F}/m.safetensors --heads -2", "--heads: '-2'"},
      {"qk_heads_zero", "qk-stats {F}/m.safetensors --heads 0", "--heads: 0"},
      {"qk_seed_negative", "qk-stats {F}/m.safetensors --seed -3", "--seed: '-3'"},
      {"run_jobs_zero", "run s.toml -o out -j 0", "--jobs: 0", spec_file("")},
      {"run_jobs_negative", "run s.toml -o out -j -4", "--jobs: '-4'", spec_file("")},
      {"run_threads_negative", "run s.toml -o out --threads -1", "--threads: '-1'", spec_file("")},
      {"reproduce_jobs_negative", "reproduce demo -j -1 -o out", "--jobs: '-1'"},
      {"list_unknown", "list nosuchthing", "nosuchthing"},
      // --set values.
      {"set_without_equals", "data qsa --n 5 --set task.q -o o.npz", "task.q"},
      {"set_unknown_key", "data qsa --n 5 --set task.nokey=3 -o o.npz", "nokey"},
      {"set_bad_value", "data qsa --n 5 --set task.q=abc -o o.npz", "abc"},
      {"set_wrong_section", "data qsa --n 5 --set model.width=1 -o o.npz", "model"},
      {"set_cross_rule", "data qsa --n 5 --set task.q=100 -o o.npz", "q"},
      {"fit_set_negative_lambda",
       "fit linear --in {F}/qsa.npz --set model.lambda=-1 --save m.safetensors", "lambda"},
      {"fit_set_too_many_samples",
       "fit mean --in {F}/qsa.npz --set train.n=100000 --save m.safetensors", "train.n"},
      {"fit_set_unknown_section", "fit mean --in {F}/qsa.npz --set foo.bar=1 --save m.safetensors",
       "foo"},
      {"run_set_bad_value", "run s.toml -o out --set task.N=abc", "task.N", spec_file("")},
      {"run_set_unknown_key", "run s.toml -o out --set task.nokey=1", "nokey", spec_file("")},
      {"run_set_negative_seeds", "run s.toml -o out --set experiment.seeds=-1", "seeds",
       spec_file("")},
      // Specs.
      {"spec_missing", "run missing.toml -o out", "missing.toml"},
      {"spec_not_toml", "run s.toml -o out", "s.toml", text_file("s.toml", "[experiment\nname = ")},
      {"spec_negative_seed", "run s.toml -o out", "seeds",
       text_file("s.toml", std::string(kGoodSpec).replace(std::string(kGoodSpec).find("seeds = 1"),
                                                          9, "seeds = [-1]"))},
      {"spec_unknown_task", "run s.toml -o out", "nosuchtask",
       text_file("s.toml", std::string(kGoodSpec).replace(std::string(kGoodSpec).find("\"qsa\""), 5,
                                                          "\"nosuchtask\""))},
      {"spec_unknown_sweep_key", "run s.toml -o out", "task.nokey",
       spec_file("[sweep]\n\"task.nokey\" = [1, 2]\n")},
      {"spec_bad_sweep_value", "run s.toml -o out", "task.N",
       spec_file("[sweep]\n\"task.N\" = [\"x\", 8]\n")},
      {"spec_duplicate_run", "run s.toml -o out", "same configuration",
       spec_file("[sweep]\n\"task.N\" = [4, 4]\n")},
      // Claims and plots that could not be judged or drawn as written (issue #34, item 3).
      {"claim_id_twice", "run s.toml -o out", "claim id 'c' is used twice",
       spec_file(kClaimAxis + std::string(kClaim) + "along = \"train.n\"\nid = \"c\"\n" + kClaim +
                 "along = \"train.n\"\nid = \"c\"\n")},
      {"claim_along_seed", "run s.toml -o out", "seeds are the replicates",
       spec_file(kClaimAxis + std::string(kClaim) + "along = \"seed\"\n")},
      {"claim_along_not_swept", "run s.toml -o out", "along = \"task.N\" is not a swept key",
       spec_file(kClaimAxis + std::string(kClaim) + "along = \"task.N\"\n")},
      {"claim_along_text_axis", "run s.toml -o out", "takes the value mean, not a number",
       spec_file("[sweep]\n\"model.name\" = [\"mean\", \"linear\"]\n" + std::string(kClaim) +
                 "along = \"model.name\"\n")},
      {"claim_margin_inf", "run s.toml -o out", "claim.margin = inf must be a finite number",
       spec_file(kClaimAxis + std::string("[[claim]]\ntype = \"power_law\"\nmetric = \"m\"\n"
                                          "text = \"t\"\nalong = \"train.n\"\nexponent = 1\n"
                                          "margin = inf\n"))},
      // [select]: selection on validation (issue #31, item 1).
      {"select_axis_not_swept", "run s.toml -o out", "select.axes: \"task.N\" is not a swept key",
       spec_file(kClaimAxis + std::string("[select]\naxes = [\"task.N\"]\n"))},
      {"select_by_test_metric", "run s.toml -o out",
       "select.by = \"test_mse\" is a test metric: selection never looks at test data",
       spec_file(kSelectAxes +
                 std::string("[select]\naxes = [\"train.lr\"]\nby = \"test_mse\"\n"))},
      {"select_by_train_metric", "run s.toml -o out",
       "select.by = \"train_mse\" is a training metric",
       spec_file(kSelectAxes +
                 std::string("[select]\naxes = [\"train.lr\"]\nby = \"train_mse\"\n"))},
      {"select_by_not_validation", "run s.toml -o out",
       "select.by = \"fit_seconds\" is not a validation metric",
       spec_file(kSelectAxes +
                 std::string("[select]\naxes = [\"train.lr\"]\nby = \"fit_seconds\"\n"))},
      {"select_budget_zero", "run s.toml -o out",
       "select.max_params must be a number of parameters > 0",
       spec_file(kSelectAxes + std::string("[select]\naxes = [\"train.lr\"]\nmax_params = 0\n"))},
      {"select_unknown_key", "run s.toml -o out", "unknown key 'axis' in [select]",
       spec_file(kClaimAxis + std::string("[select]\naxis = [\"train.n\"]\n"))},
      {"select_part_of_zip", "run s.toml -o out",
       "vary together in a [[sweep.zip]] group; select all of them or none",
       spec_file("[[sweep.zip]]\n\"train.lr\" = [0.001, 0.01]\n\"train.steps\" = [4, 8]\n"
                 "[select]\naxes = [\"train.lr\"]\n")},
      {"select_claim_along_selected_axis", "run s.toml -o out",
       "along names \"train.lr\", which [select] chooses on validation per seed",
       spec_file(kSelectAxes + std::string("[select]\naxes = [\"train.lr\"]\n") + kClaim +
                 "along = \"train.lr\"\n")},
      {"select_claim_where_selected_axis", "run s.toml -o out",
       "where names \"train.lr\", which [select] chooses on validation per seed",
       spec_file(kSelectAxes + std::string("[select]\naxes = [\"train.lr\"]\n[[claim]]\n"
                                          "type = \"below\"\nmetric = \"test_mse\"\n"
                                          "text = \"t\"\nthreshold = 1\n"
                                          "where = { \"train.lr\" = 0.001 }\n"))},
      {"select_axis_changes_validation_data", "run s.toml -o out",
       "select.axes: \"train.n\" changes the data or the loss the validation metric is measured on",
       spec_file(kClaimAxis + std::string("[select]\naxes = [\"train.n\"]\n"))},
      {"select_axis_task_key", "run s.toml -o out",
       "select.axes: \"task.N\" changes the data or the loss the validation metric is measured on",
       spec_file("[sweep]\n\"task.N\" = [4, 8]\n[select]\naxes = [\"task.N\"]\n")},
      {"plot_name_twice", "run s.toml -o out", "plot name 'p' is used twice",
       spec_file(kClaimAxis + std::string(kPlot) + kPlot)},
      {"plot_threshold_nan", "run s.toml -o out", "plot.threshold = nan must be a finite number",
       spec_file(kClaimAxis + std::string("[[plot]]\nkind = \"size_needed\"\nmetric = \"m\"\n"
                                          "x = \"train.n\"\nsize = \"train.n\"\n"
                                          "threshold = nan\n"))},
      // A ridge rule broken at one point of the grid is refused when the spec is planned,
      // naming the point (issue #34, item 7: it failed 72 runs at run time).
      {"spec_empty_lambda_list_in_a_sweep", "run s.toml -o out",
       "train.lambdas is empty; give at least one λ, e.g. [1e-3] (at train.lambdas = [])",
       text_file("s.toml",
                 "[experiment]\nname = \"bad_inputs\"\nseeds = 1\n[task]\nname = \"rf_target\"\n"
                 "N = 4\nd = 4\n[model]\nname = \"rfa\"\nheads = 4\n[train]\nn = 8\n"
                 "val_fraction = 0.25\n[eval]\nn = 8\n[sweep]\n\"train.lambdas\" = [[1e-3, 1e-2], "
                 "[]]\n")},
      {"spec_absurd_grid", "run s.toml -o out", "runs (sweep.",
       [](const fs::path& d) {
         std::string list = "[";
         for (int k = 1; k <= 4000; ++k) list += (k > 1 ? ", " : "") + std::to_string(k);
         list += "]";
         file_write((d / "s.toml").string(), std::string(kGoodSpec) + "[sweep]\n\"train.n\" = " +
                                                 list + "\n\"eval.n\" = " + list + "\n");
       }},
      {"spec_eval_overlaps_train", "run s.toml -o out --set eval.first=1", "eval.first",
       spec_file("")},
      {"spec_min_delta_without_patience", "run s.toml -o out", "set train.patience",
       text_file("s.toml",
                 "[experiment]\nname = \"bad_inputs\"\nseeds = 1\n[task]\nname = \"qsa\"\nN = 4\n"
                 "q = 1\n[model]\nname = \"attention\"\n[train]\nn = 0\nsteps = 2\n"
                 "min_delta = 0.01\n[eval]\nn = 4\n")},
      // Output paths.
      {"output_on_proc", "data qsa --n 5 -o /proc/x.npz", "/proc"},
      {"output_dir_missing", "data qsa --n 5 -o nodir/x.npz", "nodir"},
      {"output_is_directory", "data qsa --n 5 -o sub.npz", "sub.npz",
       [](const fs::path& d) { fs::create_directory(d / "sub.npz"); }},
      {"output_under_a_file", "data qsa --n 5 -o plain/x.npz", "plain", text_file("plain", "x")},
      {"output_empty", "data qsa --n 5 -o ''", "-o"},
      {"fit_save_not_safetensors", "fit mean --in {F}/qsa.npz --save m.bin", "--save m.bin"},
      {"predict_output_not_npz", "predict --model {F}/m.safetensors --in {F}/qsa.npz -o p.txt",
       "-o p.txt"},
      {"predict_output_on_proc",
       "predict --model {F}/m.safetensors --in {F}/qsa.npz -o /proc/p.npz", "/proc"},
      // .npz / .npy files.
      {"npz_missing", "fit mean --in missing.npz --save m.safetensors", "missing.npz"},
      {"npz_empty_file", "fit mean --in e.npz --save m.safetensors", "e.npz",
       text_file("e.npz", "")},
      {"npz_garbage", "fit mean --in g.npz --save m.safetensors", "g.npz",
       text_file("g.npz", "not a zip file at all")},
      {"npz_truncated", "fit mean --in t.npz --save m.safetensors", "t.npz",
       [](const fs::path& d) {
         const std::string full = file_read(g_fixtures + "/qsa.npz");
         file_write((d / "t.npz").string(), full.substr(0, full.size() / 2));
       }},
      {"npz_nan_in_x", "fit linear --in nan.npz --save m.safetensors", "nan.npz: X holds NaN",
       [=](const fs::path& d) { dataset_with((d / "nan.npz").string(), 4, 1, 2, nan, 1.0); }},
      {"npz_inf_in_x", "fit linear --in inf.npz --save m.safetensors", "inf.npz: X holds inf",
       [=](const fs::path& d) { dataset_with((d / "inf.npz").string(), 4, 1, 2, inf, 1.0); }},
      {"npz_nan_in_y", "fit mean --in y.npz --save m.safetensors", "y.npz: Y holds NaN",
       [=](const fs::path& d) { dataset_with((d / "y.npz").string(), 4, 1, 2, 0.0, nan); }},
      {"npz_inf_features", "features --model rfa --in inf.npz -o f.npz", "inf.npz: X holds -inf",
       [=](const fs::path& d) { dataset_with((d / "inf.npz").string(), 4, 1, 2, -inf, 1.0); }},
      {"npz_no_x", "fit mean --in nox.npz --save m.safetensors", "no array 'X'",
       [](const fs::path& d) {
         const double y[1] = {1.0};
         npz_write((d / "nox.npz").string(), {{"Y", DType::F64, {1, 1, 1}, y}});
       }},
      {"npz_x_two_dims", "fit mean --in x2.npz --save m.safetensors", "x2.npz",
       [](const fs::path& d) {
         const double v[2] = {1.0, 2.0};
         npz_write((d / "x2.npz").string(),
                   {{"X", DType::F64, {1, 2}, v}, {"Y", DType::F64, {1, 1, 1}, v}});
       }},
      {"npz_meta_number", "fit mean --in mn.npz --save m.safetensors", "'meta'",
       [](const fs::path& d) {
         const double v[4] = {1.0, 2.0, 3.0, 4.0};
         npz_write((d / "mn.npz").string(), {{"X", DType::F64, {2, 1, 1}, v},
                                             {"Y", DType::F64, {2, 1, 1}, v},
                                             {"meta", DType::F64, {}, v}});
       }},
      {"npz_meta_not_json", "fit mean --in mj.npz --save m.safetensors", "'meta'",
       [](const fs::path& d) {
         const double v[4] = {1.0, 2.0, 3.0, 4.0};
         const std::u32string meta = U"{not json";
         npz_write((d / "mj.npz").string(), {{"X", DType::F64, {2, 1, 1}, v},
                                             {"Y", DType::F64, {2, 1, 1}, v},
                                             npy_text("meta", meta)});
       }},
      {"predict_wrong_shape", "predict --model {F}/m.safetensors --in w.npz -o p.npz",
       "X has shape",
       [=](const fs::path& d) { dataset_with((d / "w.npz").string(), 4, 1, 2, 0.0, 1.0); }},
      {"predict_nan", "predict --model {F}/m.safetensors --in pn.npz -o p.npz",
       "pn.npz: X holds NaN",
       [](const fs::path& d) {
         auto entries = npz_read(g_fixtures + "/qsa.npz");
         std::vector<double> X = entries.at("X").to_f64();
         X[3] = std::nan("");
         npz_write((d / "pn.npz").string(), {{"X", DType::F64, entries.at("X").shape, X.data()}});
       }},
      // safetensors files.
      {"st_missing", "predict --model missing.safetensors --in {F}/qsa.npz -o p.npz",
       "missing.safetensors"},
      {"st_empty", "qk-stats e.safetensors --heads 1", "e.safetensors",
       text_file("e.safetensors", "")},
      {"st_garbage", "predict --model g.safetensors --in {F}/qsa.npz -o p.npz", "g.safetensors",
       text_file("g.safetensors", "garbage, not a model file")},
      {"st_header_too_long", "qk-stats h.safetensors --heads 1", "header length",
       [](const fs::path& d) {
         std::string bytes(8, '\0');
         bytes[5] = 1;  // a header length of 2^40 bytes
         file_write((d / "h.safetensors").string(), bytes + "{}");
       }},
      {"st_header_not_json", "qk-stats j.safetensors --heads 1", "JSON",
       st_file("j.safetensors", "{\"a\": nope}", "")},
      {"st_repeated_name", "qk-stats r.safetensors --heads 1", "\"a\" twice",
       st_file("r.safetensors", "{" + tensor + "," + tensor + "}", f64x4)},
      {"st_repeated_metadata", "qk-stats r.safetensors --heads 1", "\"__metadata__\" twice",
       st_file("r.safetensors", "{\"__metadata__\":{},\"__metadata__\":{}," + tensor + "}", f64x4)},
      {"st_metadata_number", "qk-stats r.safetensors --heads 1", "must be a string",
       st_file("r.safetensors", "{\"__metadata__\":{\"k\":3}," + tensor + "}", f64x4)},
      {"st_offsets_past_end", "qk-stats r.safetensors --heads 1", "data_offsets",
       st_file("r.safetensors", "{\"a\":{\"dtype\":\"F64\",\"shape\":[4],\"data_offsets\":[0,64]}}",
               f64x4)},
      {"st_truncated", "predict --model t.safetensors --in {F}/qsa.npz -o p.npz", "t.safetensors",
       [](const fs::path& d) {
         const std::string full = file_read(g_fixtures + "/m.safetensors");
         file_write((d / "t.safetensors").string(), full.substr(0, full.size() - 9));
       }},
      {"st_not_a_model", "predict --model r.safetensors --in {F}/qsa.npz -o p.npz", "r.safetensors",
       st_file("r.safetensors", "{" + tensor + "}", f64x4)},
      // Other files and directories.
      {"features_not_rf_model", "features --model linear --in {F}/qsa.npz -o f.npz", "linear"},
      {"plot_missing_dir", "plot nosuchdir", "nosuchdir"},
      {"merge_missing_shards", "merge out nosuch1 nosuch2", "nosuch1"},
      {"reproduce_unknown_group", "reproduce nosuchgroup -o out", "nosuchgroup"},
      {"reproduce_empty_group", "reproduce '' -o out", "no shipped experiments named ''"},
      {"reproduce_path_as_group", "reproduce ../experiments/demo --report-only -o out",
       "no shipped experiments named '../experiments/demo'"},
      {"reproduce_misspelt_group", "reproduce dmeo -o out", "(did you mean 'demo'?)"},
      // Output paths that are files or one of the inputs (issue #34, item 5).
      {"merge_out_is_a_file", "merge afile s0", "afile exists and is not a directory",
       [](const fs::path& d) {
         stored_shard(d);
         file_write((d / "afile").string(), "x");
       }},
      {"merge_out_is_a_shard", "merge s0 s0", "s0 is also one of the shards", stored_shard},
      {"reproduce_out_is_a_file", "reproduce demo --report-only --out afile",
       "afile exists and is not a directory", text_file("afile", "x")},
      // Files of the output directory that are not attnlab's to replace (issue #34, item 7).
      {"run_results_csv_is_a_directory", "run s.toml -o out",
       "out/results.csv is a directory; attnlab writes that file there",
       [&](const fs::path& d) {
         spec_file("")(d);
         fs::create_directories(d / "out" / "results.csv");
       }},
      {"reproduce_into_another_groups_report", "reproduce demo --report-only --out out",
       "out holds the report of group fu2023; reproduce demo into another output directory",
       [&](const fs::path& d) {
         fs::create_directories(d / "out");
         text_file("out/reproduce.json", R"({"name": "fu2023", "sections": []})")(d);
       }},
  };
}

class BadInputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("attnlab_bad_inputs_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "fixtures");
    g_fixtures = (root_ / "fixtures").string();
    ASSERT_EQ(cli_run("data qsa --n 8 --seed 0 --set task.N=4 --set task.q=1 -q -o " + g_fixtures +
                      "/qsa.npz")
                  .exit_code,
              0);
    ASSERT_EQ(cli_run("fit mean --in " + g_fixtures + "/qsa.npz -q --save " + g_fixtures +
                      "/m.safetensors")
                  .exit_code,
              0);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static inline fs::path root_;
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The code of the row of docs/reliability.md's exit-code table whose meaning starts with
// `meaning` (-1 when no row does).
int documented_exit_code(const std::string& meaning) {
  const std::string doc = file_read((fs::path(test_source_dir()) / "docs/reliability.md").string());
  const size_t table = doc.find("| code | meaning |");
  if (table == std::string::npos) return -1;
  std::istringstream lines(doc.substr(table));
  std::string line;
  while (std::getline(lines, line) && !line.empty() && line[0] == '|') {
    const size_t bar = line.find(" | ");
    if (bar == std::string::npos || line.compare(bar + 3, meaning.size(), meaning) != 0) continue;
    const std::string code = line.substr(2, bar - 2);
    if (code.find_first_not_of("0123456789") == std::string::npos) return std::stoi(code);
  }
  return -1;
}

TEST(ExitCodes, TheExitCodeTableIsTheOneTheCodeUses) {
  EXPECT_EQ(documented_exit_code("bad input"), kUserErrorExit);
  EXPECT_EQ(documented_exit_code("success"), 0);
  EXPECT_EQ(documented_exit_code("an internal fault"), 1);
  // reproduce's codes come from its claim counts (report.h).
  EXPECT_EQ(report_exit_code(ReportCounts{.total = 2, .pass = 2}), documented_exit_code("success"));
  EXPECT_EQ(report_exit_code(ReportCounts{.total = 2, .pass = 1, .fail = 1}),
            documented_exit_code("an internal fault"));
  EXPECT_EQ(report_exit_code(ReportCounts{.total = 2, .pass = 1, .inconclusive = 1}),
            documented_exit_code("`reproduce`: no claim failed, some were inconclusive"));
  // A command with an unknown flag is bad input by the CLI's own mapping.
  EXPECT_EQ(cli_run("run --no-such-flag").exit_code, documented_exit_code("bad input"));
}

TEST_F(BadInputs, EveryRowExitsTwoWithOneLineAndWritesNothing) {
  const std::vector<BadInput> corpus = bad_input_corpus();
  std::printf("[ corpus   ] %zu malformed CLI inputs\n", corpus.size());
  ASSERT_GE(corpus.size(), 60u);
  const auto fixtures_before = tree_snapshot(g_fixtures);
  std::map<std::string, int> names;
  for (const auto& row : corpus) {
    SCOPED_TRACE(row.name + ": attnlab " + row.args);
    EXPECT_EQ(++names[row.name], 1) << "row names must be unique";
    const fs::path dir = root_ / row.name;
    fs::create_directories(dir);
    if (row.setup) row.setup(dir);
    const auto before = tree_snapshot(dir);
    const std::string args = replace_all(row.args, "{F}", g_fixtures);
    const CliResult r = cli_run_in(dir, args);
    EXPECT_EQ(r.exit_code, documented_exit_code("bad input")) << r.out;
    EXPECT_NE(r.out.find(row.expected), std::string::npos) << "message: " << r.out;
    const bool one_line =
        !r.out.empty() && r.out.back() == '\n' && r.out.find('\n') == r.out.size() - 1;
    EXPECT_TRUE(one_line) << "not one line: " << r.out;
    EXPECT_EQ(tree_snapshot(dir), before) << "the case's directory changed";
  }
  EXPECT_EQ(tree_snapshot(g_fixtures), fixtures_before) << "the fixtures changed";
}

}  // namespace
}  // namespace attn
