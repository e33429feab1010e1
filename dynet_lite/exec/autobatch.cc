// The counters of automatic batching and their process-wide totals.  The
// executor itself: exec/executor.h.
#include "dynet_lite/exec/autobatch.h"

#include <cstdio>
#include <mutex>

#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

// Never destroyed: a graph destroyed during static destruction still adds its
// counters here.
std::mutex& totals_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
AutobatchStats& totals() {
  static AutobatchStats* s = new AutobatchStats;
  return *s;
}

}  // namespace

void AutobatchStats::add(const AutobatchStats& o) {
  nodes += o.nodes;
  kernels += o.kernels;
  batched_groups += o.batched_groups;
  split_groups += o.split_groups;
  bytes_gathered += o.bytes_gathered;
  bytes_scattered += o.bytes_scattered;
  plan_hits += o.plan_hits;
  plan_misses += o.plan_misses;
  graphs += o.graphs;
  cse_merged += o.cse_merged;
  fused_regions += o.fused_regions;
  fused_groups += o.fused_groups;
  build_seconds += o.build_seconds;
  copy_seconds += o.copy_seconds;
  schedule_seconds += o.schedule_seconds;
  forward_seconds += o.forward_seconds;
  backward_seconds += o.backward_seconds;
}

std::string AutobatchStats::summary() const {
  char buf[512];
  auto ms = [](double s) { return s * 1e3; };
  std::snprintf(buf, sizeof(buf),
                "nodes %llu, kernels %llu (%llu batched groups, %llu run in place in pieces; %llu without batching), "
                "build %.3f ms, "
                "schedule %.3f ms, forward %.3f ms, backward %.3f ms, copies %.3f ms (gathered %llu B, "
                "scattered %llu B), plan cache %llu hits / %llu misses, %llu expressions merged, "
                "%llu fused regions of %llu groups",
                static_cast<unsigned long long>(nodes), static_cast<unsigned long long>(kernels),
                static_cast<unsigned long long>(batched_groups), static_cast<unsigned long long>(split_groups),
                static_cast<unsigned long long>(nodes), ms(build_seconds), ms(schedule_seconds), ms(forward_seconds),
                ms(backward_seconds), ms(copy_seconds), static_cast<unsigned long long>(bytes_gathered),
                static_cast<unsigned long long>(bytes_scattered), static_cast<unsigned long long>(plan_hits),
                static_cast<unsigned long long>(plan_misses), static_cast<unsigned long long>(cse_merged),
                static_cast<unsigned long long>(fused_regions), static_cast<unsigned long long>(fused_groups));
  return buf;
}

AutobatchStats autobatch_totals() {
  std::lock_guard<std::mutex> lock(totals_mutex());
  return totals();
}
void add_to_autobatch_totals(const AutobatchStats& s) {
  std::lock_guard<std::mutex> lock(totals_mutex());
  totals().add(s);
}
void reset_autobatch_totals() {
  std::lock_guard<std::mutex> lock(totals_mutex());
  totals() = AutobatchStats();
}

std::vector<const char*> unbatchable_ops() {
  std::vector<const char*> r;
  for (unsigned i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    if (info.leaf) continue;
    if (info.batch == BatchKind::Never || (info.batch == BatchKind::Custom && !info.batch_combine))
      r.push_back(info.name);
  }
  return r;
}

}  // namespace dynet_lite
