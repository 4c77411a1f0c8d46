// The `gpt2` model against PyTorch and its checkpoints (models/gpt2_checkpoint.h): the logits of
// checkpoints written by tests/python/gen_gpt2_reference.py (a GPT-2 forward written from the
// architecture, in torch) agree to 1e-5 in float32 and 1e-12 in float64; export then import
// predicts bit for bit; every import error names the tensor and what would fix it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_helpers.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "models/gpt2_checkpoint.h"
#include "models/neural_models.h"
#include "nn/gpt2_net.h"
#include "tasks/batch.h"
#include "test_paths.h"

namespace attn {
namespace {

#include "gpt2_torch_reference.inc"

namespace fs = std::filesystem;

std::string data_path(const std::string& name) {
  return std::string(test_source_dir()) + "/tests/data/" + name;
}

// The reference's token sequences as one-hot rows (n, N, vocab).
Batch reference_tokens(int64_t d_out) {
  Batch b = batch_alloc({.T = kGpt2N,
                         .d_in = kGpt2Vocab,
                         .T_out = kGpt2N,
                         .d_out = d_out,
                         .raw = {},
                         .constants = {}},
                        kGpt2Seqs);
  for (int i = 0; i < kGpt2Seqs * kGpt2N; ++i) b.X[i * kGpt2Vocab + kGpt2Tokens[i]] = 1.0;
  return b;
}

// The logits of a loaded gpt2 model: its network in scalar type T with its saved tensors.
template <class T>
std::vector<double> logits_of(const LoadedModel& loaded, const Batch& data) {
  auto net = neural_net_make<T>("gpt2", loaded.record.model_params, loaded.record.shape);
  ModelTensors saved;
  loaded.model->save(saved);
  auto& ps = net->params();
  for (size_t id = 0; id < ps.entries().size(); ++id) {
    const ParamEntry& e = ps.entry(static_cast<int>(id));
    const std::vector<double>& v = saved.get(e.name, e.shape);
    std::copy(v.begin(), v.end(), ps.value(static_cast<int>(id)));
  }
  std::vector<T> x(data.X.begin(), data.X.end()), y(data.n * data.shape.y_size());
  net->forward(x.data(), data.n, y.data());
  return {y.begin(), y.end()};
}

// max |got − want| ≤ tol · max(1, max |want|).
void expect_close(const std::vector<double>& got, const double* want, size_t count, double tol) {
  ASSERT_EQ(got.size(), count);
  double scale = 1, worst = 0;
  for (size_t i = 0; i < count; ++i) scale = std::max(scale, std::abs(want[i]));
  for (size_t i = 0; i < count; ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  EXPECT_LE(worst, tol * scale) << "max |difference| " << worst;
}

// Softmax over each row of d values.
std::vector<double> softmax_rows(const double* z, size_t count, int64_t d) {
  std::vector<double> p(z, z + count);
  for (size_t r = 0; r < count / d; ++r) {
    double* row = p.data() + r * d;
    const double m = *std::max_element(row, row + d);
    double sum = 0;
    for (int64_t k = 0; k < d; ++k) sum += (row[k] = std::exp(row[k] - m));
    for (int64_t k = 0; k < d; ++k) row[k] /= sum;
  }
  return p;
}

struct TorchCase {
  const char* file;
  int64_t heads;  // 0: from the file's metadata
  int64_t d_out;
  const double* logits;
  size_t count;
};

const TorchCase kTied{"gpt2_tied.safetensors", kGpt2Heads, kGpt2Vocab, kGpt2Logits_tied,
                      std::size(kGpt2Logits_tied)};
const TorchCase kHead{"gpt2_head.safetensors", 0, 5, kGpt2Logits_head, std::size(kGpt2Logits_head)};

void expect_torch_agrees(const TorchCase& c, const std::string& dtype, double tol) {
  Gpt2ImportOptions o;
  o.heads = c.heads;
  o.T = kGpt2N;
  o.dtype = dtype;
  const LoadedModel loaded = gpt2_import(data_path(c.file), o);
  EXPECT_EQ(loaded.record.model, "gpt2");
  EXPECT_EQ(loaded.record.model_params.get_int("layers"), 2);
  EXPECT_EQ(loaded.record.model_params.get_int("m"), 16);
  EXPECT_EQ(loaded.record.model_params.get_int("heads"), kGpt2Heads);
  EXPECT_EQ(loaded.record.model_params.get_string("head"),
            c.d_out == kGpt2Vocab ? "tied" : "separate");
  EXPECT_EQ(loaded.record.shape.d_out, c.d_out);
  const Batch data = reference_tokens(c.d_out);
  const std::vector<double> logits =
      dtype == "float32" ? logits_of<float>(loaded, data) : logits_of<double>(loaded, data);
  expect_close(logits, c.logits, c.count, tol);
  // The model's predictions are the softmax of those logits (loss cross_entropy).
  const std::vector<double> want = softmax_rows(c.logits, c.count, c.d_out);
  expect_close(loaded.model->predict(data), want.data(), want.size(), tol);
}

TEST(Gpt2Import, TiedCheckpointMatchesTorchInFloat64) {
  expect_torch_agrees(kTied, "float64", 1e-12);
}
TEST(Gpt2Import, TiedCheckpointMatchesTorchInFloat32) {
  expect_torch_agrees(kTied, "float32", 1e-5);
}
TEST(Gpt2Import, SeparateHeadMatchesTorchInFloat64) {
  expect_torch_agrees(kHead, "float64", 1e-12);
}
TEST(Gpt2Import, SeparateHeadMatchesTorchInFloat32) { expect_torch_agrees(kHead, "float32", 1e-5); }

TEST(Gpt2Import, DefaultsComeFromTheFile) {
  // F32 tensors: float32; all n_positions = 12 rows of wpe; n_head from the metadata.
  const LoadedModel loaded = gpt2_import(data_path("gpt2_head.safetensors"), {});
  EXPECT_EQ(loaded.record.train_params.get_string("dtype"), "float32");
  EXPECT_EQ(loaded.record.shape.T, 12);
  EXPECT_EQ(loaded.record.shape.T_out, 12);
  // A GPT-2 checkpoint loads where a saved model does (n_head in its metadata).
  const LoadedModel again = model_load(data_path("gpt2_head.safetensors"));
  EXPECT_EQ(again.record.model_params.to_json(), loaded.record.model_params.to_json());
}

// ------------------------------------------------------------------------ round trip and errors

class Gpt2Files : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("attnlab_gpt2_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return std::memcmp(&x, &y, sizeof x) == 0;
         });
}

std::string file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A small token task: one-hot X (n, 6, 5), one-hot Y (n, 6, 4).
Batch token_batch(int64_t n, uint64_t seed) {
  Batch b = batch_alloc({.T = 6, .d_in = 5, .T_out = 6, .d_out = 4, .raw = {}, .constants = {}}, n);
  uint64_t s = seed;
  auto next = [&s](int k) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(k));
  };
  for (int64_t r = 0; r < n * 6; ++r) {
    b.X[r * 5 + next(5)] = 1;
    b.Y[r * 4 + next(4)] = 1;
  }
  return b;
}

// A fitted gpt2 model saved with `fit --save`'s writer.
std::string fitted_gpt2(const std::string& file, const std::string& dtype, const std::string& loss,
                        const std::string& head, int64_t T_out = 6) {
  Batch train = token_batch(48, 3);
  if (T_out == 1) {  // token 0's target only
    Batch b = train;
    b.shape.T_out = 1;
    b.Y.clear();
    for (int64_t i = 0; i < b.n; ++i)
      b.Y.insert(b.Y.end(), train.Y.begin() + i * 24, train.Y.begin() + i * 24 + 4);
    train = b;
  }
  ModelRecord r = model_record_make("gpt2", 11, train.shape);
  r.model_params.set_text("m", "8");
  r.model_params.set_text("heads", "2");
  r.model_params.set_text("head", head);
  r.train_params.set_text("n", "48");
  r.train_params.set_text("steps", "5");
  r.train_params.set_text("lr", "0.05");
  r.train_params.set_text("dtype", dtype);
  r.train_params.set_text("loss", loss);
  auto model = model_make(r);
  FitLog log;
  model->fit(train, log);
  model_save(file, r, *model);
  return file;
}

TEST_F(Gpt2Files, ExportThenImportPredictsBitForBit) {
  struct Case {
    std::string dtype, loss, head;
    int64_t T_out;
  };
  for (const Case& c :
       {Case{"float32", "cross_entropy", "separate", 6}, Case{"float64", "mse", "separate", 6},
        Case{"float32", "auto", "auto", 1}}) {
    SCOPED_TRACE(c.dtype + " " + c.loss + " T_out " + std::to_string(c.T_out));
    const LoadedModel saved =
        model_load(fitted_gpt2(path("m.safetensors"), c.dtype, c.loss, c.head, c.T_out));
    Batch test = token_batch(7, 99);
    test.shape.T_out = saved.record.shape.T_out;
    test.Y.resize(static_cast<size_t>(test.n * test.shape.y_size()));
    const std::vector<double> want = saved.model->predict(test);
    gpt2_export(path("gpt2.safetensors"), saved.record, *saved.model);
    const SafetensorsFile exported(path("gpt2.safetensors"));
    EXPECT_TRUE(exported.find("wpe.weight") && exported.find("h.0.attn.c_attn.weight"));
    EXPECT_EQ(exported.find("wte.weight")->dtype_name, c.dtype == "float32" ? "F32" : "F64");
    const LoadedModel back = gpt2_import(path("gpt2.safetensors"), {});
    EXPECT_EQ(back.record.train_params.get_string("dtype"), c.dtype);
    EXPECT_EQ(back.record.shape.T_out, c.T_out);
    EXPECT_TRUE(same_bits(back.model->predict(test), want));
    const auto maps = back.model->attention(test), maps_want = saved.model->attention(test);
    ASSERT_EQ(maps.size(), 2u);
    EXPECT_TRUE(same_bits(maps[1].data, maps_want[1].data));
    // model_load reads the export too, and exporting the import gives the same bytes.
    EXPECT_TRUE(same_bits(model_load(path("gpt2.safetensors")).model->predict(test), want));
    gpt2_export(path("again.safetensors"), back.record, *back.model);
    EXPECT_EQ(file_bytes(path("again.safetensors")), file_bytes(path("gpt2.safetensors")));
  }
}

TEST_F(Gpt2Files, ExportRefusesSettingsGpt2DoesNotHave) {
  const std::string file = fitted_gpt2(path("m.safetensors"), "float32", "auto", "auto");
  for (const auto& [key, value, says] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"positions", "sinusoidal", "model.positions"},
           {"causal", "false", "model.causal"},
           {"bits", "6", "model.bits"}}) {
    LoadedModel loaded = model_load(file);
    loaded.record.model_params.set_text(key, value);
    try {
      gpt2_export(path("x.safetensors"), loaded.record, *loaded.model);
      ADD_FAILURE() << key << " exported";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(path("x.safetensors")));
}

// Rewrites gpt2_head.safetensors with `edit` applied to its tensors (name → values, shape).
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> data;
};
template <class Edit>
std::string rewritten(const std::string& out, Edit edit,
                      std::map<std::string, std::string> md = {{"n_head", "4"}}) {
  const SafetensorsFile f(data_path("gpt2_head.safetensors"));
  std::vector<Tensor> tensors;
  for (const auto& e : f.entries()) tensors.push_back({e.name, e.shape, f.read_f64(e.name)});
  edit(tensors);
  std::vector<SafetensorsView> views;
  for (const Tensor& t : tensors)
    views.push_back({t.name, SafetensorsDType::F32, t.shape, t.data.data()});
  safetensors_write(out, views, md);
  return out;
}

void expect_import_error(const std::string& file, const std::vector<std::string>& says,
                         Gpt2ImportOptions o = {}) {
  try {
    gpt2_import(file, o);
    ADD_FAILURE() << "imported " << file;
  } catch (const UserError& e) {
    for (const std::string& s : says)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << s << " in: " << e.what();
  }
}

TEST_F(Gpt2Files, ImportErrorsNameTheTensorAndTheFix) {
  // A missing tensor.
  expect_import_error(
      rewritten(path("missing.safetensors"),
                [](std::vector<Tensor>& t) {
                  std::erase_if(t, [](const Tensor& x) { return x.name == "h.1.mlp.c_fc.bias"; });
                }),
      {"missing.safetensors", "'h.1.mlp.c_fc.bias' is missing"});
  // nn.Linear's (out, in) instead of Conv1D's (in, out).
  expect_import_error(rewritten(path("shape.safetensors"),
                                [](std::vector<Tensor>& t) {
                                  for (Tensor& x : t)
                                    if (x.name == "h.0.attn.c_attn.weight") x.shape = {48, 16};
                                }),
                      {"'h.0.attn.c_attn.weight' has shape [48, 16], expected [16, 48]"});
  // No n_head in the metadata, none given.
  expect_import_error(rewritten(path("heads.safetensors"), [](std::vector<Tensor>&) {}, {}),
                      {"n_head", "give it when importing"});
  // heads that do not divide n_embd; more positions than wpe has.
  Gpt2ImportOptions o;
  o.heads = 3;
  expect_import_error(data_path("gpt2_head.safetensors"), {"n_embd = 16", "n_head = 3"}, o);
  o = {};
  o.T = 13;
  expect_import_error(data_path("gpt2_head.safetensors"), {"wpe.weight has 12 rows"}, o);
  // Not a GPT-2 checkpoint at all.
  expect_import_error(rewritten(path("other.safetensors"),
                                [](std::vector<Tensor>& t) {
                                  std::erase_if(
                                      t, [](const Tensor& x) { return x.name == "wte.weight"; });
                                }),
                      {"no tensor 'wte.weight'", "not a GPT-2 checkpoint"});
}

TEST_F(Gpt2Files, ImportRefusesADtypeItCannotRead) {
  // The same bytes with ln_f.bias declared I32 (4 bytes an element, like F32).
  std::string bytes = file_bytes(data_path("gpt2_head.safetensors"));
  const std::string from = "\"ln_f.bias\":{\"dtype\":\"F32\"";
  const size_t at = bytes.find(from);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, from.size(), "\"ln_f.bias\":{\"dtype\":\"I32\"");
  std::ofstream(path("i32.safetensors"), std::ios::binary) << bytes;
  expect_import_error(path("i32.safetensors"), {"'ln_f.bias' has dtype I32", "F32"});
}

TEST_F(Gpt2Files, CliImportsPredictsAndExports) {
  const std::string ckpt = data_path("gpt2_tied.safetensors");
  test::CliResult r = test::cli_run("import-gpt2 " + ckpt + " -o " + path("m.safetensors"));
  EXPECT_EQ(r.exit_code, 2) << r.out;  // no n_head in this file
  EXPECT_NE(r.out.find("n_head"), std::string::npos) << r.out;
  r = test::cli_run("import-gpt2 " + ckpt + " --heads 4 --T 10 --dtype float64 -o " +
                    path("m.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("2 layers, m = 16, 4 heads, T = 10, vocab 9, d_out 9 (tied)"),
            std::string::npos)
      << r.out;
  const LoadedModel loaded = model_load(path("m.safetensors"));
  const Batch data = reference_tokens(kGpt2Vocab);
  expect_close(logits_of<double>(loaded, data), kGpt2Logits_tied, std::size(kGpt2Logits_tied),
               1e-12);
  r = test::cli_run("export-gpt2 " + path("m.safetensors") + " -o " + path("out.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const LoadedModel back = model_load(path("out.safetensors"));
  EXPECT_TRUE(same_bits(back.model->predict(data), loaded.model->predict(data)));
  r = test::cli_run("export-gpt2 " + path("m.safetensors") + " -o " + path("out.npz"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace attn
