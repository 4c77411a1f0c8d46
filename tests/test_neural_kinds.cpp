// The table of gradient-trained models (models/neural_kinds.h) is complete: every row, in
// NeuralKind order, has a [model] schema, networks in float and double of the same
// architecture, a registry row whose factory builds that network, gradient-check rows in the
// table `attnlab gradcheck` runs, and a case in the PyTorch forward test
// (tests/python/test_torch_forward.py); and every gradient-trained model of the registry is a
// row. Adding a model without one of these fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "models/gradcheck_table.h"
#include "models/model_registry.h"
#include "models/neural_kinds.h"
#include "models/neural_train_config.h"
#include "models/train_schema.h"
#include "test_paths.h"

namespace attn {
namespace {

TaskShape small_shape() {
  return {.T = 4, .d_in = 3, .T_out = 4, .d_out = 2, .raw = {}, .constants = {}};
}

std::vector<std::string> param_names(const ParamSet<float>& ps) {
  std::vector<std::string> names;
  for (const ParamEntry& e : ps.entries()) names.push_back(e.name);
  return names;
}

// Model name -> ids of its cases in the CASES list of the PyTorch forward test.
std::map<std::string, std::vector<std::string>> torch_cases() {
  const std::string path = std::string(test_source_dir()) + "/tests/python/test_torch_forward.py";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const size_t begin = source.find("\nCASES = [");
  EXPECT_NE(begin, std::string::npos) << path << " has no CASES list";
  if (begin == std::string::npos) return {};
  const std::string cases = source.substr(begin, source.find("\n]", begin) - begin);
  // A case: ("id", "model", "task", {model keys}).
  const std::regex row(R"re(\(\s*"([^"]+)",\s*"([^"]+)",\s*"([^"]+)",\s*\{)re");
  std::map<std::string, std::vector<std::string>> out;
  for (auto it = std::sregex_iterator(cases.begin(), cases.end(), row);
       it != std::sregex_iterator(); ++it)
    out[(*it)[2]].push_back((*it)[1]);
  return out;
}

TEST(NeuralKinds, RowsAreInKindOrderAndFoundByName) {
  ASSERT_EQ(neural_kinds().size(), static_cast<size_t>(kNeuralKindCount));
  std::set<std::string> names;
  for (int k = 0; k < kNeuralKindCount; ++k) {
    const NeuralKindInfo& row = neural_kinds()[static_cast<size_t>(k)];
    EXPECT_EQ(static_cast<int>(row.kind), k) << row.name;
    EXPECT_EQ(&neural_kind_info(static_cast<NeuralKind>(k)), &row);
    EXPECT_EQ(neural_kind_find(row.name), &row);
    EXPECT_EQ(&neural_kind_get(row.name), &row);
    EXPECT_TRUE(names.insert(row.name).second) << "two rows called " << row.name;
    EXPECT_NE(std::string(row.description), "") << row.name;
  }
  EXPECT_EQ(neural_kind_find("rfa"), nullptr);
  EXPECT_THROW(neural_kind_get("rfa"), UserError);
}

TEST(NeuralKinds, EveryRowBuildsItsNetworkInFloatAndDouble) {
  for (const NeuralKindInfo& row : neural_kinds()) {
    SCOPED_TRACE(row.name);
    ASSERT_NE(row.schema, nullptr);
    ASSERT_FALSE(row.schema().empty());
    ASSERT_NE(row.nets.make_float, nullptr);
    ASSERT_NE(row.nets.make_double, nullptr);
    const Params model("model", row.schema());
    const auto net32 = row.nets.make_float(model, small_shape());
    const auto net64 = row.nets.make_double(model, small_shape());
    ASSERT_TRUE(net32 && net64);
    EXPECT_GT(net32->params().size(), 0);
    EXPECT_EQ(net32->params().size(), net64->params().size());
    EXPECT_EQ(net32->params().entries().size(), net64->params().entries().size());
    for (size_t i = 0; i < net32->params().entries().size(); ++i)
      EXPECT_EQ(net32->params().entries()[i].name, net64->params().entries()[i].name);
  }
}

// The registry's row of each model is generated from the table, and its factory builds a
// NeuralModel whose saved tensors are the row's network's parameters.
TEST(NeuralKinds, TheRegistryRowMakesTheRowsModel) {
  for (const NeuralKindInfo& row : neural_kinds()) {
    SCOPED_TRACE(row.name);
    const ModelInfo& info = model_find(row.name);
    EXPECT_EQ(info.description, row.description);
    EXPECT_EQ(info.schema, row.schema);
    EXPECT_EQ(info.train_schema, neural_train_schema);
    EXPECT_EQ(info.check_train, neural_train_check);
    EXPECT_TRUE(info.fresh_samples);
    EXPECT_FALSE(info.no_training || info.ridge_fitted);
    ASSERT_NE(row.make, nullptr);
    EXPECT_EQ(info.make, row.make);
    const Params model("model", row.schema());
    Params train("train", model_train_schema(info));
    train.set_text("n", "64");
    const TaskShape shape = small_shape();
    const auto made = row.make(ModelContext{model, train, shape, 3});
    ModelTensors saved;
    saved.model = row.name;
    saved.shape = shape;
    made->save(saved);
    std::vector<std::string> tensors;
    for (const ModelTensor& t : saved.tensors)
      if (t.name.rfind("meta.", 0) != 0) tensors.push_back(t.name);
    EXPECT_EQ(tensors, param_names(row.nets.make_float(model, shape)->params()));
  }
}

TEST(NeuralKinds, EveryGradientTrainedModelOfTheRegistryIsARow) {
  for (const ModelInfo& info : model_registry()) {
    if (info.train_schema == neural_train_schema) {
      EXPECT_NE(neural_kind_find(info.name), nullptr) << info.name << " is not in neural_kinds()";
    }
  }
}

TEST(NeuralKinds, EveryRowHasGradcheckRows) {
  std::set<std::string> rows;
  for (const GradcheckRow& r : gradcheck_table()) rows.insert(r.name);
  for (const NeuralKindInfo& row : neural_kinds()) {
    SCOPED_TRACE(row.name);
    EXPECT_FALSE(row.gradcheck.empty()) << "no gradient-check row";
    EXPECT_TRUE(rows.count(std::string("model/") + row.name)) << "no row model/" << row.name;
    for (const NeuralGradcheckSpec& spec : row.gradcheck)
      EXPECT_TRUE(rows.count(std::string("model/") + row.name +
                             (spec.suffix.empty() ? "" : "/" + spec.suffix)))
          << spec.suffix;
  }
}

TEST(NeuralKinds, EveryRowHasATorchForwardCase) {
  const auto cases = torch_cases();
  for (const NeuralKindInfo& row : neural_kinds())
    EXPECT_TRUE(cases.count(row.name))
        << row.name << " has no case in CASES of tests/python/test_torch_forward.py";
  for (const auto& [model, ids] : cases)
    EXPECT_NE(neural_kind_find(model), nullptr)
        << "test_torch_forward.py case " << ids.front() << ": '" << model
        << "' is not a gradient-trained model";
}

}  // namespace
}  // namespace attn
