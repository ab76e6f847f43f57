// A torch tensor over memory dlarray owns, with a deleter: torch calls `release(ctx)` when
// the last tensor (or view) of the storage goes, so no torch view can outlive the memory.
// tch's own `from_blob` has no deleter (torch-sys `at_tensor_of_blob`).
//
// Nothing thrown here crosses into Rust: every exception becomes an error string.
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/TensorOptions.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>

extern "C" {

typedef void (*dlarray_tch_release)(void *ctx);

// Returns a heap `at::Tensor*` (tch's `C_tensor`) of `ndim` sizes and element strides over
// `data`, of scalar type `scalar_type` (c10's numbering) on CPU (`cuda_index` < 0) or CUDA
// device `cuda_index`. On failure returns NULL and sets `*err` to a malloc'ed message.
void *dlarray_tch_from_blob(void *data, const int64_t *sizes, const int64_t *strides,
                            size_t ndim, int scalar_type, int cuda_index,
                            dlarray_tch_release release, void *ctx, char **err) {
  *err = nullptr;
  try {
    c10::Device device = cuda_index < 0
                             ? c10::Device(c10::kCPU)
                             : c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(cuda_index));
    auto options = c10::TensorOptions()
                       .dtype(static_cast<c10::ScalarType>(scalar_type))
                       .device(device);
    at::Tensor t = at::from_blob(
        data, c10::IntArrayRef(sizes, ndim), c10::IntArrayRef(strides, ndim),
        [release, ctx](void *) { release(ctx); }, options, device);
    return new at::Tensor(std::move(t));
  } catch (const std::exception &e) {
    *err = strdup(e.what());
  } catch (...) {
    *err = strdup("unknown C++ exception");
  }
  return nullptr;
}

void dlarray_tch_free_error(char *err) { std::free(err); }

}  // extern "C"
