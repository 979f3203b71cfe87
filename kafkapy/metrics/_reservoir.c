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
 * offer(heap, size, priorities, rows) -> None
 * Offers (priorities[i], rows[i]) in order (largest priority first) to heap, a list kept as a heapq min-heap of
 * (priority float, values) tuples (smallest priority at heap[0]) holding at most `size`: pushed while not full,
 * else replacing the smallest when larger, stopping at the first that is not (the rest are smaller still and
 * the floor only rises). Priorities compare as doubles (heapq compares the tuples: the same order, ties
 * aside, which leave any order valid). histogram._offer_py is the reference.
 *
 * No byte format; no state; runs with the GIL held, without calling back into Python during a sift (the
 * histogram's lock keeps other threads off the heap).
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

static int key_of(PyObject *entry, double *out) {
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2 || !PyFloat_CheckExact(PyTuple_GET_ITEM(entry, 0))) {
        PyErr_SetString(PyExc_TypeError, "heap entries must be (float priority, values) tuples");
        return -1;
    }
    *out = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(entry, 0));
    return 0;
}

/* Move items[pos] toward the root while its parent is larger (heapq._siftdown). On an error the item is still
 * placed (the list keeps each reference once). */
static int sift_toward_root(PyObject **items, Py_ssize_t pos, double key) {
    PyObject *item = items[pos];
    int rc = 0;
    while (pos > 0) {
        Py_ssize_t parent = (pos - 1) >> 1;
        double pk;
        if ((rc = key_of(items[parent], &pk)) < 0 || !(key < pk))
            break;
        items[pos] = items[parent];
        pos = parent;
    }
    items[pos] = item;
    return rc;
}

/* items[0] was replaced by an item of priority key: move it toward the leaves past smaller children. */
static int sift_toward_leaves(PyObject **items, Py_ssize_t n, double key) {
    PyObject *item = items[0];
    Py_ssize_t pos = 0;
    int rc = 0;
    for (;;) {
        Py_ssize_t child = 2 * pos + 1;
        if (child >= n)
            break;
        double ck, rk;
        if ((rc = key_of(items[child], &ck)) < 0)
            break;
        if (child + 1 < n) {
            if ((rc = key_of(items[child + 1], &rk)) < 0)
                break;
            if (rk < ck) {
                child++;
                ck = rk;
            }
        }
        if (!(ck < key))
            break;
        items[pos] = items[child];
        pos = child;
    }
    items[pos] = item;
    return rc;
}

static PyObject *offer(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "offer(heap: list, size, priorities, rows)");
        return NULL;
    }
    PyObject *heap = args[0];
    Py_ssize_t size = PyNumber_AsSsize_t(args[1], PyExc_OverflowError);
    if (size == -1 && PyErr_Occurred())
        return NULL;
    /* tuple copies: nothing a conversion or a collection runs can resize what is read */
    PyObject *priorities = PySequence_Tuple(args[2]);
    if (priorities == NULL)
        return NULL;
    PyObject *rows = PySequence_Tuple(args[3]);
    if (rows == NULL) {
        Py_DECREF(priorities);
        return NULL;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(priorities);
    if (PyTuple_GET_SIZE(rows) != k) {
        PyErr_SetString(PyExc_ValueError, "one row per priority");
        goto error;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        double key = PyFloat_AsDouble(PyTuple_GET_ITEM(priorities, i));
        if (key == -1.0 && PyErr_Occurred())
            goto error;
        PyObject *pf = PyFloat_FromDouble(key);
        if (pf == NULL)
            goto error;
        PyObject *entry = PyTuple_Pack(2, pf, PyTuple_GET_ITEM(rows, i));
        Py_DECREF(pf);
        if (entry == NULL)
            goto error;
        Py_ssize_t n = PyList_GET_SIZE(heap); /* read after the allocations (a collection may run code) */
        if (n < size) {
            int rc = PyList_Append(heap, entry);
            Py_DECREF(entry);
            if (rc < 0 || sift_toward_root(((PyListObject *)heap)->ob_item, PyList_GET_SIZE(heap) - 1, key) < 0)
                goto error;
            continue;
        }
        double floor_;
        if (n == 0 || key_of(PyList_GET_ITEM(heap, 0), &floor_) < 0 || !(floor_ < key)) {
            Py_DECREF(entry);
            if (PyErr_Occurred())
                goto error;
            break; /* the rest are smaller still and the floor only rises */
        }
        PyObject **items = ((PyListObject *)heap)->ob_item;
        PyObject *old = items[0];
        items[0] = entry; /* the list's reference moves to the new entry */
        int rc = sift_toward_leaves(items, n, key);
        Py_DECREF(old);
        if (rc < 0)
            goto error;
    }
    Py_DECREF(priorities);
    Py_DECREF(rows);
    Py_RETURN_NONE;
error:
    Py_DECREF(priorities);
    Py_DECREF(rows);
    return NULL;
}

static PyMethodDef methods[] = {
    {"draw", (PyCFunction)(void (*)(void))draw, METH_FASTCALL, "The priorities and event indices of a batch's draw."},
    {"offer", (PyCFunction)(void (*)(void))offer, METH_FASTCALL, "Offer a draw's entries to a heapq reservoir."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_reservoir", NULL, -1, methods};

PyMODINIT_FUNC PyInit__reservoir(void) { return PyModule_Create(&module); }
