// The probe table (analysis/probes.h): every row complete and consistent with the registries
// and the docs, names parsed with a did-you-mean, applicability refused with the key named, and
// eval.probes kept out of run ids and of the spec's fingerprint (spec_runs_json).
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "analysis/probes.h"
#include "cli_helpers.h"
#include "core/error.h"
#include "experiment/plan.h"
#include "experiment/spec.h"
#include "models/model_registry.h"
#include "tasks/task.h"

namespace attn {
namespace {

// Errors of loading and planning tests/data/rank_pair_probe.toml with `sets` ("" if none).
std::string spec_error(const std::vector<std::string>& sets) {
  try {
    plan_make(spec_load(std::string(test_source_dir()) + "/tests/data/rank_pair_probe.toml", sets,
                        false));
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
    EXPECT_NE(test::file_read(path).find("<a id=\"" + doc.substr(hash + 1) + "\"></a>"),
              std::string::npos)
        << doc;
  }
}

TEST(Probes, NamesAreParsedAndWhereAProbeDoesNotApplyIsSaid) {
  EXPECT_TRUE(probes_parse("").empty());
  EXPECT_EQ(probes_parse(" rank_pair "), std::vector<ProbeKind>{ProbeKind::kRankPair});
  EXPECT_EQ(probes_text(probes_parse("rank_pair")), "rank_pair");
  EXPECT_THROW(probes_parse("rank_pair, rank_pair"), UserError);
  EXPECT_THROW(probes_parse("rank_pair,"), UserError);
  EXPECT_NO_THROW(probe_check(ProbeKind::kRankPair, "mlp", "qsa", "rank_pair"));
  EXPECT_THROW(probe_check(ProbeKind::kRankPair, "mlp", "match2", "rank_pair"), UserError);
  try {
    probe_check(ProbeKind::kRankPair, "attention", "qsa", "rank_pair");
    ADD_FAILURE() << "rank_pair accepted for attention";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "eval.probes: rank_pair needs model = mlp, task = qsa and eval.instances = "
                 "\"rank_pair\" (here model = attention, task = qsa, eval.instances = "
                 "\"rank_pair\"); remove it from eval.probes or change the run "
                 "(docs/sanford2023.md#e3-rank-pair)");
  }
}

TEST(Probes, ProbesAreNotPartOfRunIdsOrTheFingerprint) {
  const std::string path = std::string(test_source_dir()) + "/tests/data/rank_pair_probe.toml";
  const Spec probed = spec_load(path, {}, false),
             plain = spec_load(path, {"eval.probes=[]"}, false);
  const Spec set = spec_load(path, {"eval.probes=rank_pair"}, false);
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
}

TEST(Probes, BadProbeListsAreOneLineNamingTheKey) {
  const std::string unknown = spec_error({"eval.probes=[\"rank_pari\"]"});
  EXPECT_NE(unknown.find("eval.probes: unknown probe 'rank_pari' (did you mean 'rank_pair'?); "
                         "probes: rank_pair"),
            std::string::npos) << unknown;
  const std::string twice = spec_error({"eval.probes=[\"rank_pair\", \"rank_pair\"]"});
  EXPECT_NE(twice.find("eval.probes names rank_pair twice"), std::string::npos) << twice;
  const std::string number = spec_error({"eval.probes=3"});
  EXPECT_NE(number.find("eval.probes must be a list of probe names"), std::string::npos) << number;
  const std::string mixed = spec_error({"eval.probes=[\"rank_pair\", 2]"});
  EXPECT_NE(mixed.find("eval.probes: a list of names must hold strings only"), std::string::npos)
      << mixed;
  const std::string swept = spec_error({"sweep.eval.probes=[\"rank_pair\"]"});
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
