// dlspan.cuh: the device-side header of dlspan's kernels (dlspan::kernel::HEADER, and the file
// runtime/src/cuda/include/dlspan.cuh of the crate, whose directory is dlspan::kernel::INCLUDE_DIR).
// Every kernel dlspan compiles starts with it: the generated copy, cast and element-wise kernels
// use its storage types, parameter block and conversions; raw kernels (dlspan::kernel!) its
// views, index helpers, dynamic shared memory and atomics (namespace dl, at the end). Include it in
// your own CUDA files to use the same types: plain C++17, no CUDA header.
//
// Three builds of one text:
// - NVRTC or nvcc, for the GPU;
// - a host C++ compiler with DLSPAN_HOST: kernels become plain functions that the host-logic tests
//   run block by block, thread after thread, on one thread (kernels with barriers run each phase
//   for every thread themselves);
// - a host C++ compiler with DLSPAN_CPU (raw kernels on the CPU, dlspan::kernel::Cpu): blocks run
//   in parallel on OS threads, the threads of a block as fibers of one OS thread that switch at
//   __syncthreads(), so barriers, __shared__ memory (one per running block), atomics and dynamic
//   shared memory behave as on the GPU.
#ifndef DLSPAN_CUH
#define DLSPAN_CUH 1

#if defined(DLSPAN_CPU) && !defined(DLSPAN_HOST)
#define DLSPAN_HOST 1
#endif

#ifdef DLSPAN_HOST
// Host builds: the intrinsics become the exact operations they stand for (compile with
// -ffp-contract=off, as the GPU build uses --fmad=false).
#define DL_KERNEL extern "C" void
#define DL_GLOBAL extern "C" void
#define DL_DEV static inline
#define DL_MEMBER inline  // device functions that cannot be static: members, explicit specialisations
#define DL_HD
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return (unsigned int)(((unsigned long long)a * b) >> 32);
}
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float __uint_as_float(unsigned int x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int x; __builtin_memcpy(&x, &f, 4); return x; }
static inline double __longlong_as_double(long long x) { double f; __builtin_memcpy(&f, &x, 8); return f; }
static inline long long __double_as_longlong(double f) { long long x; __builtin_memcpy(&x, &f, 8); return x; }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
struct dl_dim3 { unsigned int x, y, z; };
#ifdef DLSPAN_CPU
// Raw kernels on the CPU. A launch (dl_cpu_run) runs the grid's blocks on `workers` OS threads,
// each taking the next block from a shared counter; a block's threads are fibers of the worker,
// each with a stack of its own above a guard page, run one after another until each has finished
// or waits at __syncthreads(); then the barrier opens and the next round starts (threads waiting at
// different barriers end the launch with an error: a GPU hangs or misbehaves there). Fibers switch
// with a few instructions on x86-64 (dl_cpu_switch: the callee-saved registers and the stack
// pointer, no system call), with ucontext elsewhere. Everything a block's threads share lives with
// the worker: __shared__ variables are `static thread_local` (one per worker, so one per running
// block), dynamic shared memory a buffer of the worker. Atomics are the host's, relaxed as CUDA's
// are; blocks run in parallel, so only atomics order them, as on the GPU. Built with
// -fno-exceptions (no C++ exceptions, as on the GPU) and -fstack-clash-protection (a frame larger
// than the stack faults at the guard page instead of writing another thread's stack).
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#if defined(__x86_64__) && !defined(DL_CPU_UCONTEXT)
#define DL_CPU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif
// Under valgrind, the fibers' stacks are registered as stacks (client requests: a few instructions
// and no effect outside valgrind), or its memcheck mistakes each switch of stacks for a huge frame.
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define DL_CPU_STACK_REGISTER(start, end) VALGRIND_STACK_REGISTER(start, end)
#define DL_CPU_STACK_DEREGISTER(id) VALGRIND_STACK_DEREGISTER(id)
#endif
#endif
#ifndef DL_CPU_STACK_REGISTER
#define DL_CPU_STACK_REGISTER(start, end) 0u
#define DL_CPU_STACK_DEREGISTER(id) ((void)(id))
#endif

// What ended a launch early, for dlspan's error (kernel/cxx.rs, `CpuReport`).
struct dl_cpu_report {
  unsigned int code;           // the launch's return value (5: threads at different barriers)
  unsigned int block[3];       // the block
  unsigned int threads[2][3];  // two of its threads that wait at different barriers
  unsigned int lines[2];       // the lines of those barriers
};

// One worker's stacks, made (each above a guard page) and kept between launches by dlspan's Rust
// side (kernel/stacks.rs, `CpuStacks`).
struct dl_cpu_stack_set {
  unsigned char* base;       // the lowest byte of the first stack
  unsigned long long stride; // from one stack to the next (a stack and the next one's guard page)
  unsigned long long bytes;  // each stack's bytes
  unsigned int threads;      // how many stacks (at least the block's threads)
  unsigned int reserved;
};

// The launch, as dlspan's Rust side fills it (kernel/cxx.rs, `CpuLaunch`).
struct dl_cpu_launch {
  unsigned int grid[3];
  unsigned int block[3];
  unsigned long long shared_bytes;  // dynamic shared memory per block
  const dl_cpu_stack_set* stacks;   // one per worker
  unsigned int workers;             // OS threads running blocks (at most): how many sets `stacks` holds
  unsigned int reserved;
  dl_cpu_report* report;            // filled when the launch fails
};

#ifdef DL_CPU_ASM_SWITCH
// Saves the callee-saved registers (System V AMD64: rbp, rbx, r12-r15) on the current stack,
// stores the stack pointer in *from, and resumes the context whose stack pointer is `to`. The x87
// control word and MXCSR are the OS thread's, shared by its fibers (kernels do not change them).
// Weak and hidden: one per library, whichever translation units include this header.
extern "C" void dl_cpu_switch(void** from, void* to) __attribute__((visibility("hidden")));
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".weak dl_cpu_switch\n"
    ".hidden dl_cpu_switch\n"
    ".type dl_cpu_switch, @function\n"
    "dl_cpu_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size dl_cpu_switch, .-dl_cpu_switch\n");
#endif

struct dl_cpu_fiber {
#ifdef DL_CPU_ASM_SWITCH
  void* sp;  // its saved stack pointer while it does not run
#else
  ucontext_t context;
#endif
  dl_dim3 thread;
  int state;  // 0 runnable, 1 waiting at the barrier, 2 finished
  unsigned int line;  // the line of the barrier it waits at
  unsigned int stack_id;  // valgrind's id of its stack (0 outside valgrind)
};

struct dl_cpu_run;

struct dl_cpu_worker {
#ifdef DL_CPU_ASM_SWITCH
  void* scheduler;
#else
  ucontext_t scheduler;
#endif
  dl_cpu_fiber* fibers;
  unsigned int threads;
  unsigned int current;
  dl_dim3 block, block_dim, grid_dim;
  unsigned char* stacks;
  size_t stack_stride;
  size_t stack_bytes;
  int registered;  // whether its stacks are registered with valgrind
  unsigned char* shared;
  int votes, vote_count, vote_arrived;  // __syncthreads_count/and/or
  dl_cpu_run* run;
  pthread_t handle;
  int started;
};

struct dl_cpu_run {
  const dl_cpu_launch* launch;
  void (*kernel)(const void*);
  const void* args;
  unsigned long long blocks;
  unsigned long long next;  // the next block to run, taken atomically
  int failed;               // set (atomically, first error wins) when a block fails: no more blocks
};

static thread_local dl_cpu_worker* dl_cpu_self = 0;

#define threadIdx (dl_cpu_self->fibers[dl_cpu_self->current].thread)
#define blockIdx (dl_cpu_self->block)
#define blockDim (dl_cpu_self->block_dim)
#define gridDim (dl_cpu_self->grid_dim)
static const int warpSize = 32;
#define __shared__ static thread_local
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define DL_SHARED static thread_local
#define DL_EACH_THREAD

// Back from fiber `f` to its worker's scheduler, or from the scheduler into `f`.
static inline void dl_cpu_to_scheduler(dl_cpu_worker* w, dl_cpu_fiber* f) {
#ifdef DL_CPU_ASM_SWITCH
  dl_cpu_switch(&f->sp, w->scheduler);
#else
  swapcontext(&f->context, &w->scheduler);
#endif
}
static inline void dl_cpu_to_fiber(dl_cpu_worker* w, dl_cpu_fiber* f) {
#ifdef DL_CPU_ASM_SWITCH
  dl_cpu_switch(&w->scheduler, f->sp);
#else
  swapcontext(&w->scheduler, &f->context);
#endif
}

// The current thread waits at the barrier of `line`: back to the scheduler until every thread of
// its block that has not finished waits too (at the same barrier, or the launch fails). The line is
// the caller's (__builtin_LINE() as a default argument), in the kernel's own file.
static inline void dl_cpu_wait(unsigned int line) {
  dl_cpu_worker* w = dl_cpu_self;
  dl_cpu_fiber* f = &w->fibers[w->current];
  f->state = 1;
  f->line = line;
  dl_cpu_to_scheduler(w, f);
}
static inline void __syncthreads(unsigned int line = __builtin_LINE()) { dl_cpu_wait(line); }
static inline int __syncthreads_count(int predicate, unsigned int line = __builtin_LINE()) {
  dl_cpu_self->votes += predicate != 0;
  dl_cpu_wait(line);
  return dl_cpu_self->vote_count;
}
static inline int __syncthreads_and(int predicate, unsigned int line = __builtin_LINE()) {
  dl_cpu_self->votes += predicate != 0;
  dl_cpu_wait(line);
  return dl_cpu_self->vote_count == dl_cpu_self->vote_arrived;
}
static inline int __syncthreads_or(int predicate, unsigned int line = __builtin_LINE()) {
  dl_cpu_self->votes += predicate != 0;
  dl_cpu_wait(line);
  return dl_cpu_self->vote_count != 0;
}
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
template <class T> static inline T __ldg(const T* p) { return *p; }

// CUDA's atomic functions, on the host's atomics (relaxed, as CUDA's are).
#define DL_CPU_ATOMIC_INT(T)                                                                         \
  static inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }       \
  static inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }       \
  static inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }     \
  static inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }       \
  static inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }         \
  static inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }       \
  static inline T atomicCAS(T* a, T expected, T v) {                                                \
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);        \
    return expected;                                                                                \
  }                                                                                                 \
  static inline T atomicMin(T* a, T v) {                                                            \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                   \
    while (v < old && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
    }                                                                                               \
    return old;                                                                                     \
  }                                                                                                 \
  static inline T atomicMax(T* a, T v) {                                                            \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                   \
    while (v > old && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
    }                                                                                               \
    return old;                                                                                     \
  }
DL_CPU_ATOMIC_INT(int)
DL_CPU_ATOMIC_INT(unsigned int)
DL_CPU_ATOMIC_INT(long long)
DL_CPU_ATOMIC_INT(unsigned long long)
#define DL_CPU_ATOMIC_FLOAT(T, B)                                                                    \
  static inline T atomicAdd(T* a, T v) {                                                            \
    B old = __atomic_load_n((B*)a, __ATOMIC_RELAXED), next;                                         \
    do {                                                                                            \
      T x;                                                                                          \
      __builtin_memcpy(&x, &old, sizeof x);                                                         \
      x = x + v;                                                                                    \
      __builtin_memcpy(&next, &x, sizeof x);                                                        \
    } while (!__atomic_compare_exchange_n((B*)a, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
    T result;                                                                                       \
    __builtin_memcpy(&result, &old, sizeof result);                                                 \
    return result;                                                                                  \
  }                                                                                                 \
  static inline T atomicExch(T* a, T v) {                                                           \
    B bits, old;                                                                                    \
    __builtin_memcpy(&bits, &v, sizeof bits);                                                       \
    old = __atomic_exchange_n((B*)a, bits, __ATOMIC_RELAXED);                                       \
    T result;                                                                                       \
    __builtin_memcpy(&result, &old, sizeof result);                                                 \
    return result;                                                                                  \
  }
DL_CPU_ATOMIC_FLOAT(float, unsigned int)
DL_CPU_ATOMIC_FLOAT(double, unsigned long long)
// atomicInc and atomicDec wrap at `limit`, as CUDA's do.
static inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
  unsigned int old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(a, &old, old >= limit ? 0u : old + 1u, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
static inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
  unsigned int old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(a, &old, (old == 0u || old > limit) ? limit : old - 1u, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}

// CUDA's bit and fast-math intrinsics, as the exact operations (or the host's libm) they stand for.
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fdividef(float a, float b) { return a / b; }
// (glibc declares functions of these names: macros, after <math.h>, name the libm functions.)
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __powf(x, y) powf(x, y)
static inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// CUDA's min and max overloads.
#define DL_CPU_MINMAX(T)                                                \
  static inline T min(T a, T b) { return b < a ? b : a; }              \
  static inline T max(T a, T b) { return a < b ? b : a; }
DL_CPU_MINMAX(int)
DL_CPU_MINMAX(unsigned int)
DL_CPU_MINMAX(long long)
DL_CPU_MINMAX(unsigned long long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

// A fiber's first function: the kernel for its thread, then back to the scheduler for good.
static void dl_cpu_fiber_main() {
  dl_cpu_worker* w = dl_cpu_self;
  w->run->kernel(w->run->args);
  w->fibers[w->current].state = 2;
#ifdef DL_CPU_ASM_SWITCH
  dl_cpu_to_scheduler(w, &w->fibers[w->current]);
  __builtin_trap();  // a finished fiber is never resumed
#endif
}

// Fiber `f` made ready to start dl_cpu_fiber_main on its stack [base, base + bytes).
static void dl_cpu_fiber_init(dl_cpu_worker* w, dl_cpu_fiber* f, unsigned char* base, size_t bytes) {
#ifdef DL_CPU_ASM_SWITCH
  (void)w;
  // The frame dl_cpu_switch resumes: six callee-saved registers (zero), the return address (the
  // fiber's function), and an empty slot above it, so that the function starts as if called with a
  // 16-byte aligned stack (rsp + 8 a multiple of 16).
  uint64_t* top = (uint64_t*)((uintptr_t)(base + bytes) & ~(uintptr_t)15);
  *--top = 0;
  *--top = (uint64_t)(uintptr_t)&dl_cpu_fiber_main;
  for (int k = 0; k < 6; ++k) *--top = 0;
  f->sp = top;
#else
  getcontext(&f->context);
  f->context.uc_stack.ss_sp = base;
  f->context.uc_stack.ss_size = bytes;
  f->context.uc_link = &w->scheduler;
  makecontext(&f->context, dl_cpu_fiber_main, 0);
#endif
}

// Ends the launch with `code`, describing it in the launch's report when it is the first failure.
static void dl_cpu_fail(dl_cpu_worker* w, int code, const dl_cpu_fiber* a, const dl_cpu_fiber* b) {
  int expected = 0;
  if (!__atomic_compare_exchange_n(&w->run->failed, &expected, code, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    return;
  }
  dl_cpu_report* r = w->run->launch->report;
  if (!r) return;
  r->code = (unsigned int)code;
  r->block[0] = w->block.x;
  r->block[1] = w->block.y;
  r->block[2] = w->block.z;
  const dl_cpu_fiber* fibers[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    r->threads[k][0] = fibers[k]->thread.x;
    r->threads[k][1] = fibers[k]->thread.y;
    r->threads[k][2] = fibers[k]->thread.z;
    r->lines[k] = fibers[k]->line;
  }
}

// Runs block `b` to its end: rounds of every runnable thread until it waits or finishes. Returns
// 0, or 5 when threads wait at different barriers (the block is abandoned: its fibers' stacks are
// the worker's, and nothing on them is cleaned up).
static int dl_cpu_block(dl_cpu_worker* w, unsigned long long b) {
  const dl_cpu_launch* l = w->run->launch;
  w->block.x = (unsigned int)(b % l->grid[0]);
  w->block.y = (unsigned int)(b / l->grid[0] % l->grid[1]);
  w->block.z = (unsigned int)(b / ((unsigned long long)l->grid[0] * l->grid[1]));
  for (unsigned int t = 0; t < w->threads; ++t) {
    dl_cpu_fiber* f = &w->fibers[t];
    f->thread.x = t % l->block[0];
    f->thread.y = t / l->block[0] % l->block[1];
    f->thread.z = t / (l->block[0] * l->block[1]);
    f->state = 0;
    dl_cpu_fiber_init(w, f, w->stacks + (size_t)t * w->stack_stride, w->stack_bytes);
  }
  unsigned int live = w->threads;
  w->votes = 0;
  while (live > 0) {
    int arrived = 0;
    const dl_cpu_fiber* first = 0;
    for (unsigned int t = 0; t < w->threads; ++t) {
      dl_cpu_fiber* f = &w->fibers[t];
      if (f->state != 0) continue;
      w->current = t;
      dl_cpu_to_fiber(w, f);
      if (f->state == 2) {
        --live;
      } else {
        ++arrived;
        // Every waiting thread waits at one barrier: a barrier in divergent code is undefined on
        // a GPU (it hangs, or pairs barriers that do not belong together).
        if (!first) {
          first = f;
        } else if (f->line != first->line) {
          dl_cpu_fail(w, 5, first, f);
          return 5;
        }
      }
    }
    // Every thread that has not finished waits at the barrier: open it.
    w->vote_count = w->votes;
    w->vote_arrived = arrived;
    w->votes = 0;
    for (unsigned int t = 0; t < w->threads; ++t) {
      if (w->fibers[t].state == 1) w->fibers[t].state = 0;
    }
  }
  return 0;
}

static void* dl_cpu_worker_main(void* p) {
  dl_cpu_worker* w = (dl_cpu_worker*)p;
  dl_cpu_self = w;
  while (!__atomic_load_n(&w->run->failed, __ATOMIC_ACQUIRE)) {
    unsigned long long b = __atomic_fetch_add(&w->run->next, 1ull, __ATOMIC_RELAXED);
    if (b >= w->run->blocks) break;
    if (dl_cpu_block(w, b) != 0) break;
  }
  dl_cpu_self = 0;
  return 0;
}

// One worker of a launch, on the stacks of `set` (each above a guard page), with its shared memory;
// 0 on success, 3 when memory cannot be allocated.
static int dl_cpu_worker_init(dl_cpu_worker* w, dl_cpu_run* run, const dl_cpu_stack_set* set) {
  const dl_cpu_launch* l = run->launch;
  w->run = run;
  w->threads = l->block[0] * l->block[1] * l->block[2];
  w->block_dim.x = l->block[0];
  w->block_dim.y = l->block[1];
  w->block_dim.z = l->block[2];
  w->grid_dim.x = l->grid[0];
  w->grid_dim.y = l->grid[1];
  w->grid_dim.z = l->grid[2];
  w->fibers = (dl_cpu_fiber*)calloc(w->threads, sizeof(dl_cpu_fiber));
  if (!w->fibers) return 3;
  w->stacks = set->base;
  w->stack_bytes = (size_t)set->bytes;
  w->stack_stride = (size_t)set->stride;
  for (unsigned int t = 0; t < w->threads; ++t) {
    unsigned char* start = w->stacks + (size_t)t * w->stack_stride;
    w->fibers[t].stack_id = DL_CPU_STACK_REGISTER(start, start + w->stack_bytes);
  }
  w->registered = 1;
  if (l->shared_bytes > 0) {
    void* shared = 0;
    if (posix_memalign(&shared, 128, (size_t)l->shared_bytes) != 0) return 3;
    w->shared = (unsigned char*)shared;
  }
  return 0;
}

static void dl_cpu_worker_free(dl_cpu_worker* w) {
  if (w->registered) {
    for (unsigned int t = 0; t < w->threads; ++t) DL_CPU_STACK_DEREGISTER(w->fibers[t].stack_id);
  }
  free(w->shared);
  free(w->fibers);
}

// Runs `kernel(args)` for every thread of the grid, on at most `l->workers` workers (one per set of
// stacks); 0 on success, 3 when memory could not be allocated, 5 when the threads of a block
// waited at different barriers (described in l->report). The calling thread is worker 0; a worker
// that cannot be set up, or whose thread cannot be started, leaves its blocks to the others (the
// launch fails only when worker 0 cannot run).
static int dl_cpu_run_kernel(const dl_cpu_launch* l, void (*kernel)(const void*), const void* args) {
  dl_cpu_run run;
  run.launch = l;
  run.kernel = kernel;
  run.args = args;
  run.blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
  run.next = 0;
  run.failed = 0;
  unsigned long long count = l->workers < run.blocks ? l->workers : run.blocks;
  if (count == 0) count = 1;
  dl_cpu_worker* workers = (dl_cpu_worker*)calloc((size_t)count, sizeof(dl_cpu_worker));
  if (!workers) return 3;
  int error = 0;
  unsigned long long ready = 0;
  for (; ready < count; ++ready) {
    error = dl_cpu_worker_init(&workers[ready], &run, &l->stacks[ready]);
    if (error) break;
  }
  if (ready > 0) {
    error = 0;
    for (unsigned long long k = 1; k < ready; ++k) {
      workers[k].started = pthread_create(&workers[k].handle, 0, dl_cpu_worker_main, &workers[k]) == 0;
    }
    dl_cpu_worker_main(&workers[0]);
    for (unsigned long long k = 1; k < ready; ++k) {
      if (workers[k].started) pthread_join(workers[k].handle, 0);
    }
    error = __atomic_load_n(&run.failed, __ATOMIC_ACQUIRE);
  }
  for (unsigned long long k = 0; k < count; ++k) dl_cpu_worker_free(&workers[k]);
  free(workers);
  return error;
}
#else
static dl_dim3 blockIdx, threadIdx, gridDim, blockDim;
// Kernels with barriers (the tiled ones) run each phase for every thread of the block in turn, so
// the host runner calls them once per block; a block's shared memory is a static of the kernel.
static inline void __syncthreads() {}
#define DL_SHARED static
#define DL_EACH_THREAD for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
#endif
#else
#define DL_KERNEL extern "C" __global__ void __launch_bounds__(256)
#define DL_GLOBAL extern "C" __global__ void
#define DL_DEV __device__ __forceinline__
#define DL_MEMBER __device__ __forceinline__
#define DL_HD __host__ __device__
#define DL_SHARED __shared__
#define DL_EACH_THREAD
#endif

// 128-bit integers: g++ has them; NVRTC with --device-int128 (passed for modules that use them).
#if defined(DLSPAN_HOST) || defined(__CUDACC_RTC_INT128__)
#define DL_HAS_INT128 1
typedef __int128 dl_i128;
typedef unsigned __int128 dl_u128;
#endif

typedef unsigned long long dl_u64;
typedef long long dl_i64;

// Storage types, layout-identical to the Rust element types.
template <int N, int A> struct alignas(A) dl_bytes { unsigned char b[N]; };
template <class S, int N, int A> struct alignas(A) dl_lanes { S v[N]; };
template <class S> struct dl_complex { S re, im; };
struct alignas(2) dl_f16 { unsigned short bits; };
struct alignas(2) dl_bf16 { unsigned short bits; };
struct dl_f8e3m4 { unsigned char bits; };
struct dl_f8e4m3 { unsigned char bits; };
struct dl_f8e4m3b11fnuz { unsigned char bits; };
struct dl_f8e4m3fn { unsigned char bits; };
struct dl_f8e4m3fnuz { unsigned char bits; };
struct dl_f8e5m2 { unsigned char bits; };
struct dl_f8e5m2fnuz { unsigned char bits; };
struct dl_f8e8m0fnu { unsigned char bits; };
// kDLBool: one byte, nonzero meaning true. Producers store any byte there, and a C++ `bool` holding
// one other than 0 and 1 is undefined behaviour: kernels read `bits != 0`, and copies and casts
// write 0 or 1 (`dl_truth`), so no `bool` output ever holds another byte.
struct dl_bool { unsigned char bits; };

// A boolean, or lanes of booleans, as the bytes 0 and 1.
DL_DEV dl_bool dl_truth(dl_bool x) { return dl_bool{(unsigned char)(x.bits != 0)}; }
template <int N, int A> DL_DEV dl_lanes<dl_bool, N, A> dl_truth(dl_lanes<dl_bool, N, A> x) {
  for (int k = 0; k < N; ++k) x.v[k].bits = (unsigned char)(x.v[k].bits != 0);
  return x;
}

// V elements of T moved as one aligned load or store (V * sizeof(T) is a power of two).
template <class T, int V> struct alignas(sizeof(T) * V) dl_pack { T e[V]; };

// Kernel parameters, passed by value; mirrored by `Params` on the Rust side.
#define DL_MAX_RANK 16
struct dl_operand {
  dl_u64 ptr;                  // address of the element at index 0
  dl_i64 stride[DL_MAX_RANK];  // in elements, merged axes, outermost first
};
struct alignas(16) dl_params {
  dl_u64 n;                          // number of elements
  int ndim;                          // merged axes
  int reserved;
  dl_i64 extent[DL_MAX_RANK];
  unsigned int magic[DL_MAX_RANK];   // 32-bit division by extent[k]: (umulhi(x, magic) + x) >> shift
  unsigned int shift[DL_MAX_RANK];
  dl_operand op[8];                  // the output (the primary view) first, then the inputs
  alignas(16) unsigned char scalar[128];  // scalar arguments, each at its offset
};
static_assert(sizeof(dl_params) == 1488, "dl_params mirrors the Rust Params struct");

// A scalar argument of any element type, read byte by byte (its alignment may exceed the
// parameter buffer's).
template <class T> DL_DEV T dl_scalar(const unsigned char* bytes) {
  union { T value; unsigned char b[sizeof(T)]; } u;
  for (int k = 0; k < (int)sizeof(T); ++k) u.b[k] = bytes[k];
  return u.value;
}

// IEEE binary16 and bfloat16 to and from binary32, bit for bit as the `half` crate converts
// (round to nearest even, NaN payloads kept with the quiet bit set).
DL_DEV float dl_f16_to_f32(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  unsigned int exp = h & 0x7C00u;
  unsigned int man = h & 0x03FFu;
  if ((h & 0x7FFFu) == 0) return __uint_as_float(sign);
  if (exp == 0x7C00u) {
    return __uint_as_float(man == 0 ? (sign | 0x7F800000u) : (sign | 0x7FC00000u | (man << 13)));
  }
  if (exp == 0) {
    int e = 0;
    while ((man & 0x0400u) == 0) { man <<= 1; ++e; }
    man &= 0x03FFu;
    return __uint_as_float(sign | ((unsigned int)(127 - 15 - e + 1) << 23) | (man << 13));
  }
  return __uint_as_float(sign | (((exp >> 10) + 127 - 15) << 23) | (man << 13));
}

DL_DEV unsigned short dl_f32_to_f16(float value) {
  unsigned int x = __float_as_uint(value);
  unsigned int sign = x & 0x80000000u, exp = x & 0x7F800000u, man = x & 0x007FFFFFu;
  if (exp == 0x7F800000u) {
    unsigned int nan_bit = man == 0 ? 0u : 0x0200u;
    return (unsigned short)((sign >> 16) | 0x7C00u | nan_bit | (man >> 13));
  }
  unsigned int half_sign = sign >> 16;
  int half_exp = (int)(exp >> 23) - 127 + 15;
  if (half_exp >= 0x1F) return (unsigned short)(half_sign | 0x7C00u);
  if (half_exp <= 0) {
    if (14 - half_exp > 24) return (unsigned short)half_sign;
    man |= 0x00800000u;
    unsigned int half_man = man >> (14 - half_exp);
    unsigned int round_bit = 1u << (13 - half_exp);
    if ((man & round_bit) != 0 && (man & (3 * round_bit - 1)) != 0) half_man += 1;
    return (unsigned short)(half_sign | half_man);
  }
  unsigned int bits = half_sign | ((unsigned int)half_exp << 10) | (man >> 13);
  unsigned int round_bit = 0x00001000u;
  if ((man & round_bit) != 0 && (man & (3 * round_bit - 1)) != 0) bits += 1;
  return (unsigned short)bits;
}

DL_DEV float dl_bf16_to_f32(unsigned short b) {
  unsigned int bits = (b & 0x7FFFu) > 0x7F80u ? (b | 0x0040u) : b;
  return __uint_as_float(bits << 16);
}

DL_DEV unsigned short dl_f32_to_bf16(float value) {
  unsigned int x = __float_as_uint(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((x >> 16) | 0x0040u);
  unsigned int round_bit = 0x00008000u;
  if ((x & round_bit) != 0 && (x & (3 * round_bit - 1)) != 0) return (unsigned short)((x >> 16) + 1);
  return (unsigned short)(x >> 16);
}

// Arithmetic as Rust computes it: integers wrap (through unsigned types: signed overflow is
// undefined in C++), floats round each operation (never fused), half types compute in binary32 and
// round back after each operation.
#define DL_WRAPPING(T, U)                                                                         \
  DL_DEV T dl_add(T a, T b) { return (T)(U)((U)a + (U)b); }                                     \
  DL_DEV T dl_mul(T a, T b) { return (T)(U)((U)a * (U)b); }
DL_WRAPPING(signed char, unsigned int)
DL_WRAPPING(unsigned char, unsigned int)
DL_WRAPPING(short, unsigned int)
DL_WRAPPING(unsigned short, unsigned int)
DL_WRAPPING(int, unsigned int)
DL_WRAPPING(unsigned int, unsigned int)
DL_WRAPPING(long long, unsigned long long)
DL_WRAPPING(unsigned long long, unsigned long long)
#ifdef DL_HAS_INT128
DL_WRAPPING(dl_i128, dl_u128)
DL_WRAPPING(dl_u128, dl_u128)
#endif
DL_DEV float dl_add(float a, float b) { return __fadd_rn(a, b); }
DL_DEV float dl_mul(float a, float b) { return __fmul_rn(a, b); }
DL_DEV double dl_add(double a, double b) { return __dadd_rn(a, b); }
DL_DEV double dl_mul(double a, double b) { return __dmul_rn(a, b); }
DL_DEV dl_f16 dl_add(dl_f16 a, dl_f16 b) {
  return dl_f16{dl_f32_to_f16(__fadd_rn(dl_f16_to_f32(a.bits), dl_f16_to_f32(b.bits)))};
}
DL_DEV dl_f16 dl_mul(dl_f16 a, dl_f16 b) {
  return dl_f16{dl_f32_to_f16(__fmul_rn(dl_f16_to_f32(a.bits), dl_f16_to_f32(b.bits)))};
}
DL_DEV dl_bf16 dl_add(dl_bf16 a, dl_bf16 b) {
  return dl_bf16{dl_f32_to_bf16(__fadd_rn(dl_bf16_to_f32(a.bits), dl_bf16_to_f32(b.bits)))};
}
DL_DEV dl_bf16 dl_mul(dl_bf16 a, dl_bf16 b) {
  return dl_bf16{dl_f32_to_bf16(__fmul_rn(dl_bf16_to_f32(a.bits), dl_bf16_to_f32(b.bits)))};
}

// Element casts: dlspan::dtype::cast, bit for bit. A value is taken exactly and rounded once:
// narrow targets (f16, bf16, FP8) are reached from a float that holds the value exactly or rounded
// to odd at 24 bits, which makes the final rounding to nearest exact to the value (Boldo and
// Melquiond); NaN is tested before any hardware conversion, so no result depends on how the
// hardware treats NaN (NVIDIA's conversions return their canonical NaN, x86 keeps the payload and
// sign): a NaN becomes the target's quiet NaN with the input's sign, as on the CPU.

// 2^n (n in the normal exponent range; 2^128 as a float is infinity).
DL_DEV float dl_pow2(float, int n) { return __uint_as_float((unsigned int)(127 + n) << 23); }
DL_DEV double dl_pow2(double, int n) { return __longlong_as_double((long long)(1023 + n) << 52); }
DL_DEV bool dl_negative(float x) { return (__float_as_uint(x) >> 31) != 0; }
DL_DEV bool dl_negative(double x) { return __double_as_longlong(x) < 0; }

// The quiet NaN of each type, with a sign: what a cast of NaN produces.
DL_DEV float dl_nan_f32(bool negative) { return __uint_as_float((negative ? 0x80000000u : 0u) | 0x7FC00000u); }
DL_DEV double dl_nan_f64(bool negative) {
  return __longlong_as_double((long long)((negative ? 0x8000000000000000ull : 0ull) | 0x7FF8000000000000ull));
}

// A double rounded to float toward zero, the lowest bit set when inexact (round to odd); a finite
// value beyond float's range becomes the largest float; NaN keeps its sign.
DL_DEV float dl_odd_f32(double x) {
  if (x != x) return dl_nan_f32(dl_negative(x));
  const float rounded = (float)x;
  if ((double)rounded == x) return rounded;
  unsigned int bits = __float_as_uint(rounded);
  const dl_u64 magnitude_mask = 0x7FFFFFFFFFFFFFFFull;
  const double rounded_magnitude = __longlong_as_double((long long)((dl_u64)__double_as_longlong((double)rounded) & magnitude_mask));
  const double magnitude = __longlong_as_double((long long)((dl_u64)__double_as_longlong(x) & magnitude_mask));
  if (rounded_magnitude > magnitude) bits -= 1;
  return __uint_as_float(bits | 1u);
}

// An unsigned integer rounded to odd at 24 bits (exact below 2^24), as float.
DL_DEV float dl_odd_f32_u64(dl_u64 m) {
  if (m < (1ull << 24)) return (float)(unsigned int)m;
  const int dropped = 40 - __clzll((long long)m);  // bits below the top 24
  const dl_u64 kept = (m >> dropped) | (dl_u64)((m & ((1ull << dropped) - 1)) != 0);
  return (float)(unsigned int)kept * dl_pow2(0.0f, dropped);
}
DL_DEV float dl_odd_f32_i64(long long x) {
  return x < 0 ? -dl_odd_f32_u64(0ull - (dl_u64)x) : dl_odd_f32_u64((dl_u64)x);
}

#ifdef DL_HAS_INT128
DL_DEV int dl_clz128(dl_u128 m) {
  const dl_u64 high = (dl_u64)(m >> 64);
  return high != 0 ? __clzll((long long)high) : 64 + __clzll((long long)(dl_u64)m);
}
// `m` keeping its top `keep` bits (m >= 2^64 > 2^keep), the lowest kept bit set when any dropped
// bit was (round to odd); `dropped` receives the number of bits dropped.
DL_DEV dl_u64 dl_odd_bits(dl_u128 m, int keep, int& dropped) {
  dropped = 128 - keep - dl_clz128(m);
  const dl_u128 low = m & ((((dl_u128)1) << dropped) - 1);
  return (dl_u64)(m >> dropped) | (dl_u64)(low != 0);
}
DL_DEV float dl_odd_f32_u128(dl_u128 m) {
  if ((m >> 64) == 0) return dl_odd_f32_u64((dl_u64)m);
  int dropped;
  const dl_u64 kept = dl_odd_bits(m, 24, dropped);
  return (float)(unsigned int)kept * dl_pow2(0.0f, dropped);
}
DL_DEV float dl_odd_f32_i128(dl_i128 x) {
  return x < 0 ? -dl_odd_f32_u128((dl_u128)0 - (dl_u128)x) : dl_odd_f32_u128((dl_u128)x);
}
// Rounded to nearest even, as Rust's `as`: rounded to odd at 64 bits, then by the hardware (the
// product overflows to infinity where the value rounds beyond the largest float).
template <class F> DL_DEV F dl_u128_to_float(dl_u128 m) {
  if ((m >> 64) == 0) return (F)(dl_u64)m;
  int dropped;
  const dl_u64 kept = dl_odd_bits(m, 64, dropped);
  return (F)kept * dl_pow2((F)0, dropped);
}
template <class F> DL_DEV F dl_i128_to_float(dl_i128 x) {
  return x < 0 ? -dl_u128_to_float<F>((dl_u128)0 - (dl_u128)x) : dl_u128_to_float<F>((dl_u128)x);
}
#endif

// A float in range truncated to an integer (C++ conversion, toward zero); the 128-bit ones
// assembled from the double's significand.
template <class I> struct dl_truncate {
  template <class F> static DL_MEMBER I from(F x) { return (I)x; }
};
#ifdef DL_HAS_INT128
DL_DEV dl_u128 dl_truncate_u128(double magnitude) {
  if (magnitude < 0x1p64) return (dl_u64)magnitude;
  const dl_u64 bits = (dl_u64)__double_as_longlong(magnitude);
  const int exponent = (int)(bits >> 52) - 1023;
  const dl_u64 significand = (bits & ((1ull << 52) - 1)) | (1ull << 52);
  return (dl_u128)significand << (exponent - 52);
}
template <> struct dl_truncate<dl_u128> {
  template <class F> static DL_MEMBER dl_u128 from(F x) { return dl_truncate_u128((double)x); }
};
template <> struct dl_truncate<dl_i128> {
  template <class F> static DL_MEMBER dl_i128 from(F x) {
    const dl_u128 magnitude = dl_truncate_u128(x < 0 ? -(double)x : (double)x);
    return (dl_i128)(x < 0 ? (dl_u128)0 - magnitude : magnitude);
  }
};
#endif

// Rust `as` from floating point (float or double) to an integer of BITS bits: toward zero,
// saturating at the bounds, NaN to 0. U is the unsigned type of I's width.
template <class I, class U, int BITS, bool SIGNED, class F> DL_DEV I dl_float_to_int(F x) {
  if (x != x) return (I)0;
  const F above = dl_pow2(x, SIGNED ? BITS - 1 : BITS);  // the first value above the range
  if (x >= above) return SIGNED ? (I)((((U)1) << (BITS - 1)) - 1) : (I)(~(U)0);
  if (SIGNED ? x <= -above : x <= (F)-1) return SIGNED ? (I)(((U)1) << (BITS - 1)) : (I)0;
  return dl_truncate<I>::from(x);
}

// Casts into f16, bf16, f32 and f64 of a float or double holding the value (or its odd rounding):
// NaN becomes the target's quiet NaN with the input's sign.
DL_DEV dl_f16 dl_cast_f16(float v) {
  return dl_f16{v != v ? (unsigned short)((dl_negative(v) ? 0x8000u : 0u) | 0x7E00u) : dl_f32_to_f16(v)};
}
DL_DEV dl_bf16 dl_cast_bf16(float v) {
  return dl_bf16{v != v ? (unsigned short)((dl_negative(v) ? 0x8000u : 0u) | 0x7FC0u) : dl_f32_to_bf16(v)};
}
DL_DEV float dl_cast_f32(float v) { return v != v ? dl_nan_f32(dl_negative(v)) : v; }
DL_DEV float dl_cast_f32(double v) { return v != v ? dl_nan_f32(dl_negative(v)) : (float)v; }
DL_DEV double dl_cast_f64(float v) { return v != v ? dl_nan_f64(dl_negative(v)) : (double)v; }

// The FP8 formats, from their widths, bias and special values (dlspan's minifloat `Format`):
// decoding to the exact float and encoding from a float (nearest, ties to even, through the
// significand shifted to the target precision as ml_dtypes does, the format's overflow rule).
enum { DL_IEEE = 0, DL_FINITE_ALL_ONES_NAN = 1, DL_FINITE_UNSIGNED_ZERO = 2, DL_FINITE_NO_NAN = 3, DL_UNSIGNED_NO_ZERO = 4 };
template <int E, int M, int BIAS, int SPECIALS> struct dl_minifloat {
  static constexpr bool is_signed = SPECIALS != DL_UNSIGNED_NO_ZERO;
  static constexpr unsigned int sign_bit = is_signed ? 1u << (E + M) : 0u;
  static constexpr int width = E + M + (is_signed ? 1 : 0);
  static constexpr unsigned int mask = width >= 8 ? 0xFFu : (1u << width) - 1;
  static constexpr unsigned int exponent_ones = (1u << E) - 1;
  static constexpr unsigned int all_ones = ((1u << (E + M)) - 1) & 0xFFu;
  static constexpr unsigned int max_finite =
      SPECIALS == DL_IEEE ? (exponent_ones << M) - 1
      : (SPECIALS == DL_FINITE_ALL_ONES_NAN || SPECIALS == DL_UNSIGNED_NO_ZERO) ? all_ones - 1
      : all_ones;

  static DL_MEMBER unsigned int nan(bool negative) {
    const unsigned int sign = negative ? sign_bit : 0u;
    switch (SPECIALS) {
      case DL_IEEE: return sign | (exponent_ones << M) | ((1u << M) >> 1);  // the quiet bit
      case DL_FINITE_ALL_ONES_NAN: return sign | (max_finite + 1);
      case DL_FINITE_UNSIGNED_ZERO: return sign_bit;
      case DL_FINITE_NO_NAN: return max_finite;
      default: return 0xFFu;
    }
  }

  static DL_MEMBER unsigned int overflow(bool negative) {
    const unsigned int sign = negative ? sign_bit : 0u;
    switch (SPECIALS) {
      case DL_IEEE: return sign | (exponent_ones << M);
      case DL_FINITE_NO_NAN: return sign | max_finite;
      default: return nan(negative);
    }
  }

  static DL_MEMBER unsigned int signed_zero(unsigned int sign) {
    return SPECIALS == DL_FINITE_UNSIGNED_ZERO ? 0u : sign;
  }

  static DL_MEMBER float decode(unsigned char stored) {
    const unsigned int code = stored & mask;
    const bool negative = (code & sign_bit) != 0;
    const unsigned int sign = negative ? 0x80000000u : 0u;
    const unsigned int exponent = (code >> M) & exponent_ones;
    const unsigned int mantissa = code & ((1u << M) - 1);
    const bool top = exponent == exponent_ones;
    const float quiet = __uint_as_float(sign | 0x7FC00000u);
    if (SPECIALS == DL_IEEE && top) return mantissa == 0 ? __uint_as_float(sign | 0x7F800000u) : quiet;
    if (SPECIALS == DL_FINITE_ALL_ONES_NAN && top && mantissa == (1u << M) - 1) return quiet;
    if (SPECIALS == DL_FINITE_UNSIGNED_ZERO && code == sign_bit) return __uint_as_float(0x7FC00000u);
    if (SPECIALS == DL_UNSIGNED_NO_ZERO && code == 0xFFu) return __uint_as_float(0x7FC00000u);
    const bool subnormal = exponent == 0 && SPECIALS != DL_UNSIGNED_NO_ZERO;
    if (subnormal && mantissa == 0) return __uint_as_float(sign);
    int power;
    unsigned int fraction;
    if (subnormal) {
      const int top_bit = 31 - __clz((int)mantissa);
      power = top_bit + 1 - BIAS - M;
      fraction = (mantissa ^ (1u << top_bit)) << (23 - top_bit);
    } else {
      power = (int)exponent - BIAS;
      fraction = mantissa << (23 - M);
    }
    const int biased = power + 127;
    // Below float's normal range (only e8m0fnu's 2^-127): a float subnormal, exact.
    const unsigned int bits = biased > 0 ? ((unsigned int)biased << 23) | fraction : ((1u << 23) | fraction) >> (1 - biased);
    return __uint_as_float(sign | bits);
  }

  static DL_MEMBER unsigned char encode(float x) {
    const unsigned int bits = __float_as_uint(x);
    const bool negative = (bits >> 31) != 0;
    const unsigned int magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return (unsigned char)nan(negative);
    if (!is_signed && (negative || magnitude == 0)) return (unsigned char)nan(false);
    if (magnitude == 0x7F800000u) return (unsigned char)overflow(negative);
    const unsigned int sign = negative ? sign_bit : 0u;
    if (magnitude == 0) return (unsigned char)signed_zero(sign);
    // 1. Normalise: the significand's implicit one at bit 23.
    const int biased = (int)(magnitude >> 23);
    const unsigned int fraction = magnitude & 0x007FFFFFu;
    int exponent;
    unsigned int significand;
    if (biased == 0) {
      const int shift = __clz((int)fraction) - 8;
      exponent = -126 - shift;
      significand = fraction << shift;
    } else {
      exponent = biased - 127;
      significand = (1u << 23) | fraction;
    }
    // 2. The target's biased exponent minus one; below zero the result is subnormal.
    const int base = exponent + BIAS - 1;
    const int denormal = base < 0 ? -base : 0;
    int shift = 23 - M + denormal;
    if (shift > 25) shift = 25;  // rounds everything to zero already
    // 3. Round to nearest even: add half an ulp, less one unless the kept lowest bit is odd.
    const unsigned int odd = (significand >> shift) & 1u;
    const unsigned int rounded = (significand + odd + (1u << (shift - 1)) - 1u) >> shift;
    // 4. Pack: a carry out of the mantissa moves into the exponent.
    const unsigned int exponent_field = base > 0 ? (unsigned int)base : 0u;
    const unsigned int result = rounded + (exponent_field << M);
    if (result > max_finite) return (unsigned char)overflow(negative);
    if (result == 0) return (unsigned char)signed_zero(sign);
    return (unsigned char)(sign | result);
  }
};

// A cast kernel's conversion: one specialisation per (output, input) pair, generated.
template <class To, class From> DL_MEMBER To dl_cast(From x);

// ---------------------------------------------------------------------------------------------
// Raw kernels (dlspan::kernel!): typed views, dynamic shared memory, launch arguments.
//
// A view parameter of a raw kernel is a dl::view<T, R, Layout, E0, .., E(R-1)>: T its element type
// (const for views passed by `&`), R its rank, Layout dl::layout_right, dl::layout_left or
// dl::layout_stride (dlspan's LayoutStride and LayoutStrideRelaxed, whose offset is already in the
// pointer), and each Ek the static extent of axis k or dl::dyn. x(i, j) is a reference to an
// element, x.extent(k), x.stride(k) (in elements), x.size() and x.data() what their names say.
namespace dl {
typedef long long index_t;
enum : index_t { dyn = -1 };  // a dynamic extent (an enumerator: no unused-variable warning)
struct layout_right {};
struct layout_left {};
struct layout_stride {};
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };

template <class T, int R, class L, index_t... E> struct view {
  static_assert(sizeof...(E) == R, "one static extent (or dl::dyn) per axis");
  typedef T element_type;
  T* ptr;
  index_t extents_[R > 0 ? R : 1];
  index_t strides_[R > 0 ? R : 1];

  static DL_MEMBER constexpr int rank() { return R; }
  // The static extent of axis k (dl::dyn for a dynamic one).
  static DL_MEMBER constexpr index_t static_extent(int k) {
    constexpr index_t statics[R > 0 ? R : 1] = {E...};
    return R > 0 ? statics[k] : dyn;
  }
  DL_MEMBER index_t extent(int k) const { return static_extent(k) != dyn ? static_extent(k) : extents_[k]; }
  DL_MEMBER index_t stride(int k) const {
    if (same<L, layout_right>::value) {
      index_t s = 1;
      for (int a = R - 1; a > k; --a) s *= extent(a);
      return s;
    }
    if (same<L, layout_left>::value) {
      index_t s = 1;
      for (int a = 0; a < k; ++a) s *= extent(a);
      return s;
    }
    return strides_[k];
  }
  DL_MEMBER index_t size() const {
    index_t n = 1;
    for (int a = 0; a < R; ++a) n *= extent(a);
    return n;
  }
  DL_MEMBER T* data() const { return ptr; }
  // The offset of an index, in elements, by the layout's own arithmetic.
  template <class... I> DL_MEMBER index_t offset(I... i) const {
    static_assert(sizeof...(I) == R, "a view is indexed with one index per axis");
    const index_t idx[R > 0 ? R : 1] = {(index_t)i...};
    index_t off = 0;
    if (same<L, layout_right>::value) {
      for (int a = 0; a < R; ++a) off = off * extent(a) + idx[a];
    } else if (same<L, layout_left>::value) {
      for (int a = R - 1; a >= 0; --a) off = off * extent(a) + idx[a];
    } else {
      for (int a = 0; a < R; ++a) off += idx[a] * strides_[a];
    }
    return off;
  }
  template <class... I> DL_MEMBER T& operator()(I... i) const { return ptr[offset(i...)]; }
};

// A scalar argument at `bytes` of the argument block, read byte by byte (its alignment may exceed
// the block's).
template <class T> DL_MEMBER T load_scalar(const unsigned char* bytes) {
  union { T value; unsigned char b[sizeof(T)]; } u;
  for (int k = 0; k < (int)sizeof(T); ++k) u.b[k] = bytes[k];
  return u.value;
}

// The view at `bytes` of a launch's argument block: the address of its first element, then R
// extents and R strides (64-bit each), as dlspan writes them.
template <class V> DL_MEMBER V load_view(const unsigned char* bytes) {
  V v;
  v.ptr = (typename V::element_type*)load_scalar<unsigned long long>(bytes);
  for (int k = 0; k < V::rank(); ++k) {
    v.extents_[k] = load_scalar<index_t>(bytes + 8 + 8 * k);
    v.strides_[k] = load_scalar<index_t>(bytes + 8 + 8 * (V::rank() + k));
  }
  return v;
}


// The launch's dynamic shared memory (LaunchConfig::shared_bytes), as an array of T.
#ifdef DLSPAN_CPU
template <class T> static inline T* shared_memory() { return (T*)dl_cpu_self->shared; }
#elif !defined(DLSPAN_HOST)
template <class T> __device__ __forceinline__ T* shared_memory() {
  extern __shared__ __align__(16) unsigned char dl_dynamic_shared[];
  return (T*)dl_dynamic_shared;
}
#endif

// The argument block of a launch, passed by value (N bytes, a multiple of 16).
template <int N> struct alignas(16) args { unsigned char b[N]; };

// Element conversions for generic kernels over f16 and bf16: to and from float, bit for bit as
// dlspan's Rust side converts (round to nearest even).
DL_MEMBER float to_float(dl_f16 x) { return dl_f16_to_f32(x.bits); }
DL_MEMBER float to_float(dl_bf16 x) { return dl_bf16_to_f32(x.bits); }
DL_MEMBER float to_float(float x) { return x; }
DL_MEMBER double to_float(double x) { return x; }
template <class T> DL_MEMBER T from_float(float x);
template <> DL_MEMBER dl_f16 from_float<dl_f16>(float x) { return dl_f16{dl_f32_to_f16(x)}; }
template <> DL_MEMBER dl_bf16 from_float<dl_bf16>(float x) { return dl_bf16{dl_f32_to_bf16(x)}; }
template <> DL_MEMBER float from_float<float>(float x) { return x; }
template <> DL_MEMBER double from_float<double>(float x) { return x; }
}  // namespace dl

#endif  // DLSPAN_CUH
