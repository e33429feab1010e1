#pragma once
/// \file functors.h
/// DyNet's header of element-wise functors.  dynet_lite keeps its functors
/// internal (backends/elementwise_math.h); what DyNet programs read from this
/// header is the floor of its log-domain clamps.
#include <limits>

/// The smallest normal float: log-domain clamps use log(DYNET_DEVICE_MIN) for
/// log(0), so binary_log_loss at x = 0 or 1 against a target it misses costs
/// -log(DYNET_DEVICE_MIN) = 87.34.
#ifndef DYNET_DEVICE_MIN
#define DYNET_DEVICE_MIN std::numeric_limits<float>::min()
#endif
