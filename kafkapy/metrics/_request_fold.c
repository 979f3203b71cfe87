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
 * (unscaled). Reads only the buffer it is given; runs with the GIL held (thread-safe).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define ROW 8

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
    const int64_t *r = (const int64_t *)view.buf;
    int64_t mn[ROW], mx[ROW], sum[ROW], nones = 0;
    double sq[ROW];
    for (int k = 0; k < ROW; k++) {
        mn[k] = mx[k] = sum[k] = 0;
        sq[k] = 0.0;
    }
    for (Py_ssize_t i = 0; i < n; i++, r += ROW) {
        int64_t start = r[0], dequeue = r[1] ? r[1] : r[0], handler = r[2], send = r[3], end = r[4];
        int64_t remote = send - (dequeue + handler);
        int64_t v[ROW] = {end - start, dequeue - start, handler, remote > 0 ? remote : 0, r[6], 0, end - send,
                          r[5]};
        nones += r[7];
        for (int k = 0; k < ROW; k++) {
            int64_t x = v[k];
            if (i == 0 || x < mn[k]) mn[k] = x;
            if (i == 0 || x > mx[k]) mx[k] = x;
            sum[k] += x;
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

static PyMethodDef methods[] = {
    {"request_stats", request_stats, METH_O, "Per-column min, max, sum, sum of squares of RequestMetrics rows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_request_fold", NULL, -1, methods};

PyMODINIT_FUNC PyInit__request_fold(void) { return PyModule_Create(&module); }
