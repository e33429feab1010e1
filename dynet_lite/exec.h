#pragma once
/// \file exec.h
/// DyNet's header of its execution engines.  dynet_lite's executors are internal
/// (exec/); a program chooses between plain and batched execution with the
/// global autobatch_flag (or --dynet-autobatch), declared in init.h with the
/// other globals DyNet programs set directly.
#include "dynet_lite/init.h"
