// Run groups: the pending run points that share their inputs, executed in one worker process
// so that a run can reuse what a neighbour computed. Two kinds:
//
// - Ridge groups, run one after another: a ridge fit reuses features, kernel and spectrum
//   (train/ridge_share.h). Two points are in one when they are ridge-fitted
//   (ModelInfo::ridge_fitted), have the same seed, and their configurations are equal after
//   setting, to their defaults, the task keys marked label_only (e.g. rf_target's target and
//   p), train.n and train.lambdas.
// - Lockstep groups, trained side by side (experiment/lockstep_group.h): gradient-trained
//   models on fresh samples (train.n = 0, one learning rate: train.lrs empty) with the same
//   seed, task, [train] and [eval] settings, whatever their model and [model] keys (e.g.
//   sanford2023 E1's values of m): every training batch is drawn once for all of them
//   (tasks/shared_batches.h). At most kLockstepGroupMax runs a group.
//
// Groups
// are formed from the points handed to the runner (the ones still pending in this shard), so
// an interrupted group redoes only its missing runs, and --retry-failed and --shard act per
// run point as without groups. Within a group the points run by decreasing train.n (the
// largest set first, whose features and kernel the smaller ones reuse), then plan order.
// Every point keeps its own run id and is stored as its own row.
//
// The local runner (runner.h) and the MPI sweep (sweep_mpi.h) hand out the same units
// (run_units_make): a group to one worker process, a point that is not grouped to one of its own.
#pragma once

#include <string>
#include <vector>

#include "experiment/plan.h"

namespace attn {

constexpr size_t kLockstepGroupMax = 16;
// At most this many points a unit, and a unit's request (run_worker.h: run_request_encode)
// at most kForkServerRequestMax bytes: a group of long settings (e.g. a λ grid of 20 000
// values) is cut by size too.
constexpr size_t kRunUnitMax = 256;

// Whether a point would train in a lockstep group (fresh-sample gradient training, one rate).
bool run_group_lockstep(const RunPoint& point);

// The key of the group a point belongs to; empty for a point that is never grouped.
std::string run_group_key(const RunPoint& point);

// The points split into groups (each in execution order); groups in the order of their
// first point in `points`. A point with an empty key is a group of its own.
std::vector<std::vector<const RunPoint*>> run_groups_make(
    const std::vector<const RunPoint*>& points);

// What one worker runs at a time, in the order to start them: with `groups`, the groups of
// run_groups_make cut into pieces of at most kRunUnitMax points whose request fits
// kForkServerRequestMax bytes; without (--no-groups), every point alone, in the order given.
// UserError (before anything runs) if one point's text alone is larger than that.
std::vector<std::vector<const RunPoint*>> run_units_make(const std::vector<const RunPoint*>& points,
                                                         bool groups);

}  // namespace attn
