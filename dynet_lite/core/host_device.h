#pragma once
// Marks a function that both the CPU code and CUDA kernels call (the element-wise
// math of backends/elementwise_math.h, the trainers' rules of backends/update_rules.h).
#if defined(__CUDACC__)
#define DYNET_LITE_HOST_DEVICE __host__ __device__
#else
#define DYNET_LITE_HOST_DEVICE
#endif
