// What a trainer keeps besides its rule: moving averages of the parameters,
// and save() / populate() of its scalars, state buffers and averages.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <istream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

#include "dynet_lite/except.h"
#include "dynet_lite/training.h"

namespace dynet_lite {

// ------------------------------------------------------------ MovingAverage

std::ostream& operator<<(std::ostream& os, const MovingAverage& o) {
  switch (o) {
    case MovingAverage::None: return os << "none";
    case MovingAverage::Cumulative: return os << "cumulative";
    case MovingAverage::Exponential: return os << "exponential";
  }
  return os << "MovingAverage(" << static_cast<int>(o) << ")";
}

std::istream& operator>>(std::istream& is, MovingAverage& o) {
  std::string w;
  if (!(is >> w)) return is;
  if (w == "none") o = MovingAverage::None;
  else if (w == "cumulative") o = MovingAverage::Cumulative;
  else if (w == "exponential") o = MovingAverage::Exponential;
  else is.setstate(std::ios::failbit);
  return is;
}

// ------------------------------------------------------------ moving averages

namespace {
// dst[i] = f(dst[i], src[i]) over n floats of one device: in place on the CPU,
// through host copies elsewhere (once per update or swap, not per operation).
template <class F>
void combine(Device* dev, float* dst, const float* src, size_t n, F f) {
  if (dev->type == DeviceType::CPU) {
    for (size_t i = 0; i < n; ++i) dst[i] = f(dst[i], src[i]);
    return;
  }
  std::vector<float> d(n), s(n);
  dev->copy_to_host(d.data(), dst, n);
  dev->copy_to_host(s.data(), src, n);
  for (size_t i = 0; i < n; ++i) d[i] = f(d[i], s[i]);
  dev->copy_from_host(dst, d.data(), n);
}
}  // namespace

MovingAverage Trainer::moving_average() { return ma_mode; }

void Trainer::exponential_moving_average(float beta, unsigned update_freq) {
  DYNET_LITE_CHECK(updates == 0, std::runtime_error,
                   name() << "::exponential_moving_average: must be called before the first update");
  DYNET_LITE_ARG_CHECK(beta >= 0 && beta < 1, name() << "::exponential_moving_average: beta must be in [0, 1), got "
                                                     << beta);
  DYNET_LITE_ARG_CHECK(update_freq > 0, name() << "::exponential_moving_average: update_freq must be positive");
  ema_beta = beta;
  ma_update_freq = update_freq;
  ma_mode = MovingAverage::Exponential;
}

void Trainer::cumulative_moving_average(unsigned update_freq) {
  DYNET_LITE_CHECK(updates == 0, std::runtime_error,
                   name() << "::cumulative_moving_average: must be called before the first update");
  DYNET_LITE_ARG_CHECK(update_freq > 0, name() << "::cumulative_moving_average: update_freq must be positive");
  ma_update_freq = update_freq;
  ma_mode = MovingAverage::Cumulative;
}

// Zero buffers for the parameters and tables `p` / `lp` do not cover yet.
void Trainer::allocate_moving_average(std::vector<ShadowParameters>& p, std::vector<ShadowLookupParameters>& lp) {
  allocate_shadow_parameters(*model, static_cast<unsigned>(p.size()), p);
  allocate_shadow_lookup_parameters(*model, static_cast<unsigned>(lp.size()), lp);
}

// ma = beta ma + (1 - beta) x, or ma = (n ma + x) / (n + 1), for every parameter.
void Trainer::update_moving_average() {
  allocate_moving_average(ma_p, ma_lp);
  ma_aux_allocated = static_cast<unsigned>(ma_p.size());
  ma_aux_allocated_lookup = static_cast<unsigned>(ma_lp.size());
  const real beta = ema_beta, n = static_cast<real>(ma_updates);
  auto rule = [&](float ma, float x) {
    return ma_mode == MovingAverage::Exponential ? beta * ma + (1 - beta) * x : (n * ma + x) / (n + 1);
  };
  const auto& params = model->parameters_list();
  const auto& lookups = model->lookup_parameters_list();
  for (size_t i = 0; i < params.size(); ++i)
    combine(params[i]->device, ma_p[i].h.v, params[i]->values.v, params[i]->size(), rule);
  for (size_t i = 0; i < lookups.size(); ++i)
    combine(lookups[i]->device, ma_lp[i].all_h.v, lookups[i]->all_values.v, lookups[i]->size(), rule);
  ++ma_updates;
}

void Trainer::swap_params_to_moving_average(bool save_weights, bool bias_correction) {
  DYNET_LITE_CHECK(ma_mode != MovingAverage::None, std::runtime_error,
                   name() << "::swap_params_to_moving_average: no moving average is kept (call "
                             "exponential_moving_average or cumulative_moving_average before training)");
  DYNET_LITE_CHECK(ma_updates > 0, std::runtime_error,
                   name() << "::swap_params_to_moving_average: no average has been taken yet (no update)");
  if (ma_params_swapped) return;
  allocate_moving_average(ma_p, ma_lp);  // parameters added since the last average: zero
  if (save_weights) allocate_moving_average(ma_saved_p, ma_saved_lp);
  // The average, corrected for its start at zero when asked: ma / (1 - beta^n).
  real scale = 1;
  if (ma_mode == MovingAverage::Exponential && bias_correction)
    scale = 1.f / (1.f - static_cast<real>(std::pow(ema_beta, ma_updates)));
  auto swap_in = [&](Device* dev, float* x, float* saved, const float* ma, size_t n) {
    if (save_weights) dev->copy(saved, x, n);
    combine(dev, x, ma, n, [scale](float, float a) { return scale == 1 ? a : scale * a; });
  };
  const auto& params = model->parameters_list();
  const auto& lookups = model->lookup_parameters_list();
  for (size_t i = 0; i < params.size(); ++i)
    swap_in(params[i]->device, params[i]->values.v, save_weights ? ma_saved_p[i].h.v : nullptr, ma_p[i].h.v,
            params[i]->size());
  for (size_t i = 0; i < lookups.size(); ++i)
    swap_in(lookups[i]->device, lookups[i]->all_values.v, save_weights ? ma_saved_lp[i].all_h.v : nullptr,
            ma_lp[i].all_h.v, lookups[i]->size());
  ma_params_swapped = true;
  ma_params_saved = save_weights;
}

void Trainer::swap_params_to_weights() {
  if (!ma_params_swapped) return;
  DYNET_LITE_CHECK(ma_params_saved, std::runtime_error,
                   name() << ": the parameters hold their moving average and the weights were not saved "
                             "(swap_params_to_moving_average(false)); they cannot be put back or updated");
  // Parameters added while swapped have no saved weights: they keep their values.
  const auto& params = model->parameters_list();
  const auto& lookups = model->lookup_parameters_list();
  for (size_t i = 0; i < ma_saved_p.size(); ++i)
    params[i]->device->copy(params[i]->values.v, ma_saved_p[i].h.v, params[i]->size());
  for (size_t i = 0; i < ma_saved_lp.size(); ++i)
    lookups[i]->device->copy(lookups[i]->all_values.v, ma_saved_lp[i].all_h.v, lookups[i]->size());
  ma_params_swapped = false;
}

// ------------------------------------------------------------ save / populate
//
// The format, one item a line:
//   #Trainer# <name>
//   <field> <value>                      the scalars of fields(), one a line
//   #State# <buffer> <np> <nlp>          a state buffer: np parameters, nlp tables
//   #Parameter# <size> <values...>       np of these
//   #LookupParameter# <size> <values...> then nlp of these
//   #End#
// State buffers are the trainer's (by state_name()), then "ma" (the moving
// averages) and "ma_saved" (the weights while the averages are swapped in).
// Floats are written with 9 significant digits, which read back to the same bits.

namespace {
constexpr const char* kMovingAverage = "ma";
constexpr const char* kSavedWeights = "ma_saved";

void write_values(std::ostream& os, const char* tag, const Tensor& t) {
  std::vector<float> v = as_vector(t);
  os << tag << ' ' << v.size();
  for (float x : v) os << ' ' << x;
  os << '\n';
}

void write_block(std::ostream& os, const char* buffer, const std::vector<ShadowParameters>& p,
                 const std::vector<ShadowLookupParameters>& lp) {
  os << "#State# " << buffer << ' ' << p.size() << ' ' << lp.size() << '\n';
  for (const auto& s : p) write_values(os, "#Parameter#", s.h);
  for (const auto& s : lp) write_values(os, "#LookupParameter#", s.all_h);
}

// A number of the stream, or an error naming its line.
template <class T>
T parse_number(const std::string& text, const std::string& who, unsigned line) {
  const char* begin = text.c_str();
  char* end = nullptr;
  T v{};
  if constexpr (std::is_same<T, float>::value) v = std::strtof(begin, &end);
  else v = static_cast<T>(std::strtoul(begin, &end, 10));
  DYNET_LITE_CHECK(end != begin && *end == '\0', std::runtime_error,
                   who << "::populate: line " << line << ": '" << text << "' is not a number");
  return v;
}
}  // namespace

/// A saved trainer as read from a stream, before anything is applied.
struct Trainer::SavedState {
  struct Block {
    std::vector<std::vector<float>> params, lookups;
  };
  std::map<std::string, std::string> fields;
  std::map<std::string, Block> blocks;
};

void Trainer::fields(std::vector<TrainerField>& out) {
  out.push_back({"learning_rate", &learning_rate});
  out.push_back({"learning_rate0", &learning_rate0});
  out.push_back({"learning_rate_decay", &learning_rate_decay});
  out.push_back({"epoch", &epoch});
  out.push_back({"clipping_enabled", nullptr, nullptr, &clipping_enabled});
  out.push_back({"clip_threshold", &clip_threshold});
  out.push_back({"clips", &clips});
  out.push_back({"updates", &updates});
  out.push_back({"sparse_updates_enabled", nullptr, nullptr, &sparse_updates_enabled});
  out.push_back({"ema_beta", &ema_beta});
  out.push_back({"ma_update_freq", nullptr, &ma_update_freq});
  out.push_back({"ma_updates", nullptr, &ma_updates});
  out.push_back({"ma_params_swapped", nullptr, nullptr, &ma_params_swapped});
  out.push_back({"ma_params_saved", nullptr, nullptr, &ma_params_saved});
}

void Trainer::save(std::ostream& os) {
  allocate_state();
  std::ostringstream out;  // one write to `os`, so a failure leaves nothing half written there
  out << std::setprecision(9);
  out << "#Trainer# " << name() << '\n';
  out << "ma_mode " << ma_mode << '\n';
  std::vector<TrainerField> fs;
  fields(fs);
  for (const auto& f : fs) {
    out << f.name << ' ';
    if (f.r) out << *f.r;
    else if (f.u) out << *f.u;
    else out << (*f.b ? 1 : 0);
    out << '\n';
  }
  for (unsigned k = 0; k < num_state_buffers(); ++k) write_block(out, state_name(k), param_state(k), lookup_state(k));
  if (!ma_p.empty() || !ma_lp.empty()) write_block(out, kMovingAverage, ma_p, ma_lp);
  if (ma_params_swapped && ma_params_saved) write_block(out, kSavedWeights, ma_saved_p, ma_saved_lp);
  out << "#End#\n";
  os << out.str();
  DYNET_LITE_CHECK(os.good(), std::runtime_error, name() << "::save: writing the stream failed");
}

namespace {
// Reads one "#State#" block's `np` + `nlp` value lines into `block`.
template <class Block, class NextLine>
void read_block(Block& block, unsigned np, unsigned nlp, const std::string& who, NextLine next_line) {
  for (unsigned i = 0; i < np + nlp; ++i) {
    unsigned line_no = 0;
    const std::string line = next_line(line_no);
    std::istringstream in(line);
    std::string tag, size_text, value;
    in >> tag >> size_text;
    const char* want = i < np ? "#Parameter#" : "#LookupParameter#";
    DYNET_LITE_CHECK(tag == want, std::runtime_error,
                     who << "::populate: line " << line_no << ": expected " << want << ", got '" << tag << "'");
    const unsigned n = parse_number<unsigned>(size_text, who, line_no);
    std::vector<float> values;
    // The values are on this line: a count beyond its length is not believed
    // (a damaged stream must not reserve gigabytes).
    values.reserve(std::min<size_t>(n, line.size() / 2 + 1));
    while (in >> value) values.push_back(parse_number<float>(value, who, line_no));
    DYNET_LITE_CHECK(values.size() == n, std::runtime_error,
                     who << "::populate: line " << line_no << ": " << n << " values announced, " << values.size()
                         << " found");
    (i < np ? block.params : block.lookups).push_back(std::move(values));
  }
}
}  // namespace

void Trainer::populate(std::istream& is) {
  const std::string who = name();
  unsigned line_no = 0;
  auto next_line = [&](unsigned& at) {
    std::string line;
    DYNET_LITE_CHECK(std::getline(is, line), std::runtime_error,
                     who << "::populate: the stream ends at line " << line_no << " before #End#");
    at = ++line_no;
    return line;
  };
  unsigned at = 0;
  std::istringstream head(next_line(at));
  std::string tag, saved_name;
  head >> tag >> saved_name;
  DYNET_LITE_CHECK(tag == "#Trainer#", std::runtime_error,
                   who << "::populate: line 1: expected '#Trainer# <name>', got '" << tag << "'");
  DYNET_LITE_CHECK(saved_name == who, std::runtime_error,
                   who << "::populate: the stream holds the state of a " << saved_name);
  SavedState saved;
  while (true) {
    std::istringstream in(next_line(at));
    std::string key, value;
    in >> key;
    if (key == "#End#") break;
    if (key == "#State#") {
      std::string buffer, np, nlp;
      in >> buffer >> np >> nlp;
      DYNET_LITE_CHECK(!saved.blocks.count(buffer), std::runtime_error,
                       who << "::populate: line " << at << ": state '" << buffer << "' appears twice");
      read_block(saved.blocks[buffer], parse_number<unsigned>(np, who, at), parse_number<unsigned>(nlp, who, at), who,
                 next_line);
      continue;
    }
    in >> value;
    DYNET_LITE_CHECK(!key.empty() && !value.empty(), std::runtime_error,
                     who << "::populate: line " << at << ": expected '<field> <value>'");
    saved.fields[key] = value;
  }
  apply_saved_state(saved);
}

void Trainer::populate(std::istream& is, real lr) {
  populate(is);
  learning_rate = lr;
}

namespace {
// The sizes of `block` against the model's parameters and tables.
template <class Block>
void check_block(const Block& block, const std::string& buffer, const ParameterCollection& model,
                 const std::string& who) {
  const auto& params = model.parameters_list();
  const auto& lookups = model.lookup_parameters_list();
  DYNET_LITE_CHECK(block.params.size() <= params.size() && block.lookups.size() <= lookups.size(), std::runtime_error,
                   who << "::populate: state '" << buffer << "' is for " << block.params.size() << " parameters and "
                       << block.lookups.size() << " lookup tables; the collection has " << params.size() << " and "
                       << lookups.size());
  for (size_t i = 0; i < block.params.size(); ++i)
    DYNET_LITE_CHECK(block.params[i].size() == params[i]->size(), std::runtime_error,
                     who << "::populate: state '" << buffer << "' of parameter " << i << " ('" << params[i]->name
                         << "', " << params[i]->dim << ") has " << block.params[i].size() << " values");
  for (size_t i = 0; i < block.lookups.size(); ++i)
    DYNET_LITE_CHECK(block.lookups[i].size() == lookups[i]->size(), std::runtime_error,
                     who << "::populate: state '" << buffer << "' of lookup table " << i << " ('" << lookups[i]->name
                         << "', " << lookups[i]->all_dim << ") has " << block.lookups[i].size() << " values");
}

// Copies a block into shadow buffers; those it does not cover become zero.
template <class Block>
void store_block(const Block& block, std::vector<ShadowParameters>& p, std::vector<ShadowLookupParameters>& lp) {
  for (size_t i = 0; i < p.size(); ++i)
    if (i < block.params.size()) TensorTools::set_elements(p[i].h, block.params[i]);
    else TensorTools::zero(p[i].h);
  for (size_t i = 0; i < lp.size(); ++i)
    if (i < block.lookups.size()) TensorTools::set_elements(lp[i].all_h, block.lookups[i]);
    else TensorTools::zero(lp[i].all_h);
}
}  // namespace

void Trainer::apply_saved_state(const SavedState& saved) {
  const std::string who = name();
  // Check everything first: a bad stream changes nothing.
  std::vector<TrainerField> fs;
  fields(fs);
  auto field = [&](const std::string& key) -> const std::string& {
    auto it = saved.fields.find(key);
    DYNET_LITE_CHECK(it != saved.fields.end(), std::runtime_error, who << "::populate: no value for '" << key << "'");
    return it->second;
  };
  std::istringstream mode_text(field("ma_mode"));
  MovingAverage mode;
  DYNET_LITE_CHECK(mode_text >> mode, std::runtime_error,
                   who << "::populate: ma_mode '" << field("ma_mode") << "' is not none, cumulative or exponential");
  for (const auto& f : fs) {
    if (f.r) parse_number<float>(field(f.name), who, 0);
    else parse_number<unsigned>(field(f.name), who, 0);
  }
  DYNET_LITE_CHECK(saved.fields.size() == fs.size() + 1, std::runtime_error,
                   who << "::populate: the stream has " << saved.fields.size() - 1 << " fields, " << who << " has "
                       << fs.size());
  std::map<std::string, std::pair<std::vector<ShadowParameters>*, std::vector<ShadowLookupParameters>*>> targets;
  for (unsigned k = 0; k < num_state_buffers(); ++k) targets[state_name(k)] = {&param_state(k), &lookup_state(k)};
  targets[kMovingAverage] = {&ma_p, &ma_lp};
  targets[kSavedWeights] = {&ma_saved_p, &ma_saved_lp};
  for (const auto& b : saved.blocks) {
    DYNET_LITE_CHECK(targets.count(b.first), std::runtime_error,
                     who << "::populate: " << who << " has no state '" << b.first << "'");
    check_block(b.second, b.first, *model, who);
  }

  for (const auto& f : fs) {
    const std::string& v = field(f.name);
    if (f.r) *f.r = parse_number<float>(v, who, 0);
    else if (f.u) *f.u = parse_number<unsigned>(v, who, 0);
    else *f.b = parse_number<unsigned>(v, who, 0) != 0;
  }
  ma_mode = mode;
  allocate_state();
  for (const auto& b : saved.blocks) {
    auto& t = targets[b.first];
    if (b.first == kMovingAverage || b.first == kSavedWeights) allocate_moving_average(*t.first, *t.second);
    store_block(b.second, *t.first, *t.second);
  }
  ma_aux_allocated = static_cast<unsigned>(ma_p.size());
  ma_aux_allocated_lookup = static_cast<unsigned>(ma_lp.size());
}

}  // namespace dynet_lite
