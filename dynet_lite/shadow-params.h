#pragma once
/// \file shadow-params.h
/// Shadow parameters: a tensor of the same shape, on the same device, for every
/// parameter (or lookup table) of a collection.  The trainers keep their
/// moments and moving averages in them (DyNet's `shadow-params.h`).
#include <memory>
#include <vector>

#include "dynet_lite/tensor.h"

namespace dynet_lite {

class ParameterCollection;
struct ParameterStorage;
struct LookupParameterStorage;

/// One tensor shaped like a parameter, zero when created.  Copies share the
/// memory (as DyNet's tensors do); the last copy releases it.
struct ShadowParameters {
  ShadowParameters() = default;
  explicit ShadowParameters(const ParameterStorage& p);
  Tensor h;  ///< the values, p.dim on p's device

 private:
  std::shared_ptr<float> memory_;
};

/// One tensor shaped like a lookup table, zero when created: `all_h` is the
/// whole table, `h[i]` a view of row i.  Copies share the memory.
struct ShadowLookupParameters {
  ShadowLookupParameters() = default;
  explicit ShadowLookupParameters(const LookupParameterStorage& lp);
  Tensor all_h;
  std::vector<Tensor> h;

 private:
  std::shared_ptr<float> memory_;
};

/// Appends to `target` a ShadowParameters for each of `model.parameters_list()`
/// from index `allocated` on (those before it are already there).
void allocate_shadow_parameters(const ParameterCollection& model, unsigned allocated,
                                std::vector<ShadowParameters>& target);
/// Likewise for `model.lookup_parameters_list()`.
void allocate_shadow_lookup_parameters(const ParameterCollection& model, unsigned allocated,
                                       std::vector<ShadowLookupParameters>& target);

}  // namespace dynet_lite
