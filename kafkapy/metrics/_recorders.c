/*
 * kafkapy.metrics._recorders: the compiled hot-path recorders (kafkapy/metrics/recorders.py is the same
 * behaviour in Python: the reference, and the fallback when this module is not built).
 *
 * Byte format written: per key, a bytearray of rows of `width` native int64, appended in call order.
 *
 * RowQueues(width, limit, overflow): append(key, v_1, ..., v_width) adds one row to key's queue (any hashable
 * key); drain() hands over {key: bytearray of rows} and starts empty queues; when more than `limit` rows wait
 * since the last drain, append calls overflow() (the owner's fold: nothing else may be draining).
 *
 * RequestRecorder(limit, overflow, error_plan, slow_errors, on_quota, clock): record(ctx, body, send_start_ns,
 * throttle_ms) appends one row of 8 int64 (arrival ns, dequeue ns, handler ns, send start ns, end ns, request
 * bytes, throttle ms, count of NONE error codes) under the key api_key << 16 | api_version << 1 | quota_exempt.
 * It reads, by name: ctx.request, ctx.header, ctx.handler_ns, ctx.quota_exempt; request.start_ns,
 * request.dequeue_ns, request.frame (its len); header.api_key, header.api_version. The body's error codes
 * are counted as planned by error_plan(type(body)) (called once per class): None (walk it with
 * slow_errors) or a tuple of (kind, outer, inner) parts: kind 0 body.outer is an error code, 1 each item of
 * body.outer has one, 2 each item of each item.inner of body.outer has one. None and 0 count as NONE; any
 * other code hands the whole body to slow_errors(api_key, body) -> NONE count (it keeps the others). While
 * `quotas_on` is true, a Produce or Fetch not quota-exempt also calls on_quota(ctx, throttle_ms). The end
 * time is clock() or, with clock None, CLOCK_MONOTONIC (time.monotonic_ns).
 *
 * Thread-safety: every call runs with the GIL held; a row is appended after the last call back into Python
 * (a drain between a row's reads and its append only makes it the next drain's), so each drain returns
 * whole rows and none twice.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "structmember.h"
#include <limits.h>
#include <stdint.h>
#include <time.h>

#if LONG_MAX == INT64_MAX /* PyLong_AsLong loops over the digits; AsLongLong goes through a byte array */
#define AS_INT64(o) ((int64_t)PyLong_AsLong(o))
#else
#define AS_INT64(o) ((int64_t)PyLong_AsLongLong(o))
#endif

#define REQUEST_ROW 8
#define MAX_WIDTH 16

/* Attribute reads of __slots__ fields, cached by (type, name) as the interpreter's own LOAD_ATTR_SLOT
 * specialization does: when the type's attribute lookup is the generic one and the name resolves to a member
 * descriptor of an object slot, its offset is kept with the type's version tag (any change to the type or its
 * bases gives it a new tag, so a stale entry never matches) and the next read of that name on that type is a
 * load at the offset. The entry holds a reference to the name (its address cannot be reused while cached).
 * Anything else, and an empty slot, goes through PyObject_GetAttr. */
#define SLOT_CACHE_SETS 512 /* two entries per set, the newer first */

typedef struct {
    PyTypeObject *type;
    PyObject *name;
    unsigned int version;
    Py_ssize_t offset;
} SlotCacheEntry;

static SlotCacheEntry slot_cache[SLOT_CACHE_SETS][2];

static inline int slot_hit(const SlotCacheEntry *e, PyTypeObject *tp, PyObject *name) {
    return e->type == tp && e->name == name && e->version == tp->tp_version_tag;
}

static PyObject *get_attr(PyObject *obj, PyObject *name) {
    PyTypeObject *tp = Py_TYPE(obj);
    uint64_t h = ((uint64_t)(uintptr_t)tp * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(uintptr_t)name * 0xC2B2AE3D27D4EB4FULL);
    SlotCacheEntry *set = slot_cache[(h >> 40) % SLOT_CACHE_SETS];
    if (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) {
        const SlotCacheEntry *e = slot_hit(&set[0], tp, name) ? &set[0] : slot_hit(&set[1], tp, name) ? &set[1] : NULL;
        if (e != NULL) {
            PyObject *v = *(PyObject **)((char *)obj + e->offset);
            if (v != NULL) {
                Py_INCREF(v);
                return v;
            }
            return PyObject_GetAttr(obj, name); /* an unset slot: the AttributeError */
        }
    }
    if (tp->tp_getattro == PyObject_GenericGetAttr) {
        PyObject *descr = _PyType_Lookup(tp, name); /* borrowed; assigns the version tag */
        /* the descriptor must be a slot of tp's own layout (tp or a base): another class's slot descriptor set
         * as an attribute of tp has an offset into that class's instances, and its read raises TypeError */
        if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type) && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) &&
            PyType_IsSubtype(tp, PyDescr_TYPE(descr))) {
            PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
            if (m->type == T_OBJECT_EX && (m->flags & ~READONLY) == 0) {
                Py_XDECREF(set[1].name);
                set[1] = set[0];
                Py_INCREF(name);
                set[0].type = tp;
                set[0].name = name;
                set[0].version = tp->tp_version_tag;
                set[0].offset = m->offset;
            }
        }
    }
    return PyObject_GetAttr(obj, name);
}

static PyObject *s_request, *s_header, *s_handler_ns, *s_quota_exempt, *s_start_ns, *s_dequeue_ns, *s_frame,
    *s_api_key, *s_api_version, *s_error_code;

/* The queues both recorders share: a dict {key: bytearray}, swapped out whole by drain. */
typedef struct {
    PyObject *queues;   /* dict */
    PyObject *overflow; /* callable or None */
    Py_ssize_t pending; /* rows since the last drain */
    Py_ssize_t limit;
} Queues;

static int queues_init(Queues *q, Py_ssize_t limit, PyObject *overflow) {
    q->queues = PyDict_New();
    if (q->queues == NULL)
        return -1;
    Py_INCREF(overflow);
    q->overflow = overflow;
    q->pending = 0;
    q->limit = limit;
    return 0;
}

/* 0 when q was initialized and not cleared; else -1 with a RuntimeError (a __new__ without __init__, or a
 * call reaching an object the collector has cleared). */
static int queues_ready(const Queues *q) {
    if (q->queues != NULL)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "recorder is not initialized");
    return -1;
}

/* key's bytearray in the current dict (borrowed: q->queues holds it), created on first use. A key's __hash__ or
 * __eq__ (any hashable key) runs Python code, which may drain: the dict looked up is held while it is searched
 * (a drained dict dropped mid-lookup was freed under the lookup), and the lookup is redone in the new dict. */
#define QUEUE_LOOKUPS 8 /* a key whose lookups always drain gets a RuntimeError, not an endless loop */
static PyObject *queue_for(Queues *q, PyObject *key) {
    for (int attempt = 0; attempt < QUEUE_LOOKUPS; attempt++) {
        PyObject *d = q->queues;
        if (d == NULL)
            break; /* cleared by a callback: queues_ready's error below */
        Py_INCREF(d);
        PyObject *ba = PyDict_GetItemWithError(d, key);
        if (ba == NULL && !PyErr_Occurred()) {
            ba = PyByteArray_FromStringAndSize(NULL, 0);
            if (ba != NULL) {
                int rc = PyDict_SetItem(d, key, ba);
                Py_DECREF(ba); /* d holds it */
                if (rc < 0)
                    ba = NULL;
            }
        }
        int current = q->queues == d;
        Py_DECREF(d);
        if (ba == NULL)
            return NULL;
        if (current) /* d is still q's, so ba lives */
            return ba;
    }
    if (queues_ready(q) == 0)
        PyErr_SetString(PyExc_RuntimeError, "the queues were drained during every lookup of the key");
    return NULL;
}

/* Append one row to ba (no Python code runs) and call overflow past the limit. */
static int queue_append(Queues *q, PyObject *ba, const int64_t *row, Py_ssize_t width) {
    Py_ssize_t n = PyByteArray_GET_SIZE(ba), add = width * (Py_ssize_t)sizeof(int64_t);
    if (PyByteArray_Resize(ba, n + add) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(ba) + n, row, (size_t)add);
    if (++q->pending > q->limit && q->overflow != Py_None) {
        PyObject *r = PyObject_CallNoArgs(q->overflow);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

static PyObject *queues_drain(Queues *q) {
    if (queues_ready(q) < 0)
        return NULL;
    PyObject *fresh = PyDict_New();
    if (fresh == NULL)
        return NULL;
    PyObject *old = q->queues;
    q->queues = fresh;
    q->pending = 0;
    return old;
}

/* ---- RowQueues ---- */

typedef struct {
    PyObject_HEAD
    Queues q;
    Py_ssize_t width;
} RowQueues;

static int RowQueues_init(RowQueues *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"width", "limit", "overflow", NULL};
    Py_ssize_t width, limit;
    PyObject *overflow = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nn|O", kwlist, &width, &limit, &overflow))
        return -1;
    if (width < 1 || width > MAX_WIDTH) {
        PyErr_SetString(PyExc_ValueError, "width must be 1..16");
        return -1;
    }
    if (self->q.queues != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "RowQueues is already initialized");
        return -1;
    }
    self->width = width;
    return queues_init(&self->q, limit, overflow);
}

static PyObject *RowQueues_append(RowQueues *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != self->width + 1) {
        PyErr_Format(PyExc_TypeError, "append takes a key and %zd ints", self->width);
        return NULL;
    }
    if (queues_ready(&self->q) < 0)
        return NULL;
    int64_t row[MAX_WIDTH];
    for (Py_ssize_t i = 0; i < self->width; i++) {
        row[i] = AS_INT64(args[i + 1]);
        if (row[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    PyObject *ba = queue_for(&self->q, args[0]);
    if (ba == NULL || queue_append(&self->q, ba, row, self->width) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *RowQueues_drain(RowQueues *self, PyObject *unused) { return queues_drain(&self->q); }

static PyObject *RowQueues_pending(RowQueues *self, void *closure) { return PyLong_FromSsize_t(self->q.pending); }

static int RowQueues_traverse(RowQueues *self, visitproc visit, void *arg) {
    Py_VISIT(self->q.queues);
    Py_VISIT(self->q.overflow);
    return 0;
}

static int RowQueues_clear(RowQueues *self) {
    Py_CLEAR(self->q.queues);
    Py_CLEAR(self->q.overflow);
    return 0;
}

static void RowQueues_dealloc(RowQueues *self) {
    PyObject_GC_UnTrack(self);
    RowQueues_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef RowQueues_methods[] = {
    {"append", (PyCFunction)(void (*)(void))RowQueues_append, METH_FASTCALL, "append(key, *ints): one row"},
    {"drain", (PyCFunction)RowQueues_drain, METH_NOARGS, "drain() -> {key: bytearray of rows}"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef RowQueues_getset[] = {
    {"pending", (getter)RowQueues_pending, NULL, "rows appended since the last drain", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RowQueuesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkapy.metrics._recorders.RowQueues",
    .tp_basicsize = sizeof(RowQueues),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Per-key queues of int64 rows.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)RowQueues_init,
    .tp_dealloc = (destructor)RowQueues_dealloc,
    .tp_traverse = (traverseproc)RowQueues_traverse,
    .tp_clear = (inquiry)RowQueues_clear,
    .tp_methods = RowQueues_methods,
    .tp_getset = RowQueues_getset,
};

/* ---- RequestRecorder ---- */

typedef struct {
    PyObject_HEAD
    Queues q;
    PyObject *error_plan, *slow_errors, *on_quota, *clock;
    PyObject *plans; /* {response class: plan tuple or None} */
    char quotas_on;
    long long last_key; /* the last row's key and its bytearray (borrowed from q.queues; -1: none) */
    PyObject *last_queue;
    PyObject *last_dict;
} RequestRecorder;

static int RequestRecorder_init(RequestRecorder *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"limit", "overflow", "error_plan", "slow_errors", "on_quota", "clock", NULL};
    Py_ssize_t limit;
    PyObject *overflow, *error_plan, *slow_errors, *on_quota, *clock = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nOOOO|O", kwlist, &limit, &overflow, &error_plan, &slow_errors,
                                     &on_quota, &clock))
        return -1;
    if (self->q.queues != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "RequestRecorder is already initialized");
        return -1;
    }
    if (queues_init(&self->q, limit, overflow) < 0)
        return -1;
    Py_INCREF(error_plan);
    self->error_plan = error_plan;
    Py_INCREF(slow_errors);
    self->slow_errors = slow_errors;
    Py_INCREF(on_quota);
    self->on_quota = on_quota;
    Py_INCREF(clock);
    self->clock = clock;
    self->last_key = -1;
    self->last_queue = self->last_dict = NULL;
    self->plans = PyDict_New(); /* last: record() takes a set plans for a whole initialization */
    return self->plans == NULL ? -1 : 0;
}

static int get_int64(PyObject *obj, PyObject *name, int64_t *out) {
    PyObject *v = get_attr(obj, name);
    if (v == NULL)
        return -1;
    *out = v == Py_None ? 0 : AS_INT64(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* One error code: NONE (None or 0) adds to *none; another sets *other. */
static int count_code(PyObject *holder, int64_t *none, int *other) {
    PyObject *code = get_attr(holder, s_error_code);
    if (code == NULL)
        return -1;
    if (code == Py_None)
        (*none)++;
    else {
        int truth = PyObject_IsTrue(code);
        if (truth < 0) {
            Py_DECREF(code);
            return -1;
        }
        if (truth)
            *other = 1;
        else
            (*none)++;
    }
    Py_DECREF(code);
    return 0;
}

/* The items of holder.name (None: no items) as a new reference to a list or tuple, or NULL with an error. */
static PyObject *items_of(PyObject *holder, PyObject *name) {
    PyObject *items = get_attr(holder, name);
    if (items == NULL || items == Py_None || PyList_CheckExact(items) || PyTuple_CheckExact(items))
        return items;
    PyObject *seq = PySequence_Fast(items, "error code items must be iterable");
    Py_DECREF(items);
    return seq;
}

/* 0 when plan is None or a tuple of (int kind, str outer, str inner) parts (inner read only by kind 2), as
 * walk_plan reads it without checks; else -1 with a TypeError. Checked once per class, when the plan is cached. */
static int check_plan(PyObject *plan) {
    if (plan == Py_None)
        return 0;
    if (!PyTuple_Check(plan))
        goto bad;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(plan); k++) {
        PyObject *part = PyTuple_GET_ITEM(plan, k);
        if (!PyTuple_Check(part) || PyTuple_GET_SIZE(part) != 3 || !PyLong_CheckExact(PyTuple_GET_ITEM(part, 0)) ||
            !PyUnicode_Check(PyTuple_GET_ITEM(part, 1)))
            goto bad;
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(part, 0));
        if (kind == -1 && PyErr_Occurred())
            return -1;
        if (kind != 0 && kind != 1 && !PyUnicode_Check(PyTuple_GET_ITEM(part, 2)))
            goto bad;
    }
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "error_plan must return a tuple of (kind, outer, inner) or None");
    return -1;
}

/* Count the body's NONE codes per the plan (checked by check_plan); *other set when any other code is seen. */
static int walk_plan(PyObject *body, PyObject *plan, int64_t *none, int *other) {
    Py_ssize_t parts = PyTuple_GET_SIZE(plan);
    for (Py_ssize_t k = 0; k < parts && !*other; k++) {
        PyObject *part = PyTuple_GET_ITEM(plan, k);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(part, 0));
        PyObject *outer = PyTuple_GET_ITEM(part, 1), *inner = PyTuple_GET_ITEM(part, 2);
        if (kind == 0) {
            PyObject *code = get_attr(body, outer);
            if (code == NULL)
                return -1;
            int truth = code == Py_None ? 0 : PyObject_IsTrue(code);
            Py_DECREF(code);
            if (truth < 0)
                return -1;
            if (truth)
                *other = 1;
            else
                (*none)++;
            continue;
        }
        PyObject *items = items_of(body, outer);
        if (items == NULL)
            return -1;
        if (items == Py_None) {
            Py_DECREF(items);
            continue;
        }
        int rc = 0;
        /* sizes and items re-read at each step: an attribute read may run Python code */
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items) && rc == 0 && !*other; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(items, i);
            Py_INCREF(item);
            if (kind == 1) {
                rc = count_code(item, none, other);
                Py_DECREF(item);
                continue;
            }
            PyObject *sub = items_of(item, inner);
            Py_DECREF(item);
            if (sub == NULL) {
                rc = -1;
                break;
            }
            if (sub != Py_None) {
                for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(sub) && rc == 0 && !*other; j++) {
                    PyObject *p = PySequence_Fast_GET_ITEM(sub, j);
                    Py_INCREF(p);
                    rc = count_code(p, none, other);
                    Py_DECREF(p);
                }
            }
            Py_DECREF(sub);
        }
        Py_DECREF(items);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The NONE count of body; -1 with an error set. */
static int64_t none_count(RequestRecorder *self, PyObject *body, long long api_key) {
    PyObject *cls = (PyObject *)Py_TYPE(body);
    PyObject *plan = PyDict_GetItemWithError(self->plans, cls);
    if (plan == NULL) {
        if (PyErr_Occurred())
            return -1;
        plan = PyObject_CallOneArg(self->error_plan, cls);
        if (plan == NULL)
            return -1;
        if (check_plan(plan) < 0) {
            Py_DECREF(plan);
            return -1;
        }
        int rc = PyDict_SetItem(self->plans, cls, plan);
        Py_DECREF(plan); /* the dict holds it */
        if (rc < 0)
            return -1;
    }
    int64_t none = 0;
    int other = 0;
    if (plan != Py_None) {
        Py_INCREF(plan);
        int rc = walk_plan(body, plan, &none, &other);
        Py_DECREF(plan);
        if (rc < 0)
            return -1;
        if (!other)
            return none;
    }
    PyObject *r = PyObject_CallFunction(self->slow_errors, "LO", api_key, body);
    if (r == NULL)
        return -1;
    none = AS_INT64(r);
    Py_DECREF(r);
    return none;
}

static PyObject *RequestRecorder_record(RequestRecorder *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "record(ctx, body, send_start_ns, throttle_ms)");
        return NULL;
    }
    if (queues_ready(&self->q) < 0 || self->plans == NULL) { /* plans: the field init sets last */
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "recorder is not initialized");
        return NULL;
    }
    PyObject *ctx = args[0], *body = args[1];
    PyObject *request = NULL, *header = NULL, *frame = NULL, *exempt_obj = NULL;
    int64_t row[REQUEST_ROW], api_key, version;
    int exempt;
    row[3] = AS_INT64(args[2]);
    if (row[3] == -1 && PyErr_Occurred())
        return NULL;
    row[6] = AS_INT64(args[3]);
    if (row[6] == -1 && PyErr_Occurred())
        return NULL;
    request = get_attr(ctx, s_request);
    if (request == NULL)
        return NULL;
    header = get_attr(ctx, s_header);
    if (header == NULL)
        goto error;
    if (get_int64(request, s_start_ns, &row[0]) < 0 || get_int64(request, s_dequeue_ns, &row[1]) < 0 ||
        get_int64(ctx, s_handler_ns, &row[2]) < 0 || get_int64(header, s_api_key, &api_key) < 0 ||
        get_int64(header, s_api_version, &version) < 0)
        goto error;
    frame = get_attr(request, s_frame);
    if (frame == NULL)
        goto error;
    row[5] = PyObject_Size(frame);
    if (row[5] < 0)
        goto error;
    exempt_obj = get_attr(ctx, s_quota_exempt);
    if (exempt_obj == NULL)
        goto error;
    exempt = PyObject_IsTrue(exempt_obj);
    if (exempt < 0)
        goto error;
    if (body == Py_None)
        row[7] = 1; /* acks=0: no response, counted as NONE */
    else if ((row[7] = none_count(self, body, api_key)) < 0 && PyErr_Occurred())
        goto error;
    if (self->quotas_on && (api_key == 0 || api_key == 1) && !exempt) {
        PyObject *r = PyObject_CallFunction(self->on_quota, "OL", ctx, (long long)row[6]);
        if (r == NULL)
            goto error;
        Py_DECREF(r);
    }
    if (self->clock == Py_None) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        row[4] = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    } else {
        PyObject *now = PyObject_CallNoArgs(self->clock);
        if (now == NULL)
            goto error;
        row[4] = AS_INT64(now);
        Py_DECREF(now);
        if (row[4] == -1 && PyErr_Occurred())
            goto error;
    }
    Py_CLEAR(request);
    Py_CLEAR(header);
    Py_CLEAR(frame);
    Py_CLEAR(exempt_obj);
    /* unsigned shifts: a negative api_key or version (a client's header) shifted signed is undefined in C */
    long long key = (long long)((uint64_t)api_key << 16 | (uint64_t)version << 1 | (uint64_t)exempt);
    PyObject *ba;
    if (key == self->last_key && self->last_dict == self->q.queues)
        ba = self->last_queue;
    else {
        PyObject *key_obj = PyLong_FromLongLong(key);
        if (key_obj == NULL)
            return NULL;
        ba = queue_for(&self->q, key_obj);
        Py_DECREF(key_obj);
        if (ba == NULL)
            return NULL;
        self->last_key = key;
        self->last_queue = ba;
        self->last_dict = self->q.queues;
    }
    if (queue_append(&self->q, ba, row, REQUEST_ROW) < 0)
        return NULL;
    Py_RETURN_NONE;
error:
    Py_XDECREF(request);
    Py_XDECREF(header);
    Py_XDECREF(frame);
    Py_XDECREF(exempt_obj);
    return NULL;
}

static PyObject *RequestRecorder_drain(RequestRecorder *self, PyObject *unused) {
    self->last_key = -1;
    self->last_queue = self->last_dict = NULL;
    return queues_drain(&self->q);
}

static PyObject *RequestRecorder_pending(RequestRecorder *self, void *closure) {
    return PyLong_FromSsize_t(self->q.pending);
}

static int RequestRecorder_traverse(RequestRecorder *self, visitproc visit, void *arg) {
    Py_VISIT(self->q.queues);
    Py_VISIT(self->q.overflow);
    Py_VISIT(self->error_plan);
    Py_VISIT(self->slow_errors);
    Py_VISIT(self->on_quota);
    Py_VISIT(self->clock);
    Py_VISIT(self->plans);
    return 0;
}

static int RequestRecorder_clear(RequestRecorder *self) {
    self->last_key = -1;
    self->last_queue = self->last_dict = NULL;
    Py_CLEAR(self->q.queues);
    Py_CLEAR(self->q.overflow);
    Py_CLEAR(self->error_plan);
    Py_CLEAR(self->slow_errors);
    Py_CLEAR(self->on_quota);
    Py_CLEAR(self->clock);
    Py_CLEAR(self->plans);
    return 0;
}

static void RequestRecorder_dealloc(RequestRecorder *self) {
    PyObject_GC_UnTrack(self);
    RequestRecorder_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef RequestRecorder_methods[] = {
    {"record", (PyCFunction)(void (*)(void))RequestRecorder_record, METH_FASTCALL,
     "record(ctx, body, send_start_ns, throttle_ms): one finished request"},
    {"drain", (PyCFunction)RequestRecorder_drain, METH_NOARGS, "drain() -> {key: bytearray of rows}"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef RequestRecorder_members[] = {
    {"quotas_on", T_BOOL, offsetof(RequestRecorder, quotas_on), 0, "call on_quota for client Produce/Fetch"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef RequestRecorder_getset[] = {
    {"pending", (getter)RequestRecorder_pending, NULL, "rows recorded since the last drain", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RequestRecorderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkapy.metrics._recorders.RequestRecorder",
    .tp_basicsize = sizeof(RequestRecorder),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "RequestMetrics' per-request rows.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)RequestRecorder_init,
    .tp_dealloc = (destructor)RequestRecorder_dealloc,
    .tp_traverse = (traverseproc)RequestRecorder_traverse,
    .tp_clear = (inquiry)RequestRecorder_clear,
    .tp_methods = RequestRecorder_methods,
    .tp_members = RequestRecorder_members,
    .tp_getset = RequestRecorder_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_recorders", NULL, -1, NULL};

#define INTERN(var, text)                                                                                       \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                                      \
        return NULL;

PyMODINIT_FUNC PyInit__recorders(void) {
    INTERN(s_request, "request");
    INTERN(s_header, "header");
    INTERN(s_handler_ns, "handler_ns");
    INTERN(s_quota_exempt, "quota_exempt");
    INTERN(s_start_ns, "start_ns");
    INTERN(s_dequeue_ns, "dequeue_ns");
    INTERN(s_frame, "frame");
    INTERN(s_api_key, "api_key");
    INTERN(s_api_version, "api_version");
    INTERN(s_error_code, "error_code");
    if (PyType_Ready(&RowQueuesType) < 0 || PyType_Ready(&RequestRecorderType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&RowQueuesType);
    if (PyModule_AddObject(m, "RowQueues", (PyObject *)&RowQueuesType) < 0) {
        Py_DECREF(&RowQueuesType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&RequestRecorderType);
    if (PyModule_AddObject(m, "RequestRecorder", (PyObject *)&RequestRecorderType) < 0) {
        Py_DECREF(&RequestRecorderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
