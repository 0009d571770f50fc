/* The C side of the round trip: a producer of DLPack managed tensors (one malloc block each, a
   deleter that frees it and counts), and a consumer that walks any float32 tensor through its
   shape, strides and byte_offset, then calls the producer's deleter. Compiled by tests/c_roundtrip.rs
   against a real dlpack.h. */
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static long deleted = 0;

long c_deleted_count(void) { return deleted; }

typedef struct {
  DLManagedTensorVersioned managed;
  int64_t shape[2];
  int64_t strides[2];
  float data[];
} VersionedBlock;

static void delete_versioned(DLManagedTensorVersioned* self) {
  deleted += 1;
  free(self); /* the header is the first member of the block */
}

/* rows x cols float32, row-major, data[i] = i * 0.5 */
DLManagedTensorVersioned* c_make_versioned(int64_t rows, int64_t cols, uint64_t flags, uint32_t major) {
  VersionedBlock* block = malloc(sizeof(VersionedBlock) + sizeof(float) * (size_t)(rows * cols));
  if (!block) return NULL;
  for (int64_t i = 0; i < rows * cols; ++i) block->data[i] = (float)i * 0.5f;
  block->shape[0] = rows;
  block->shape[1] = cols;
  block->strides[0] = cols;
  block->strides[1] = 1;
  DLManagedTensorVersioned* m = &block->managed;
  m->version.major = major;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = block;
  m->deleter = delete_versioned;
  m->flags = flags;
  m->dl_tensor.data = (rows * cols != 0) ? (void*)block->data : NULL;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = block->shape;
  m->dl_tensor.strides = block->strides;
  m->dl_tensor.byte_offset = 0;
  return m;
}

typedef struct {
  DLManagedTensor managed;
  int64_t shape[1];
  float data[];
} LegacyBlock;

static void delete_legacy(DLManagedTensor* self) {
  deleted += 1;
  free(self);
}

/* n float32 values, legacy, strides NULL (compact row-major, as producers before DLPack 1.2 send). */
DLManagedTensor* c_make_legacy(int64_t n) {
  LegacyBlock* block = malloc(sizeof(LegacyBlock) + sizeof(float) * (size_t)n);
  if (!block) return NULL;
  for (int64_t i = 0; i < n; ++i) block->data[i] = (float)(n - i);
  block->shape[0] = n;
  DLManagedTensor* m = &block->managed;
  m->manager_ctx = block;
  m->deleter = delete_legacy;
  m->dl_tensor.data = block->data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = block->shape;
  m->dl_tensor.strides = NULL;
  m->dl_tensor.byte_offset = 0;
  return m;
}

/* Sum of a float32 CPU tensor of rank <= 8, visiting elements through shape, strides (NULL: row-major)
   and byte_offset, weighted by their logical (row-major) position: sum of (k + 1) * value. NAN for
   anything else. */
static double weighted_sum(const DLTensor* t) {
  if (t->device.device_type != kDLCPU || t->dtype.code != kDLFloat || t->dtype.bits != 32 ||
      t->dtype.lanes != 1 || t->ndim < 0 || t->ndim > 8)
    return NAN;
  int64_t strides[8];
  int64_t size = 1;
  for (int d = t->ndim - 1; d >= 0; --d) {
    strides[d] = t->strides ? t->strides[d] : size;
    size *= t->shape[d];
  }
  if (size == 0) return 0.0;
  const char* base = (const char*)t->data + t->byte_offset;
  int64_t index[8] = {0};
  double sum = 0.0;
  for (int64_t k = 0; k < size; ++k) {
    int64_t offset = 0;
    for (int d = 0; d < t->ndim; ++d) offset += index[d] * strides[d];
    sum += (double)(k + 1) * ((const float*)base)[offset];
    for (int d = t->ndim - 1; d >= 0; --d) {
      if (++index[d] < t->shape[d]) break;
      index[d] = 0;
    }
  }
  return sum;
}

/* Consumes a versioned tensor: checks the major version and the flags it is told to expect, reads
   it, calls its deleter. */
double c_consume_versioned(DLManagedTensorVersioned* m, uint64_t expected_flags) {
  double sum = NAN;
  if (m->version.major == DLPACK_MAJOR_VERSION && m->flags == expected_flags) sum = weighted_sum(&m->dl_tensor);
  if (m->deleter) m->deleter(m);
  return sum;
}

/* Consumes a legacy tensor, and calls its deleter. */
double c_consume_legacy(DLManagedTensor* m) {
  double sum = weighted_sum(&m->dl_tensor);
  if (m->deleter) m->deleter(m);
  return sum;
}

/* Reads a borrowed DLTensor (a dlspan view exported with to_dlpack_tensor): no ownership. */
double c_read_borrowed(const DLTensor* t) { return weighted_sum(t); }
