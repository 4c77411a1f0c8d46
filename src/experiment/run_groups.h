// Run groups: the pending run points that share their inputs and model randomness, executed
// one after another in one worker process so that a ridge fit can reuse what a neighbour
// computed (features, kernel, spectrum: train/ridge_share.h).
//
// Two points are in one group when they are ridge-fitted (ModelInfo::ridge_fitted), have the
// same seed, and their configurations are equal after setting, to their defaults, the task
// keys marked label_only (e.g. rf_target's target and p), train.n and train.lambdas. Groups
// are formed from the points handed to the runner (the ones still pending in this shard), so
// an interrupted group redoes only its missing runs, and --retry-failed and --shard act per
// run point as without groups. Within a group the points run by decreasing train.n (the
// largest set first, whose features and kernel the smaller ones reuse), then plan order.
// Every point keeps its own run id and is stored as its own row.
#pragma once

#include <string>
#include <vector>

#include "experiment/plan.h"

namespace attn {

// The key of the group a point belongs to; empty for a point that is never grouped.
std::string run_group_key(const RunPoint& point);

// The points split into groups (each in execution order); groups in the order of their
// first point in `points`. A point with an empty key is a group of its own.
std::vector<std::vector<const RunPoint*>> run_groups_make(const std::vector<const RunPoint*>& points);

}  // namespace attn
