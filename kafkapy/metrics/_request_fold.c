/*
 * kafkapy.metrics._request_fold: the compiled fold of RequestMetrics' queued rows (the pure-Python
 * request_fold.request_stats is the reference and the fallback when this module is not built).
 *
 * Byte format read: rows of 8 native int64 (arrival ns, dequeue ns, handler ns, send start ns, end ns, request
 * bytes, throttle ms, count of NONE error codes), as RequestMetrics packs them into an array('q').
 *
 * request_stats(rows) -> (count, nones, ((min, max, sum, sumsq) x 8))
 * Per request the eight values of request_fold.COLUMNS are derived (dequeue 0 means the arrival time; remote
 * clamped at 0) and, per column, their min, max, integer sum and float sum of squares are returned, raw
 * (unscaled).
 *
 * scaled_rows(rows, indices, scales) -> [tuple of 8 floats per index]
 * The same derived values of the rows the reservoir picked, each column multiplied by scales[k].
 *
 * The values are nanosecond clocks, sizes and counts, far from the int64 bounds; past them the arithmetic wraps
 * (two's complement, defined here) where the Python reference's integers are exact. Rows are read with memcpy:
 * any buffer alignment is fine.
 * Reads only the buffer it is given; runs with the GIL held (thread-safe).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define ROW 8

/* Wrapping int64 arithmetic (signed overflow is undefined in C; these are defined). */
static inline int64_t add64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t sub64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

/* The derived values of the row at p (request_fold.row_values); r gets the row itself. */
static void derive(const char *p, int64_t *r, int64_t *v) {
    memcpy(r, p, ROW * sizeof(int64_t));
    int64_t start = r[0], dequeue = r[1] ? r[1] : r[0], handler = r[2], send = r[3], end = r[4];
    int64_t remote = sub64(send, add64(dequeue, handler));
    v[0] = sub64(end, start);
    v[1] = sub64(dequeue, start);
    v[2] = handler;
    v[3] = remote > 0 ? remote : 0;
    v[4] = r[6];
    v[5] = 0;
    v[6] = sub64(end, send);
    v[7] = r[5];
}

static PyObject *request_stats(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (view.len % (ROW * (Py_ssize_t)sizeof(int64_t)) != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "rows must be whole rows of 8 int64");
        return NULL;
    }
    Py_ssize_t n = view.len / (ROW * (Py_ssize_t)sizeof(int64_t));
    const char *p = (const char *)view.buf;
    int64_t mn[ROW], mx[ROW], sum[ROW], nones = 0;
    double sq[ROW];
    for (int k = 0; k < ROW; k++) {
        mn[k] = mx[k] = sum[k] = 0;
        sq[k] = 0.0;
    }
    for (Py_ssize_t i = 0; i < n; i++, p += ROW * sizeof(int64_t)) {
        int64_t r[ROW], v[ROW];
        derive(p, r, v);
        nones = add64(nones, r[7]);
        for (int k = 0; k < ROW; k++) {
            int64_t x = v[k];
            if (i == 0 || x < mn[k]) mn[k] = x;
            if (i == 0 || x > mx[k]) mx[k] = x;
            sum[k] = add64(sum[k], x);
            sq[k] += (double)x * (double)x;
        }
    }
    PyBuffer_Release(&view);
    PyObject *stats = PyTuple_New(ROW);
    if (stats == NULL)
        return NULL;
    for (int k = 0; k < ROW; k++) {
        PyObject *t = Py_BuildValue("(LLLd)", (long long)mn[k], (long long)mx[k], (long long)sum[k], sq[k]);
        if (t == NULL) {
            Py_DECREF(stats);
            return NULL;
        }
        PyTuple_SET_ITEM(stats, k, t);
    }
    return Py_BuildValue("(nLN)", n, (long long)nones, stats);
}

static PyObject *scaled_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scaled_rows(rows, indices, scales)");
        return NULL;
    }
    /* Tuples (copies of lists): a __float__ or __index__ run below cannot shrink what is being read. */
    double scale[ROW];
    PyObject *scales = PySequence_Tuple(args[2]);
    if (scales == NULL)
        return NULL;
    if (PyTuple_GET_SIZE(scales) != ROW) {
        Py_DECREF(scales);
        PyErr_SetString(PyExc_ValueError, "scales must hold 8 floats");
        return NULL;
    }
    for (int k = 0; k < ROW; k++) {
        scale[k] = PyFloat_AsDouble(PyTuple_GET_ITEM(scales, k));
        if (scale[k] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(scales);
            return NULL;
        }
    }
    Py_DECREF(scales);
    PyObject *indices = PySequence_Tuple(args[1]);
    if (indices == NULL)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(indices);
        return NULL;
    }
    Py_ssize_t rows = view.len / (ROW * (Py_ssize_t)sizeof(int64_t)), n = PyTuple_GET_SIZE(indices);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t j = 0; out != NULL && j < n; j++) {
        Py_ssize_t i = PyNumber_AsSsize_t(PyTuple_GET_ITEM(indices, j), PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        if (i < 0 || i >= rows) {
            PyErr_SetString(PyExc_IndexError, "row index out of range");
            Py_CLEAR(out);
            break;
        }
        int64_t r[ROW], v[ROW];
        derive((const char *)view.buf + i * ROW * (Py_ssize_t)sizeof(int64_t), r, v);
        PyObject *t = PyTuple_New(ROW);
        for (int k = 0; t != NULL && k < ROW; k++) {
            PyObject *f = PyFloat_FromDouble((double)v[k] * scale[k]);
            if (f == NULL)
                Py_CLEAR(t);
            else
                PyTuple_SET_ITEM(t, k, f);
        }
        if (t == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, j, t);
    }
    PyBuffer_Release(&view);
    Py_DECREF(indices);
    return out;
}

static PyMethodDef methods[] = {
    {"request_stats", request_stats, METH_O, "Per-column min, max, sum, sum of squares of RequestMetrics rows."},
    {"scaled_rows", (PyCFunction)(void (*)(void))scaled_rows, METH_FASTCALL, "The scaled values of picked rows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_request_fold", NULL, -1, methods};

PyMODINIT_FUNC PyInit__request_fold(void) { return PyModule_Create(&module); }
