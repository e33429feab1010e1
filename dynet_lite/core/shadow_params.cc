#include "dynet_lite/shadow-params.h"

#include "dynet_lite/except.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

namespace {
// n zeroed floats on `dev`, released there when the last owner goes.
std::shared_ptr<float> zeroed_memory(Device* dev, size_t n) {
  float* p = static_cast<float*>(dev->allocate(std::max<size_t>(n, 1) * sizeof(float)));
  dev->fill(p, 0.f, n);
  return std::shared_ptr<float>(p, [dev](float* q) { dev->release(q); });
}
}  // namespace

ShadowParameters::ShadowParameters(const ParameterStorage& p) : memory_(zeroed_memory(p.device, p.size())) {
  h = Tensor(p.dim, memory_.get(), p.device, DeviceMempool::PS);
}

ShadowLookupParameters::ShadowLookupParameters(const LookupParameterStorage& lp)
    : memory_(zeroed_memory(lp.device, lp.size())) {
  all_h = Tensor(lp.all_dim, memory_.get(), lp.device, DeviceMempool::PS);
  const size_t row = lp.dim.size();
  h.reserve(lp.num_rows());
  for (unsigned i = 0; i < lp.num_rows(); ++i) h.emplace_back(lp.dim, memory_.get() + i * row, lp.device, DeviceMempool::PS);
}

void allocate_shadow_parameters(const ParameterCollection& model, unsigned allocated,
                                std::vector<ShadowParameters>& target) {
  const auto& params = model.parameters_list();
  DYNET_LITE_ARG_CHECK(allocated <= params.size() && target.size() == allocated,
                    "allocate_shadow_parameters: " << allocated << " allocated, " << target.size() << " held, "
                                                   << params.size() << " parameters");
  for (size_t i = allocated; i < params.size(); ++i) target.emplace_back(*params[i]);
}

void allocate_shadow_lookup_parameters(const ParameterCollection& model, unsigned allocated,
                                       std::vector<ShadowLookupParameters>& target) {
  const auto& params = model.lookup_parameters_list();
  DYNET_LITE_ARG_CHECK(allocated <= params.size() && target.size() == allocated,
                    "allocate_shadow_lookup_parameters: " << allocated << " allocated, " << target.size()
                                                          << " held, " << params.size() << " tables");
  for (size_t i = allocated; i < params.size(); ++i) target.emplace_back(*params[i]);
}

}  // namespace dynet_lite
