// Inspecting and keeping models: `attnlab features` writes exactly the features the models
// use; fit -> save -> load -> predict gives the in-memory model's predictions bit for bit
// for every registered model; altered files are refused; every user error is one line,
// exit 2, and writes nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "core/error.h"
#include "io/dataset_file.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "models/model_io.h"
#include "models/rf_models.h"
#include "tasks/task.h"
#include "models/ridge_model.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// Small rf_target data: N = 4 keys, d = 3.
Batch rf_data(int64_t first, int64_t n, uint64_t seed = 1) {
  Params p = task_default_params("rf_target");
  p.set_text("N", "4");
  p.set_text("d", "3");
  const auto task = task_make("rf_target", p);
  return task_generate(*task, seed, first, n);
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("attnlab_model_io_" + std::to_string(getpid()) + "_" +
                                        info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }

  // Writes rf_target data files with the CLI: train.npz (n = 120), test.npz (n = 40).
  void write_rf_data() {
    const std::string sets = " --set task.N=4 --set task.d=3 -q ";
    ASSERT_EQ(test::cli_run("data rf_target --n 120 --seed 1" + sets + "-o " + path("train.npz"))
                  .exit_code,
              0);
    ASSERT_EQ(test::cli_run("data rf_target --n 40 --seed 1 --first 5000" + sets + "-o " +
                            path("test.npz"))
                  .exit_code,
              0);
  }

  // A command that must fail as a user error: exit 2, one line naming `needle`, and no
  // file added to the directory (neither a target nor a temp file).
  void expect_user_error(const std::string& args, const std::string& needle) {
    const auto before = listing();
    const test::CliResult r = test::cli_run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "not one line: " << r.out;
    EXPECT_EQ(listing(), before) << args << " wrote a file";
  }

  fs::path dir_;
};

// Params small enough for fast tests.
ModelRecord small_record(const std::string& model, const TaskShape& shape, uint64_t seed = 7) {
  ModelRecord r = model_record_make(model, seed, shape);
  if (rf_is_feature_model(model)) r.model_params.set_text("heads", "6");
  r.train_params.set("n", ParamValue(int64_t{120}));
  return r;
}

// Rewrites a safetensors file with one metadata value or one tensor value changed.
void rewrite(const std::string& from, const std::string& to, const std::string& meta_key,
             const std::string& meta_value, const std::string& tensor, double delta) {
  SafetensorsFile f(from);
  std::map<std::string, std::string> md = f.metadata();
  if (!meta_key.empty()) md[meta_key] = meta_value;
  std::vector<std::vector<double>> data;
  for (const auto& e : f.entries()) data.push_back(f.read_f64(e.name));
  std::vector<SafetensorsView> views;
  for (size_t k = 0; k < f.entries().size(); ++k) {
    const auto& e = f.entries()[k];
    if (e.name == tensor) data[k][0] += delta;
    views.push_back({e.name, SafetensorsDType::F64, e.shape, data[k].data()});
  }
  safetensors_write(to, views, md);
}

// ---------------------------------------------------------------------------- ModelIo

using ModelIo = TempDir;

TEST_F(ModelIo, SaveLoadPredictsBitForBitForEveryModel) {
  const Batch train = rf_data(0, 120), test = rf_data(5000, 40);
  for (const auto& info : model_registry()) {
    SCOPED_TRACE(info.name);
    // Constructions need their own tasks (qsa, Match); test_constructions.cpp round-trips them.
    if (info.no_training) continue;
    const ModelRecord r = small_record(info.name, train.shape);
    auto model = model_make(r);
    FitLog log;
    model->fit(train, log);
    const std::vector<double> expected = model->predict(test);
    const std::string file = path(info.name + ".safetensors");
    model_save(file, r, *model);

    const LoadedModel loaded = model_load(file);
    EXPECT_EQ(loaded.record.model, info.name);
    EXPECT_EQ(loaded.record.seed, r.seed);
    EXPECT_EQ(loaded.record.model_params.to_json(), r.model_params.to_json());
    EXPECT_EQ(loaded.record.train_params.to_json(), r.train_params.to_json());
    EXPECT_EQ(loaded.record.shape.T, train.shape.T);
    EXPECT_EQ(loaded.record.shape.d_in, train.shape.d_in);
    EXPECT_TRUE(same_bits(loaded.model->predict(test), expected));
    // Saving the loaded model again gives the same file.
    model_save(path("again.safetensors"), loaded.record, *loaded.model);
    EXPECT_EQ(test::file_read(path("again.safetensors")), test::file_read(file));
  }
}

TEST_F(ModelIo, DualAndRefitReadoutsRoundTrip) {
  const Batch train = rf_data(0, 120), test = rf_data(5000, 40);
  struct Case {
    std::string model, key, value;
  };
  for (const Case& c : {Case{"rfa", "solver", "dual"}, Case{"rfmlp", "refit", "true"},
                        Case{"rfa_kernel", "refit", "true"}, Case{"rfa", "refit", "true"}}) {
    SCOPED_TRACE(c.model + " train." + c.key + "=" + c.value);
    ModelRecord r = small_record(c.model, train.shape);
    r.train_params.set_text(c.key, c.value);
    auto model = model_make(r);
    FitLog log;
    model->fit(train, log);
    model_save(path("m.safetensors"), r, *model);
    EXPECT_TRUE(same_bits(model_load(path("m.safetensors")).model->predict(test),
                          model->predict(test)));
  }
}

TEST_F(ModelIo, FileLayoutOfAFeatureModel) {
  const Batch train = rf_data(0, 120);
  const ModelRecord r = small_record("rfa", train.shape);
  auto model = model_make(r);
  FitLog log;
  model->fit(train, log);
  model_save(path("rfa.safetensors"), r, *model, {{"train_data", "{}"}});
  SafetensorsFile f(path("rfa.safetensors"));
  const auto* W = f.find("W");
  ASSERT_NE(W, nullptr);
  EXPECT_EQ(W->shape, (std::vector<int64_t>{6, 4, 4}));
  EXPECT_EQ(W->dtype, SafetensorsDType::F64);
  EXPECT_EQ(f.find("V")->shape, (std::vector<int64_t>{24, 1}));
  EXPECT_EQ(f.find("y_mean")->shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(f.find("lambda")->shape, (std::vector<int64_t>{}));
  const RidgeSolver& ridge = dynamic_cast<const RidgeModel&>(*model).solver();
  EXPECT_TRUE(same_bits(f.read_f64("V"), ridge.readout()));
  EXPECT_EQ(f.read_f64("lambda")[0], ridge.chosen_lambda());
  const auto& rfa = dynamic_cast<const RfaFeatures&>(*ridge.feature_map());
  EXPECT_TRUE(same_bits(f.read_f64("W"), rfa.weights()));
  const auto& md = f.metadata();
  EXPECT_EQ(md.at("format"), "attnlab.model");
  EXPECT_EQ(md.at("model"), "rfa");
  EXPECT_EQ(md.at("seed"), "7");
  EXPECT_EQ(md.at("n_train"), "120");
  EXPECT_EQ(md.at("train_data"), "{}");
  EXPECT_NE(md.at("model_params").find("\"heads\": 6"), std::string::npos);
  EXPECT_NE(md.at("shape").find("\"T\": 5"), std::string::npos);
}

// Rewrites a safetensors file with tensor `from_tensor` renamed to `to_tensor` and set to
// `value` (e.g. to write a model the way the previous release did).
void rewrite_tensor(const std::string& from, const std::string& to, const std::string& from_tensor,
                    const std::string& to_tensor, double value) {
  SafetensorsFile f(from);
  std::vector<std::vector<double>> data;
  std::vector<std::string> names;
  for (const auto& e : f.entries()) {
    data.push_back(e.name == from_tensor ? std::vector<double>{value} : f.read_f64(e.name));
    names.push_back(e.name == from_tensor ? to_tensor : e.name);
  }
  std::vector<SafetensorsView> views;
  for (size_t k = 0; k < f.entries().size(); ++k)
    views.push_back({names[k], SafetensorsDType::F64, f.entries()[k].shape, data[k].data()});
  safetensors_write(to, views, f.metadata());
}

// A neural model records its loss by name ("meta.loss.<name>"); a file written the previous
// release's way ("meta.loss_bce" = 1 or 0) loads with the same loss.
TEST_F(ModelIo, NeuralModelsRecordTheLossByNameAndReadThePreviousReleasesFiles) {
  Params match = task_default_params("match2");
  match.set_text("N", "5");
  const auto match_task = task_make("match2", match);
  struct Case {
    std::string loss;
    Batch train, test;
  };
  const Case cases[] = {
      {"bce", task_generate(*match_task, 1, 0, 120), task_generate(*match_task, 1, 5000, 20)},
      {"mse", rf_data(0, 120), rf_data(5000, 20)}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.loss);
    ModelRecord r = small_record("mlp", c.train.shape);
    r.train_params.set_text("steps", "5");
    auto model = model_make(r);
    FitLog log;
    model->fit(c.train, log);  // the record's shape declares no kind: inferred from the targets
    const std::vector<double> expected = model->predict(c.test);
    model_save(path("new.safetensors"), r, *model);
    SafetensorsFile f(path("new.safetensors"));
    ASSERT_NE(f.find("meta.loss." + c.loss), nullptr);
    EXPECT_EQ(f.find("meta.loss_bce"), nullptr);
    EXPECT_TRUE(same_bits(model_load(path("new.safetensors")).model->predict(c.test), expected));

    rewrite_tensor(path("new.safetensors"), path("old.safetensors"), "meta.loss." + c.loss,
                   "meta.loss_bce", c.loss == "bce" ? 1.0 : 0.0);
    SafetensorsFile old(path("old.safetensors"));
    ASSERT_NE(old.find("meta.loss_bce"), nullptr);
    EXPECT_TRUE(same_bits(model_load(path("old.safetensors")).model->predict(c.test), expected));
    if (c.loss == "bce") {
      for (double p : expected) ASSERT_TRUE(p > 0 && p < 1) << "bce predicts probabilities";
    }
  }
  rewrite_tensor(path("new.safetensors"), path("bad.safetensors"), "meta.loss.mse",
                 "meta.loss.hinge", 1.0);
  try {
    model_load(path("bad.safetensors"));
    FAIL() << "no error for an unknown loss";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown loss 'hinge'"), std::string::npos) << e.what();
  }
}

TEST_F(ModelIo, AlteredFilesAreRefused) {
  const Batch train = rf_data(0, 120);
  for (const std::string model : {"rfa", "rfmlp"}) {
    SCOPED_TRACE(model);
    const ModelRecord r = small_record(model, train.shape);
    auto m = model_make(r);
    FitLog log;
    m->fit(train, log);
    const std::string file = path(model + ".safetensors");
    model_save(file, r, *m);
    const std::string weights = model == "rfa" ? "W" : "w";
    // Another seed redraws other weights.
    rewrite(file, path("seed.safetensors"), "seed", "8", "", 0);
    try {
      model_load(path("seed.safetensors"));
      ADD_FAILURE() << "a changed seed was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + weights + "' in the file differ"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("seed.safetensors"), std::string::npos) << e.what();
    }
    // One changed weight.
    rewrite(file, path("w.safetensors"), "", "", weights, 1e-12);
    EXPECT_THROW(model_load(path("w.safetensors")), UserError);
    // Changed params (other heads: other weights shape).
    rewrite(file, path("p.safetensors"), "model_params",
            model == "rfa" ? "{\"heads\": 5}" : "{\"heads\": 6, \"width\": 23}", "", 0);
    EXPECT_THROW(model_load(path("p.safetensors")), UserError);
    // Unchanged copy loads.
    rewrite(file, path("same.safetensors"), "", "", "", 0);
    EXPECT_NO_THROW(model_load(path("same.safetensors")));
  }
}

TEST_F(ModelIo, RefusesFilesThatAreNotModels) {
  const std::vector<double> a{1, 2};
  safetensors_write(path("plain.safetensors"), {{"a", SafetensorsDType::F64, {2}, a.data()}});
  EXPECT_THROW(model_load(path("plain.safetensors")), UserError);
  safetensors_write(path("unknown.safetensors"), {{"a", SafetensorsDType::F64, {2}, a.data()}},
                    {{"format", "attnlab.model"},
                     {"format_version", "1"},
                     {"model", "rfaa"},
                     {"seed", "0"},
                     {"shape", "{\"T\": 5, \"d_in\": 3, \"T_out\": 1, \"d_out\": 1}"},
                     {"model_params", "{}"},
                     {"train_params", "{}"}});
  try {
    model_load(path("unknown.safetensors"));
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'rfa'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model_load(path("missing.safetensors")), IoError);
}

TEST_F(ModelIo, AModelWithoutSaveSaysSo) {
  struct Plain final : Model {
    void fit(const Batch&, FitLog&) override {}
    std::vector<double> predict(const Batch&) const override { return {}; }
  } plain;
  ModelRecord r = model_record_make("mean", 0, rf_data(0, 1).shape);
  r.model = "plain";
  try {
    model_save(path("plain.safetensors"), r, plain);
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "model plain cannot be saved yet");
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(ModelIo, LoadedRidgeModelPredictsButDoesNotEvaluate) {
  const Batch train = rf_data(0, 120), test = rf_data(5000, 40);
  const ModelRecord r = small_record("rfa", train.shape);
  auto model = model_make(r);
  FitLog log;
  model->fit(train, log);
  model_save(path("rfa.safetensors"), r, *model);
  const LoadedModel loaded = model_load(path("rfa.safetensors"));
  EXPECT_THROW(loaded.model->evaluate(test, log), UserError);
  const RidgeSolver& ridge = dynamic_cast<const RidgeModel&>(*loaded.model).solver();
  EXPECT_EQ(ridge.chosen_lambda(),
            dynamic_cast<const RidgeModel&>(*model).solver().chosen_lambda());
  EXPECT_TRUE(
      same_bits(ridge.label_mean(), dynamic_cast<const RidgeModel&>(*model).solver().label_mean()));
}

TEST_F(ModelIo, FeatureMapFactoryMatchesTheModels) {
  const TaskShape shape = rf_data(0, 1).shape;
  Params p("model", brfa_schema());
  p.set_text("mean_scale", "0.5");
  const RfaConfig c = rfa_config_from(p, "brfa", shape.d_in);
  EXPECT_EQ(c.w_mean, 0.5 * std::sqrt(3.0));
  Params q("model", rfmlp_schema());
  q.set_text("heads", "5");
  EXPECT_EQ(rfmlp_config_from(q, shape.d_in).width, 5 * 4);
  q.set_text("augment", "false");
  EXPECT_EQ(rfmlp_config_from(q, shape.d_in).width, 5 * 3);
  for (const std::string model : {"rfa_kernel", "mean", "linear"})
    EXPECT_THROW(rf_feature_map_make(model, Params("model", model_find(model).schema()), shape, 0),
                 UserError);
}

// ---------------------------------------------------------------------- FeaturesCommand

using FeaturesCommand = TempDir;

TEST_F(FeaturesCommand, EqualsRfaFeaturesOnTheSameData) {
  write_rf_data();
  const test::CliResult r =
      test::cli_run("features --model rfa --set model.heads=6 --seed 3 --in " + path("train.npz") +
                    " -o " + path("f.npz"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("W (6, 4, 4)  Phi (120, 24)"), std::string::npos) << r.out;
  const Batch data = dataset_read(path("train.npz"), nullptr);
  Params p("model", rfa_schema());
  p.set_text("heads", "6");
  const RfaFeatures features(rfa_config_from(p, "rfa", 3), data.shape.T, data.shape.d_in, 3);
  std::vector<double> Phi(static_cast<size_t>(data.n * features.dim()));
  features.features(data.X.data(), data.n, Phi.data());

  auto z = npz_read(path("f.npz"));
  EXPECT_EQ(z["Phi"].shape, (std::vector<int64_t>{120, 24}));
  EXPECT_EQ(z["W"].shape, (std::vector<int64_t>{6, 4, 4}));
  EXPECT_TRUE(same_bits(z["Phi"].to_f64(), Phi));
  EXPECT_TRUE(same_bits(z["W"].to_f64(), features.weights()));
  // Head-major columns: Phi[:, m*e + k] = Φ_m[k], as the scalar reference computes it.
  std::vector<double> ref(Phi.size());
  rfa_features_reference(features.config(), features.weights(), data.shape.T, 3, data.X.data(),
                         data.n, ref.data());
  for (size_t k = 0; k < ref.size(); ++k)
    ASSERT_NEAR(Phi[k], ref[k], 1e-12 * (1 + std::abs(ref[k])));
  const std::string meta = z["meta"].text();
  for (const char* s :
       {"\"model\": \"rfa\"", "\"seed\": 3", "\"heads\": 6", "\"Phi_shape\": [120, 24]",
        "\"weights_shape\": [6, 4, 4]", "\"task\": \"rf_target\""})
    EXPECT_NE(meta.find(s), std::string::npos) << s << " in " << meta;
}

TEST_F(FeaturesCommand, BrfaAndRfmlpUseTheModelsMapping) {
  write_rf_data();
  ASSERT_EQ(test::cli_run("features --model brfa --set model.heads=4 --set model.mean_scale=2 "
                          "--seed 9 -q --in " +
                          path("train.npz") + " -o " + path("b.npz"))
                .exit_code,
            0);
  ASSERT_EQ(test::cli_run("features --model rfmlp --set model.heads=4 --seed 9 -q --in " +
                          path("train.npz") + " -o " + path("m.npz")).exit_code, 0);
  const Batch data = dataset_read(path("train.npz"), nullptr);
  // The frozen weights of the fitted models with the same params and seed.
  for (const std::string model : {"brfa", "rfmlp"}) {
    SCOPED_TRACE(model);
    ModelRecord r = model_record_make(model, 9, data.shape);
    r.model_params.set_text("heads", "4");
    if (model == "brfa") r.model_params.set_text("mean_scale", "2");
    auto m = model_make(r);
    ModelTensor weights;
    ASSERT_TRUE(
        rf_feature_weights(*dynamic_cast<const RidgeModel&>(*m).solver().feature_map(), &weights));
    auto z = npz_read(path(model == "brfa" ? "b.npz" : "m.npz"));
    ASSERT_TRUE(z.count(weights.name)) << weights.name;
    EXPECT_EQ(z[weights.name].shape, weights.shape);
    EXPECT_TRUE(same_bits(z[weights.name].to_f64(), weights.data));
  }
  auto z = npz_read(path("m.npz"));
  EXPECT_EQ(z["w"].shape, (std::vector<int64_t>{16, 5 * 3 + 1}));  // width = heads·(d+1)
  EXPECT_EQ(z["Phi"].shape, (std::vector<int64_t>{120, 16}));
}

TEST_F(FeaturesCommand, UserErrorsAreOneLineAndWriteNothing) {
  write_rf_data();
  ASSERT_EQ(test::cli_run("data qsa --n 5 --seed 0 -q -o " + path("qsa.npz")).exit_code, 0);
  const std::string in = " --in " + path("train.npz");
  const std::string out = " -o " + path("f.npz");
  expect_user_error("features --model rfaa" + in + out, "did you mean 'rfa'");
  expect_user_error("features --model rfa_kernel" + in + out, "kernel model");
  expect_user_error("features --model linear" + in + out, "has no random features");
  expect_user_error("features --model rfa --in " + path("nope.npz") + out, "nope.npz");
  expect_user_error("features --model rfa --in " + path("qsa.npz") + out, "rf_target-style");
  expect_user_error("features --model rfa" + in + " -o " + path("no/dir/f.npz"), "no/dir");
  expect_user_error("features --model rfa" + in + " -o " + path("f.txt"), ".npz");
  expect_user_error("features --model rfa --set model.hedas=3" + in + out, "did you mean 'heads'");
  expect_user_error("features --model rfa --set train.n=3" + in + out, "model.KEY=VALUE");
  expect_user_error("features --model brfa --set model.mean_scales=0.5,1" + in + out,
                    "model.mean_scale");
  // 4000 samples × 16e6 heads × 4: 2 TB of features, refused before anything is drawn.
  ASSERT_EQ(
      test::cli_run("data rf_target --n 4000 --seed 0 --set task.d=3 -q -o " + path("big.npz"))
          .exit_code,
      0);
  expect_user_error("features --model rfa --set model.heads=16000000 --in " + path("big.npz") + out,
                    "Phi (4000 × 64000000)");
}

// --------------------------------------------------------------------------- FitPredict

class FitPredict : public TempDir {
 public:
  using TempDir::path;
  using TempDir::write_rf_data;
};

// `fit` on the first 100 samples then `predict` through the CLI, against the same model
// fitted in memory.
void cli_round_trip(FitPredict& t, const std::vector<std::string>& models) {
  auto path = [&](const std::string& name) { return t.path(name); };
  t.write_rf_data();
  const Batch train = dataset_read(path("train.npz"), nullptr);
  const Batch test = dataset_read(path("test.npz"), nullptr);
  for (const std::string& model : models) {
    SCOPED_TRACE(model);
    const bool rf = rf_is_feature_model(model);
    test::CliResult r = test::cli_run(
        "fit " + model + " --in " + path("train.npz") + (rf ? " --set model.heads=6" : "") +
        " --set train.n=100 --seed 4 --save " + path("m.safetensors"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("fit " + model + " on 100 samples"), std::string::npos) << r.out;
    r = test::cli_run("predict --model " + path("m.safetensors") + " --in " + path("test.npz") +
                      " -o " + path("p.npz"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("test_nmse"), std::string::npos) << r.out;

    ModelRecord rec = model_record_make(model, 4, train.shape);
    if (rf) rec.model_params.set_text("heads", "6");
    rec.train_params.set_text("n", "100");
    Batch first = train;
    first.n = 100;
    first.X.resize(100 * train.shape.x_size());
    first.Y.resize(100 * train.shape.y_size());
    auto m = model_make(rec);
    FitLog log;
    m->fit(first, log);
    auto z = npz_read(path("p.npz"));
    EXPECT_EQ(z["Y_pred"].shape, (std::vector<int64_t>{40, 1, 1}));
    EXPECT_TRUE(same_bits(z["Y_pred"].to_f64(), m->predict(test)));
    EXPECT_EQ(model_load(path("m.safetensors")).metadata.at("n_train"), "100");
  }
}

TEST_F(FitPredict, CliRoundTripEqualsTheInMemoryModel) {
  cli_round_trip(*this, {"mean", "linear", "rfa", "brfa", "rfmlp"});
}

TEST_F(FitPredict, CliRoundTripEqualsTheInMemoryKernelModel) {
  cli_round_trip(*this, {"rfa_kernel", "brfa_kernel", "rfmlp_kernel"});
}

TEST_F(FitPredict, PredictsWithoutTargets) {
  write_rf_data();
  ASSERT_EQ(test::cli_run("fit rfa --set model.heads=4 -q --in " + path("train.npz") + " --save " +
                          path("m.safetensors")).exit_code, 0);
  const Batch test = dataset_read(path("test.npz"), nullptr);
  npz_write(path("x.npz"),
            {{"X", DType::F64, {test.n, test.shape.T, test.shape.d_in}, test.X.data()}});
  const test::CliResult r = test::cli_run("predict --model " + path("m.safetensors") + " --in " +
                                          path("x.npz") + " -o " + path("p.npz"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("test_"), std::string::npos) << r.out;
  EXPECT_EQ(npz_read(path("p.npz"))["Y_pred"].shape, (std::vector<int64_t>{40, 1, 1}));
}

// `predict` reads its dataset by the rule `fit` reads it with (io/dataset_file.h): the raw
// array `disjoint` of qsa's DISJ instances is kept, so the test metrics include
// disj_accuracy, as a run's do (predict used to keep only the 0-d constants).
TEST_F(FitPredict, PredictReadsTheDatasetAsFitDoes) {
  const std::string data = path("disj.npz"), model = path("m.safetensors");
  ASSERT_EQ(
      test::cli_run("data qsa --n 40 --seed 0 -q --set task.instances=disj -o " + data).exit_code,
      0);
  ASSERT_EQ(test::cli_run("fit linear -q --in " + data + " --save " + model).exit_code, 0);
  const test::CliResult r =
      test::cli_run("predict --model " + model + " --in " + data + " -o " + path("p.npz"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("test_disj_accuracy"), std::string::npos) << r.out;
}

TEST_F(FitPredict, UserErrorsAreOneLineAndWriteNothing) {
  write_rf_data();
  ASSERT_EQ(test::cli_run("data qsa --n 30 --seed 0 -q -o " + path("qsa.npz")).exit_code, 0);
  ASSERT_EQ(test::cli_run("data rf_target --n 10 --seed 0 --set task.N=5 -q -o " + path("n5.npz"))
                .exit_code,
            0);
  const std::string in = " --in " + path("train.npz");
  const std::string save = " --save " + path("m.safetensors");
  expect_user_error("fit rfaa" + in + save, "did you mean 'rfa'");
  expect_user_error("fit rfa --in " + path("nope.npz") + save, "nope.npz");
  expect_user_error("fit rfa --in " + path("qsa.npz") + save, "rf_target-style");
  expect_user_error("fit rfa" + in + " --save " + path("no/dir/m.safetensors"), "no/dir");
  expect_user_error("fit rfa" + in + " --save " + path("m.bin"), ".safetensors");
  expect_user_error("fit rfa --set model.heads=0" + in + save, "model.heads");
  expect_user_error("fit rfa --set eval.n=3" + in + save, "train.KEY=VALUE");
  expect_user_error("fit rfa --set train.n=121" + in + save, "train.n = 121");
  expect_user_error("fit rfa --set train.n=0" + in + save, "fresh samples");
  expect_user_error("fit brfa --set model.mean_scales=0.5,1" + in + save, "model.mean_scales");

  ASSERT_EQ(test::cli_run("fit rfa --set model.heads=4 -q" + in + save).exit_code, 0);
  rewrite(path("m.safetensors"), path("t.safetensors"), "seed", "1", "", 0);
  const std::string model = " --model " + path("m.safetensors");
  const std::string out = " -o " + path("p.npz");
  expect_user_error("predict" + model + " --in " + path("n5.npz") + out,
                    "fitted on inputs (n, 5, 3)");
  expect_user_error("predict" + model + " --in " + path("nope.npz") + out, "nope.npz");
  expect_user_error("predict --model " + path("nope.safetensors") + in + out, "nope.safetensors");
  expect_user_error("predict --model " + path("t.safetensors") + in + out, "differ");
  expect_user_error("predict" + model + in + " -o " + path("no/dir/p.npz"), "no/dir");
  expect_user_error("predict" + model + in + " -o " + path("p.csv"), ".npz");
}

}  // namespace
}  // namespace attn
