/*
 * kafkapy.spark._arrow_columns: the compiled build of the Kafka source's Arrow columns from the shared
 * record walker's output (record/record_walker.RecordWalk columns), one pass per column set, no Python
 * object per record. record_columns.RecordColumns.walked_fields (Arrow compute kernels) is the reference
 * and the fallback when this module is not built; both give equal columns.
 *
 * columns(arena, walks, ncols, fields, facts, start_offset, end_offset) -> tuple
 *   arena: the records' bytes (what the walk walked); walks: native int64, `ncols` per record, in the
 *   walker's column order; fields: the walker's column indexes (KEY_POS, KEY_LEN, VALUE_POS, VALUE_LEN,
 *   OFFSET_DELTA, TIMESTAMP_DELTA); facts: native int64, 5 per batch in walk order (record count, base
 *   offset, base timestamp, LogAppendTime 0/1, max timestamp); records with start_offset <= offset <
 *   end_offset are kept (end_offset < 0: no upper bound).
 * Returns (rows, key_offsets, key_data, key_validity, key_nulls, value_offsets, value_data,
 *   value_validity, value_nulls, offset, timestamp_us, timestamp_type) where the buffers are bytes in
 *   Arrow's layout: int32 offsets (rows + 1), the field bytes back to back, a validity bitmap (LSB first)
 *   or None when no value is null, int64 offsets, int64 microsecond timestamps (LogAppendTime batches
 *   carry their max timestamp), int32 timestamp types. Positions are checked against the arena (a bad
 *   walk raises ValueError); more than 2 GiB of keys or values raises OverflowError. walks and facts must be
 *   8-byte aligned (an array('q') is). Offsets and timestamps wrap past the int64 bounds, as Arrow's add and
 *   multiply kernels do (two's complement, defined here: signed overflow in C is not).
 * Reads only the buffers it is given; thread-safe (runs with the GIL held).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static inline int64_t add64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

typedef struct {
    int64_t pos_col, len_col;
    int64_t total, nulls;
    PyObject *offsets, *data, *validity;
} Field;

static int alloc_field(Field *f, Py_ssize_t rows) {
    f->offsets = PyBytes_FromStringAndSize(NULL, (rows + 1) * 4);
    f->data = PyBytes_FromStringAndSize(NULL, f->total);
    if (f->nulls) {
        f->validity = PyBytes_FromStringAndSize(NULL, (rows + 7) / 8);
        if (f->validity) memset(PyBytes_AS_STRING(f->validity), 0xFF, (rows + 7) / 8);
    } else {
        f->validity = Py_None;
        Py_INCREF(Py_None);
    }
    return f->offsets && f->data && f->validity ? 0 : -1;
}

static void fill_field(Field *f, const unsigned char *arena, const int64_t *rec, Py_ssize_t row, int32_t *cursor) {
    int32_t *offs = (int32_t *)PyBytes_AS_STRING(f->offsets);
    int64_t len = rec[f->len_col];
    if (len < 0) {
        ((unsigned char *)PyBytes_AS_STRING(f->validity))[row >> 3] &= (unsigned char)~(1u << (row & 7));
    } else if (len > 0) {
        memcpy(PyBytes_AS_STRING(f->data) + *cursor, arena + rec[f->pos_col], (size_t)len);
        *cursor += (int32_t)len;
    }
    offs[row + 1] = *cursor;
}

static PyObject *columns(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer arena, walks, facts;
    Py_ssize_t ncols;
    long long key_pos, key_len, value_pos, value_len, offset_delta, ts_delta, start_offset, end_offset;
    if (!PyArg_ParseTuple(args, "y*y*n(LLLLLL)y*LL", &arena, &walks, &ncols, &key_pos, &key_len, &value_pos,
                          &value_len, &offset_delta, &ts_delta, &facts, &start_offset, &end_offset))
        return NULL;
    PyObject *result = NULL;
    Field fields[2] = {{key_pos, key_len, 0, 0, NULL, NULL, NULL}, {value_pos, value_len, 0, 0, NULL, NULL, NULL}};
    PyObject *offsets = NULL, *ts = NULL, *ts_type = NULL;
    const unsigned char *a = (const unsigned char *)arena.buf;
    const int64_t *w = (const int64_t *)walks.buf, *fa = (const int64_t *)facts.buf;
    if ((uintptr_t)walks.buf % sizeof(int64_t) || (uintptr_t)facts.buf % sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "walks and facts must be aligned int64 buffers");
        goto done;
    }
    Py_ssize_t n = walks.len / 8 / (ncols > 0 ? ncols : 1), nbatches = facts.len / 8 / 5;
    int64_t maxcol = key_pos;
    int64_t cols[6] = {key_pos, key_len, value_pos, value_len, offset_delta, ts_delta};
    for (int i = 0; i < 6; i++) {
        if (cols[i] < 0) goto bad_fields;
        if (cols[i] > maxcol) maxcol = cols[i];
    }
    if (maxcol >= ncols) goto bad_fields;

    /* Pass 1: rows kept, bytes and nulls per field; every position checked against the arena. */
    Py_ssize_t rows = 0, r = 0;
    for (Py_ssize_t b = 0; b < nbatches; b++) {
        int64_t count = fa[5 * b], base = fa[5 * b + 1];
        if (count < 0 || count > n - r) { /* not r + count: that can wrap past the int64 bound */
            PyErr_SetString(PyExc_ValueError, "batch record counts exceed the walked records");
            goto done;
        }
        for (int64_t i = 0; i < count; i++, r++) {
            const int64_t *rec = w + r * ncols;
            int64_t off = add64(base, rec[offset_delta]);
            if (off < start_offset || (end_offset >= 0 && off >= end_offset)) continue;
            rows++;
            for (int k = 0; k < 2; k++) {
                int64_t p = rec[fields[k].pos_col], len = rec[fields[k].len_col];
                if (len < 0) {
                    fields[k].nulls++;
                } else if (p < 0 || p > arena.len || len > arena.len - p) {
                    PyErr_Format(PyExc_ValueError, "record field at %lld (+%lld) is outside the %zd-byte arena",
                                 (long long)p, (long long)len, arena.len);
                    goto done;
                } else if ((fields[k].total += len) > INT32_MAX) { /* stop before the sum can wrap */
                    PyErr_SetString(PyExc_OverflowError, "more than 2 GiB of keys or values in one Arrow batch");
                    goto done;
                }
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        if (fields[k].total > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "more than 2 GiB of keys or values in one Arrow batch");
            goto done;
        }
        if (alloc_field(&fields[k], rows) < 0) goto done;
        ((int32_t *)PyBytes_AS_STRING(fields[k].offsets))[0] = 0;
    }
    offsets = PyBytes_FromStringAndSize(NULL, rows * 8);
    ts = PyBytes_FromStringAndSize(NULL, rows * 8);
    ts_type = PyBytes_FromStringAndSize(NULL, rows * 4);
    if (!offsets || !ts || !ts_type) goto done;

    /* Pass 2: fill. */
    int64_t *o = (int64_t *)PyBytes_AS_STRING(offsets), *t = (int64_t *)PyBytes_AS_STRING(ts);
    int32_t *tt = (int32_t *)PyBytes_AS_STRING(ts_type);
    int32_t cursor[2] = {0, 0};
    Py_ssize_t row = 0;
    r = 0;
    for (Py_ssize_t b = 0; b < nbatches; b++) {
        int64_t count = fa[5 * b], base = fa[5 * b + 1], base_ts = fa[5 * b + 2], max_ts = fa[5 * b + 4];
        int log_append = fa[5 * b + 3] != 0;
        for (int64_t i = 0; i < count; i++, r++) {
            const int64_t *rec = w + r * ncols;
            int64_t off = add64(base, rec[offset_delta]);
            if (off < start_offset || (end_offset >= 0 && off >= end_offset)) continue;
            fill_field(&fields[0], a, rec, row, &cursor[0]);
            fill_field(&fields[1], a, rec, row, &cursor[1]);
            o[row] = off;
            /* Wrapping as Arrow's multiply kernel does not: int64 milliseconds never reach the bound. */
            t[row] = (int64_t)((uint64_t)(log_append ? max_ts : add64(base_ts, rec[ts_delta])) * 1000u);
            tt[row] = log_append;
            row++;
        }
    }
    result = Py_BuildValue("nOOOLOOOLOOO", rows, fields[0].offsets, fields[0].data, fields[0].validity,
                           (long long)fields[0].nulls, fields[1].offsets, fields[1].data, fields[1].validity,
                           (long long)fields[1].nulls, offsets, ts, ts_type);
    goto done;
bad_fields:
    PyErr_SetString(PyExc_ValueError, "column indexes outside the walk's columns");
done:
    for (int k = 0; k < 2; k++) {
        Py_XDECREF(fields[k].offsets);
        Py_XDECREF(fields[k].data);
        Py_XDECREF(fields[k].validity);
    }
    Py_XDECREF(offsets);
    Py_XDECREF(ts);
    Py_XDECREF(ts_type);
    PyBuffer_Release(&arena);
    PyBuffer_Release(&walks);
    PyBuffer_Release(&facts);
    return result;
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_VARARGS, "Arrow buffers of the Kafka source's columns from a record walk."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_arrow_columns", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__arrow_columns(void) { return PyModule_Create(&module); }
