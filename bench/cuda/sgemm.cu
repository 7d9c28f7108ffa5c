// The compute-bound kernel of ferry_bench_cuda_driver (bench/cuda_driver.cpp): C = A B
// for n x n row-major matrices, in 16 x 16 tiles through shared memory. bench/gpu/cuda.sh
// compiles it to PTX with nvcc on the GPU machine (nvcc -ptx -arch=sm_80); the driver
// then JITs the same PTX natively and on Ferry's server alike.
extern "C" __global__ void sgemm(const float* a, const float* b, float* c, int n) {
  __shared__ float tile_a[16][16];
  __shared__ float tile_b[16][16];
  const int row = blockIdx.y * 16 + threadIdx.y;
  const int column = blockIdx.x * 16 + threadIdx.x;
  float sum = 0.0f;
  for (int k0 = 0; k0 < n; k0 += 16) {
    tile_a[threadIdx.y][threadIdx.x] = row < n && k0 + threadIdx.x < n ? a[row * n + k0 + threadIdx.x] : 0.0f;
    tile_b[threadIdx.y][threadIdx.x] = column < n && k0 + threadIdx.y < n ? b[(k0 + threadIdx.y) * n + column] : 0.0f;
    __syncthreads();
    for (int k = 0; k < 16; ++k) sum += tile_a[threadIdx.y][k] * tile_b[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && column < n) c[row * n + column] = sum;
}
