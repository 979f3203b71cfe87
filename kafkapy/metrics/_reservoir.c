/*
 * kafkapy.metrics._reservoir: the compiled batch draw of HistogramSet.update_summary (kafkapy/metrics/
 * histogram.py's _draw_py, _top_priorities and random.sample are the reference and the fallback).
 *
 * draw(n, weight, floor, size, rnd) -> (priorities, indices)
 * Of n events offered at once to a decaying reservoir of `size` whose smallest priority is `floor` (0: not
 * full), each with priority weight / u (u uniform on (0, 1)), the ones that can enter: the smallest u are drawn
 * in order as order statistics, u += (1 - u) * -expm1(log(1 - V) / m) with m the uniforms left (the same
 * arithmetic as _top_priorities, so the same priorities from the same rnd), until one gives a priority at or
 * under the floor or `size` are drawn; largest first. Each priority goes to a distinct event index picked
 * uniformly from 0..n-1. rnd() is the histogram's uniform source (random.random), called for every draw.
 *
 * No byte format; no state; runs with the GIL held (thread-safe).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int uniform(PyObject *rnd, double *out) {
    PyObject *r = PyObject_CallNoArgs(rnd);
    if (r == NULL)
        return -1;
    *out = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* An index in 0..m-1 (m >= 1) from u, whatever double rnd() returned: NaN and u <= 0 give 0, u >= 1 gives m - 1
 * (a uniform in [0, 1) gives each index with probability 1/m; anything else must still stay in the array). */
static Py_ssize_t index_below(double u, Py_ssize_t m) {
    if (!(u > 0.0))
        return 0;
    double x = u * (double)m;
    return x < (double)m ? (Py_ssize_t)x : m - 1;
}

/* After this many draws in a row that hit taken indices, the next free index after the last draw is taken:
 * with a uniform rnd and fewer than half taken that happens with probability under 2^-64; it bounds the loop
 * for a rnd that repeats itself. */
#define MAX_MISSES 64

/* k distinct indices of 0..n-1 (0 <= k <= n), uniformly, into out. */
static int pick_indices(PyObject *rnd, Py_ssize_t n, Py_ssize_t k, Py_ssize_t *out) {
    if (k <= 0)
        return 0;
    if (2 * k >= n) { /* a partial Fisher-Yates shuffle: n is at most twice k here */
        Py_ssize_t *all = PyMem_Malloc((size_t)n * sizeof(Py_ssize_t));
        if (all == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            all[i] = i;
        for (Py_ssize_t i = 0; i < k; i++) {
            double u;
            if (uniform(rnd, &u) < 0) {
                PyMem_Free(all);
                return -1;
            }
            Py_ssize_t j = i + index_below(u, n - i);
            Py_ssize_t t = all[i];
            all[i] = all[j];
            all[j] = t;
            out[i] = all[i];
        }
        PyMem_Free(all);
        return 0;
    }
    unsigned char *seen = PyMem_Calloc((size_t)n / 8 + 1, 1); /* rejection: fewer than half are taken */
    if (seen == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int misses = 0;
    for (Py_ssize_t i = 0; i < k;) {
        double u;
        if (uniform(rnd, &u) < 0) {
            PyMem_Free(seen);
            return -1;
        }
        Py_ssize_t j = index_below(u, n);
        if (seen[j >> 3] & (1 << (j & 7))) {
            if (++misses < MAX_MISSES)
                continue;
            while (seen[j >> 3] & (1 << (j & 7))) /* bounded: fewer than n are taken */
                j = j + 1 < n ? j + 1 : 0;
        }
        misses = 0;
        seen[j >> 3] |= (unsigned char)(1 << (j & 7));
        out[i++] = j;
    }
    PyMem_Free(seen);
    return 0;
}

static PyObject *draw(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "draw(n, weight, floor, size, rnd)");
        return NULL;
    }
    /* each conversion checked before the next: none may run (a __float__, an __index__) with an error set */
    Py_ssize_t n = PyNumber_AsSsize_t(args[0], PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    double weight = PyFloat_AsDouble(args[1]);
    if (weight == -1.0 && PyErr_Occurred())
        return NULL;
    double floor_ = PyFloat_AsDouble(args[2]);
    if (floor_ == -1.0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t size = PyNumber_AsSsize_t(args[3], PyExc_OverflowError);
    if (size == -1 && PyErr_Occurred())
        return NULL;
    PyObject *rnd = args[4];
    Py_ssize_t most = n < size ? n : size; /* n or size below 0: nothing drawn, as range() draws nothing */
    if (most < 0)
        most = 0;
    double *prio = PyMem_Malloc((size_t)(most + 1) * sizeof(double));
    Py_ssize_t *idx = PyMem_Malloc((size_t)(most + 1) * sizeof(Py_ssize_t));
    PyObject *priorities = NULL, *indices = NULL, *result = NULL;
    if (prio == NULL || idx == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double limit = floor_ > 0 ? weight / floor_ : 2.0; /* u >= limit: priority <= floor */
    double u = 0.0;
    Py_ssize_t k = 0;
    for (Py_ssize_t m = n; m > n - most; m--) {
        double v;
        if (uniform(rnd, &v) < 0)
            goto done;
        u -= (1.0 - u) * expm1(log(1.0 - v) / (double)m);
        if (u >= limit)
            break;
        prio[k++] = weight / (u != 0.0 ? u : 1e-300);
    }
    if (pick_indices(rnd, n, k, idx) < 0)
        goto done;
    priorities = PyList_New(k);
    indices = PyList_New(k);
    if (priorities == NULL || indices == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *p = PyFloat_FromDouble(prio[i]), *j = PyLong_FromSsize_t(idx[i]);
        if (p == NULL || j == NULL) {
            Py_XDECREF(p);
            Py_XDECREF(j);
            goto done;
        }
        PyList_SET_ITEM(priorities, i, p);
        PyList_SET_ITEM(indices, i, j);
    }
    result = PyTuple_Pack(2, priorities, indices);
done:
    Py_XDECREF(priorities);
    Py_XDECREF(indices);
    PyMem_Free(prio);
    PyMem_Free(idx);
    return result;
}

static PyMethodDef methods[] = {
    {"draw", (PyCFunction)(void (*)(void))draw, METH_FASTCALL, "The priorities and event indices of a batch's draw."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_reservoir", NULL, -1, methods};

PyMODINIT_FUNC PyInit__reservoir(void) { return PyModule_Create(&module); }
