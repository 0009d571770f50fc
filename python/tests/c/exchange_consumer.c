/* A consumer of the DLPack C exchange API that is not dlspan's code: a CPython extension written
 * against the real dlpack.h, as a C or C++ library would read a producer's table. It runs the same
 * on dlspan.Tensor and torch.Tensor. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlpack/dlpack.h>
#include <pthread.h>

static const DLPackExchangeAPI *table_of(PyObject *obj) {
  PyObject *capsule = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__dlpack_c_exchange_api__");
  if (capsule == NULL) return NULL;
  const DLPackExchangeAPI *api = PyCapsule_GetPointer(capsule, "dlpack_exchange_api");
  Py_DECREF(capsule); /* the type keeps the table alive */
  if (api == NULL) return NULL;
  if (api->header.version.major != DLPACK_MAJOR_VERSION) {
    PyErr_SetString(PyExc_RuntimeError, "exchange API major version mismatch");
    return NULL;
  }
  return api;
}

/* describe(obj) -> (version, ndim, dtype (code, bits, lanes), shape, strides, byte_offset, device) */
static PyObject *describe(PyObject *self, PyObject *obj) {
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  if (api->dltensor_from_py_object_no_sync == NULL) return PyErr_Format(PyExc_RuntimeError, "no DLTensor view");
  DLTensor t;
  if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  PyObject *shape = PyTuple_New(t.ndim), *strides = PyTuple_New(t.ndim);
  for (int i = 0; i < t.ndim; i++) {
    PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t.shape[i]));
    PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(t.strides[i]));
  }
  return Py_BuildValue("((II)i(iii)NNK(ii))", api->header.version.major, api->header.version.minor, t.ndim,
                       t.dtype.code, t.dtype.bits, t.dtype.lanes, shape, strides, (unsigned long long)t.byte_offset,
                       t.device.device_type, t.device.device_id);
}

/* sum_f32(obj): the sum of a float32 tensor of any rank and strides, read through the DLTensor. */
static double sum_at(const DLTensor *t, const char *base, int axis) {
  if (axis == t->ndim) return *(const float *)base;
  double total = 0;
  for (int64_t i = 0; i < t->shape[axis]; i++) total += sum_at(t, base + i * t->strides[axis] * 4, axis + 1);
  return total;
}

static PyObject *sum_f32(PyObject *self, PyObject *obj) {
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  DLTensor t;
  if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  if (t.dtype.code != kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1) {
    PyErr_SetString(PyExc_TypeError, "float32 only");
    return NULL;
  }
  for (int i = 0; i < t.ndim; i++)
    if (t.shape[i] == 0) return PyFloat_FromDouble(0.0);
  return PyFloat_FromDouble(sum_at(&t, (const char *)t.data + t.byte_offset, 0));
}

/* roundtrip(obj): managed tensor out of obj, back into a new object of the same producer. */
static PyObject *roundtrip(PyObject *self, PyObject *obj) {
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  DLManagedTensorVersioned *managed = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &managed) != 0) return NULL;
  if (managed->version.major != 1) return PyErr_Format(PyExc_RuntimeError, "version");
  void *out = NULL;
  if (api->managed_tensor_to_py_object_no_sync(managed, &out) != 0) return NULL;
  return (PyObject *)out;
}

static void *delete_in_thread(void *managed) {
  DLManagedTensorVersioned *m = managed;
  m->deleter(m);
  return NULL;
}

/* release_elsewhere(obj): a managed tensor of obj, deleted by a thread that never held the GIL. */
static PyObject *release_elsewhere(PyObject *self, PyObject *obj) {
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  DLManagedTensorVersioned *managed = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &managed) != 0) return NULL;
  pthread_t thread;
  int failed;
  Py_BEGIN_ALLOW_THREADS
  failed = pthread_create(&thread, NULL, delete_in_thread, managed);
  if (!failed) pthread_join(thread, NULL);
  Py_END_ALLOW_THREADS
  if (failed) return PyErr_Format(PyExc_RuntimeError, "pthread_create");
  Py_RETURN_NONE;
}

struct error_ctx {
  char kind[64];
  char message[256];
};

static void set_error(void *ctx, const char *kind, const char *message) {
  struct error_ctx *e = ctx;
  snprintf(e->kind, sizeof e->kind, "%s", kind);
  snprintf(e->message, sizeof e->message, "%s", message);
}

/* A prototype for the allocator: `ndim` extents `shape`, scalar elements of `code` and `bits`. */
static DLTensor prototype_of(int64_t *shape, int ndim, int code, int bits, int device_type) {
  DLTensor prototype = {0};
  prototype.ndim = ndim;
  prototype.shape = shape;
  prototype.dtype.code = (uint8_t)code;
  prototype.dtype.bits = (uint8_t)bits;
  prototype.dtype.lanes = 1;
  prototype.device.device_type = device_type;
  return prototype;
}

/* allocate(obj, shape, code, bits, device_type): a new tensor of obj's producer like the prototype. */
static PyObject *allocate(PyObject *self, PyObject *args) {
  PyObject *obj, *shape_tuple;
  int code, bits, device_type;
  if (!PyArg_ParseTuple(args, "OO!iii", &obj, &PyTuple_Type, &shape_tuple, &code, &bits, &device_type)) return NULL;
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  int64_t shape[8];
  int ndim = (int)PyTuple_GET_SIZE(shape_tuple);
  for (int i = 0; i < ndim && i < 8; i++) shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape_tuple, i));
  DLTensor prototype = prototype_of(shape, ndim, code, bits, device_type);
  DLManagedTensorVersioned *managed = NULL;
  struct error_ctx error = {{0}, {0}};
  if (api->managed_tensor_allocator(&prototype, &managed, &error, set_error) != 0)
    return Py_BuildValue("(ss)", error.kind, error.message);
  void *out = NULL;
  if (api->managed_tensor_to_py_object_no_sync(managed, &out) != 0) return NULL;
  return (PyObject *)out;
}

/* allocate_pending(obj, code, bits): the allocator called, for a CPU prototype of shape (4,), while
 * a KeyError is pending; returns (return code, SetError's kind, the exception pending after). */
static PyObject *allocate_pending(PyObject *self, PyObject *args) {
  PyObject *obj;
  int code, bits;
  if (!PyArg_ParseTuple(args, "Oii", &obj, &code, &bits)) return NULL;
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  int64_t shape[1] = {4};
  DLTensor prototype = prototype_of(shape, 1, code, bits, kDLCPU);
  DLManagedTensorVersioned *managed = NULL;
  struct error_ctx error = {{0}, {0}};
  PyErr_SetString(PyExc_KeyError, "pending before the call");
  int rc = api->managed_tensor_allocator(&prototype, &managed, &error, set_error);
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback); /* the pending state is kept as it was set */
  if (rc == 0 && managed->deleter) managed->deleter(managed);
  PyObject *result = Py_BuildValue("(isO)", rc, error.kind, value ? value : Py_None);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return result;
}

/* stream(obj, device_type, device_id, null_out): the producer's current work stream of a device (an
 * integer; 0 for null), or the error it raises; with null_out, a null `out` is passed. */
static PyObject *stream(PyObject *self, PyObject *args) {
  PyObject *obj;
  int device_type, device_id, null_out;
  if (!PyArg_ParseTuple(args, "Oiii", &obj, &device_type, &device_id, &null_out)) return NULL;
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  void *s = (void *)1;
  if (api->current_work_stream((DLDeviceType)device_type, device_id, null_out ? NULL : &s) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "current_work_stream failed with no exception set");
    return NULL;
  }
  return PyLong_FromVoidPtr(s);
}

/* describe_as(owner, obj): obj's DLTensor through the table of owner's type, which the exchange API
 * does not allow for an object of another type: the producer's error, or None. */
static PyObject *describe_as(PyObject *self, PyObject *args) {
  PyObject *owner, *obj;
  if (!PyArg_ParseTuple(args, "OO", &owner, &obj)) return NULL;
  const DLPackExchangeAPI *api = table_of(owner);
  if (api == NULL) return NULL;
  DLTensor t;
  if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  Py_RETURN_NONE;
}

/* relabel(obj, device_type): obj's managed export with another device type, as a producer that lies
 * about its memory would hand it over, back as a Python object. */
static PyObject *relabel(PyObject *self, PyObject *args) {
  PyObject *obj;
  int device_type;
  if (!PyArg_ParseTuple(args, "Oi", &obj, &device_type)) return NULL;
  const DLPackExchangeAPI *api = table_of(obj);
  if (api == NULL) return NULL;
  DLManagedTensorVersioned *managed = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &managed) != 0) return NULL;
  managed->dl_tensor.device.device_type = (DLDeviceType)device_type;
  void *out = NULL;
  if (api->managed_tensor_to_py_object_no_sync(managed, &out) != 0) return NULL;
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
    {"describe", describe, METH_O, NULL},
    {"sum_f32", sum_f32, METH_O, NULL},
    {"roundtrip", roundtrip, METH_O, NULL},
    {"release_elsewhere", release_elsewhere, METH_O, NULL},
    {"allocate", allocate, METH_VARARGS, NULL},
    {"allocate_pending", allocate_pending, METH_VARARGS, NULL},
    {"stream", stream, METH_VARARGS, NULL},
    {"describe_as", describe_as, METH_VARARGS, NULL},
    {"relabel", relabel, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "exchange_consumer", NULL, -1, methods};

PyMODINIT_FUNC PyInit_exchange_consumer(void) { return PyModule_Create(&module); }
