/* A C program with no Python: it links libtorch, loads the dlspan operator library
 * (libdlspan_torch_native.so, whose load-time constructor registers its operators), and calls
 * dlspan_native::gelu_bias and dlspan_native::scale_ through PyTorch's dispatcher with
 * torch_call_dispatcher, as a libtorch C++ program or an AOTInductor package would.
 *
 *   cc call_dispatcher.c -o call_dispatcher -L$TORCH/lib -ltorch_cpu -lc10 -Wl,-rpath,$TORCH/lib -ldl -lm
 *   ./call_dispatcher path/to/libdlspan_torch_native.so
 *
 * Prints "ok" and exits 0 when every result is right and no Python library is in the process. The shim's headers are C++ (they use
 * `using`), so the prototypes are declared here, as SPEC.md §9 records them. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void *AtenTensorHandle;
typedef int32_t AOTITorchError;
typedef uint64_t StableIValue;

extern int32_t aoti_torch_dtype_float32(void);
extern int32_t aoti_torch_dtype_int32(void);
extern int32_t aoti_torch_device_type_cpu(void);
extern uint64_t aoti_torch_abi_version(void);
extern AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t *sizes, const int64_t *strides,
                                               int32_t dtype, int32_t device_type, int32_t device_index,
                                               AtenTensorHandle *out);
extern AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle t, void **out);
extern AOTITorchError aoti_torch_get_dim(AtenTensorHandle t, int64_t *out);
extern AOTITorchError aoti_torch_get_sizes(AtenTensorHandle t, int64_t **out);
extern AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle t, AtenTensorHandle *out);
extern AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle t);
extern AOTITorchError torch_call_dispatcher(const char *op, const char *overload, StableIValue *stack,
                                            uint64_t extension_build_version);
/* 2.13 and later; weak, so that the program also runs on an older torch. */
extern const char *torch_exception_get_what_without_backtrace(void) __attribute__((weak));

#define CHECK(call)                                                                     \
    do {                                                                                \
        if ((call) != 0) {                                                              \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);           \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

static AtenTensorHandle tensor(int64_t ndim, const int64_t *sizes, const int64_t *strides, int32_t dtype) {
    AtenTensorHandle t = NULL;
    if (aoti_torch_empty_strided(ndim, sizes, strides, dtype, aoti_torch_device_type_cpu(), 0, &t) != 0) return NULL;
    return t;
}

static void *data(AtenTensorHandle t) {
    void *p = NULL;
    aoti_torch_get_data_ptr(t, &p);
    return p;
}

/* The dispatcher consumes the handles it is given: pass a new reference, keep ours. */
static StableIValue pass(AtenTensorHandle t) {
    AtenTensorHandle ref = NULL;
    aoti_torch_new_tensor_handle(t, &ref);
    return (StableIValue)(uintptr_t)ref;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s libdlspan_torch_native.so\n", argv[0]);
        return 2;
    }
    if (!dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    const uint64_t version = aoti_torch_abi_version();

    /* gelu_bias(x [3, 4], b [4]) -> [3, 4] */
    const int64_t xs[2] = {3, 4}, xst[2] = {4, 1}, bs[1] = {4}, bst[1] = {1};
    AtenTensorHandle x = tensor(2, xs, xst, aoti_torch_dtype_float32());
    AtenTensorHandle b = tensor(1, bs, bst, aoti_torch_dtype_float32());
    if (!x || !b) return 1;
    float *xp = data(x), *bp = data(b);
    for (int i = 0; i < 12; i++) xp[i] = (float)i / 4.0f - 1.5f;
    for (int j = 0; j < 4; j++) bp[j] = 0.25f * (float)j;
    StableIValue stack[2] = {pass(x), pass(b)};
    CHECK(torch_call_dispatcher("dlspan_native::gelu_bias", "", stack, version));
    AtenTensorHandle y = (AtenTensorHandle)(uintptr_t)stack[0];
    int64_t dim = 0, *sizes = NULL;
    CHECK(aoti_torch_get_dim(y, &dim));
    CHECK(aoti_torch_get_sizes(y, &sizes));
    if (dim != 2 || sizes[0] != 3 || sizes[1] != 4) {
        fprintf(stderr, "gelu_bias: result of rank %lld\n", (long long)dim);
        return 1;
    }
    const float *yp = data(y);
    for (int i = 0; i < 12; i++) {
        float v = xp[i] + bp[i % 4];
        float expected = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        if (fabsf(yp[i] - expected) > 1e-6f) {
            fprintf(stderr, "gelu_bias[%d] = %g, expected %g\n", i, yp[i], expected);
            return 1;
        }
    }

    /* scale_(x, 2.0) in place: a float is a double, bit-copied into its slot. */
    double s = 2.0;
    StableIValue in_place[2] = {pass(x), 0};
    memcpy(&in_place[1], &s, sizeof s);
    CHECK(torch_call_dispatcher("dlspan_native::scale_", "", in_place, version));
    for (int i = 0; i < 12; i++) {
        float expected = 2.0f * ((float)i / 4.0f - 1.5f);
        if (xp[i] != expected) {
            fprintf(stderr, "scale_[%d] = %g, expected %g\n", i, xp[i], expected);
            return 1;
        }
    }

    /* A kernel's error is the call's error, with dlspan's message; nothing is returned. */
    AtenTensorHandle ints = tensor(1, bs, bst, aoti_torch_dtype_int32());
    StableIValue bad[2] = {pass(ints), pass(ints)};
    if (torch_call_dispatcher("dlspan_native::gelu_bias", "", bad, version) == 0) {
        fprintf(stderr, "gelu_bias accepted int32 tensors\n");
        return 1;
    }
    if (torch_exception_get_what_without_backtrace) {
        const char *what = torch_exception_get_what_without_backtrace();
        if (!what || !strstr(what, "argument `x`")) {
            fprintf(stderr, "the error does not name the argument: %s\n", what ? what : "(null)");
            return 1;
        }
    }

    /* No Python was loaded into this process. */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) {
        if (strstr(line, "libpython")) {
            fprintf(stderr, "a Python library is mapped: %s", line);
            return 1;
        }
    }
    if (maps) fclose(maps);

    CHECK(aoti_torch_delete_tensor_object(y));
    CHECK(aoti_torch_delete_tensor_object(ints));
    CHECK(aoti_torch_delete_tensor_object(b));
    CHECK(aoti_torch_delete_tensor_object(x));
    printf("ok\n");
    return 0;
}
