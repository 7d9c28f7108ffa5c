// OpenCL C sources shared by the integration tests.
#pragma once

namespace ferry::test::kernels {

inline constexpr const char* vector_add = R"CLC(
kernel void vector_add(global const float* a, global const float* b, global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
)CLC";

inline constexpr const char* basics = R"CLC(
kernel void scale(global float* x, float factor) {
  size_t i = get_global_id(0);
  x[i] = x[i] * factor;
}

kernel void add_one(global int* x) {
  x[get_global_id(0)] += 1;
}

kernel void iota(global int* x, int base) {
  x[get_global_id(0)] = base + (int)get_global_id(0);
}

kernel void empty() {}

kernel void spin(global int* x, int rounds) {
  size_t i = get_global_id(0);
  int v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 1103515245 + 12345;
  x[i] = v;
}
)CLC";

}  // namespace ferry::test::kernels
