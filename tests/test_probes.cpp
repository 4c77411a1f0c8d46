// The probe table (analysis/probes.h): every row complete and consistent with the registries
// and the docs, names parsed with a did-you-mean, applicability refused with the key named, and
// eval.probes kept out of run ids and of the spec's fingerprint (spec_runs_json).
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "analysis/probes.h"
#include "core/error.h"
#include "models/model_registry.h"
#include "spec_test_helpers.h"
#include "tasks/task.h"

namespace attn {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Every row: its kind at its index, a unique name that probe_find finds, a description, the
// scalars it logs, a function, models and tasks of the registries, an eval.instances value the
// tasks accept, and a doc anchor written as <a id="..."></a> in an existing doc file.
TEST(Probes, EveryRowIsComplete) {
  const auto& table = probe_table();
  ASSERT_EQ(table.size(), static_cast<size_t>(ProbeKind::kCount));
  std::set<std::string> names;
  for (size_t k = 0; k < table.size(); ++k) {
    const ProbeRow& row = table[k];
    SCOPED_TRACE(row.name ? row.name : "(no name)");
    EXPECT_EQ(row.kind, static_cast<ProbeKind>(k));
    ASSERT_NE(row.name, nullptr);
    EXPECT_TRUE(names.insert(row.name).second) << "two probes named " << row.name;
    EXPECT_EQ(probe_find(row.name), row.kind);
    EXPECT_EQ(&probe_row(row.kind), &row);
    ASSERT_NE(row.description, nullptr);
    EXPECT_GT(std::string(row.description).size(), 10u);
    EXPECT_FALSE(row.scalars.empty());
    EXPECT_NE(row.run, nullptr);
    for (const auto& model : row.models) EXPECT_NO_THROW(model_find(model)) << model;
    for (const auto& task : row.tasks) {
      EXPECT_NO_THROW(task_find(task)) << task;
      if (!row.eval_instances.empty()) {
        Params p = task_default_params(task);
        EXPECT_NO_THROW(p.set("instances", row.eval_instances)) << task;
      }
    }
    ASSERT_NE(row.doc, nullptr);
    const std::string doc = row.doc;
    const auto hash = doc.find('#');
    ASSERT_NE(hash, std::string::npos) << doc;
    const std::string path = std::string(test_source_dir()) + "/" + doc.substr(0, hash);
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_NE(test::file_read(path).find("<a id=\"" + doc.substr(hash + 1) + "\"></a>"), std::string::npos)
        << doc;
  }
}

TEST(Probes, NamesAreParsedAndUnknownOnesGetADidYouMean) {
  EXPECT_TRUE(probes_parse("").empty());
  EXPECT_EQ(probes_parse(" rank_pair "), std::vector<ProbeKind>{ProbeKind::kRankPair});
  EXPECT_EQ(probes_text(probes_parse("rank_pair")), "rank_pair");
  const std::string unknown = message_of([] { probes_parse("rank_pari"); });
  EXPECT_NE(unknown.find("eval.probes: unknown probe 'rank_pari' (did you mean 'rank_pair'?)"),
            std::string::npos) << unknown;
  EXPECT_NE(message_of([] { probes_parse("rank_pair, rank_pair"); }).find("twice"), std::string::npos);
  EXPECT_NE(message_of([] { probes_parse("rank_pair,"); }).find("empty probe name"), std::string::npos);
  EXPECT_NO_THROW(probe_check(ProbeKind::kRankPair, "mlp", "qsa", "rank_pair"));
  const std::string wrong = message_of([] { probe_check(ProbeKind::kRankPair, "mlp", "match2", "rank_pair"); });
  EXPECT_NE(wrong.find("eval.probes: rank_pair needs model = mlp, task = qsa and eval.instances"),
            std::string::npos) << wrong;
}

const char* kSpec = R"(
[experiment]
name = "probes"
seeds = 2
[task]
name = "qsa"
N = 8
q = 2
d_out = 2
[model]
name = "mlp"
width = 3
[train]
n = 0
steps = 2
[eval]
n = 5
instances = "rank_pair"
)";

class ProbeSpecs : public test::SpecFileTest {};

TEST_F(ProbeSpecs, ProbesAreNotPartOfRunIdsOrTheFingerprint) {
  const Spec plain = load(kSpec), probed = load(std::string(kSpec) + "probes = [\"rank_pair\"]\n");
  const Spec set = load(kSpec, {"eval.probes=rank_pair"});
  const auto a = plan_make(plain), b = plan_make(probed), c = plan_make(set);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].run_id, b[k].run_id);
    EXPECT_EQ(a[k].config_json, b[k].config_json);
    EXPECT_TRUE(a[k].config.probes.empty());
    EXPECT_EQ(b[k].config.probes, std::vector<ProbeKind>{ProbeKind::kRankPair});
    EXPECT_EQ(c[k].config.probes, b[k].config.probes);
  }
  EXPECT_EQ(spec_runs_json(plain), spec_runs_json(probed));
  EXPECT_EQ(b[0].config_json.find("probe"), std::string::npos);
  EXPECT_TRUE(plan_make(load(std::string(kSpec) + "probes = []\n"))[0].config.probes.empty());
}

TEST_F(ProbeSpecs, BadProbeListsAreOneLineNamingTheKey) {
  const std::string unknown = error(std::string(kSpec) + "probes = [\"rank_pari\"]\n");
  EXPECT_NE(unknown.find("eval.probes: unknown probe 'rank_pari' (did you mean 'rank_pair'?)"),
            std::string::npos) << unknown;
  const std::string number = error(std::string(kSpec) + "probes = 3\n");
  EXPECT_NE(number.find("eval.probes must be a list of probe names"), std::string::npos) << number;
  const std::string mixed = error(std::string(kSpec) + "probes = [\"rank_pair\", 2]\n");
  EXPECT_NE(mixed.find("eval.probes: a list of names must hold strings only"), std::string::npos) << mixed;
  const std::string swept = error(std::string(kSpec) + "[sweep]\n\"eval.probes\" = [\"rank_pair\"]\n");
  EXPECT_NE(swept.find("sweep key 'eval.probes': probes are what every run reports"),
            std::string::npos) << swept;
}

// The shipped spec whose claims read rank_pair_* scalars names the probe.
TEST(Probes, ShippedRankPairSpecNamesTheProbe) {
  const std::string path =
      std::string(test_source_dir()) + "/experiments/sanford2023/e3_mlp_rank_pair.toml";
  for (const RunPoint& p : plan_make(spec_load(path, {}, true)))
    EXPECT_EQ(p.config.probes, std::vector<ProbeKind>{ProbeKind::kRankPair});
}

}  // namespace
}  // namespace attn
