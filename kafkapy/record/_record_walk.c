/*
 * kafkapy.record._record_walk: the compiled fast path of record_walker.RecordWalk.walk (with or without
 * columns). Same byte format, same checks, same results as the pure-Python walk, which stays the
 * reference and the fallback when this module is not built.
 *
 * Byte format of one magic-2 record: length varint | attributes int8 | timestampDelta varlong |
 * offsetDelta varint | keyLength varint (-1 null) | key | valueLength varint (-1 null) | value |
 * headersCount varint | per header: keyLength varint, key, valueLength varint (-1 null), value.
 *
 * walk(data, pos, index, count, check_offsets, partial, min_ts, max_ts, null_keys, columns) ->
 *     (pos, index, min_ts, max_ts, min_ts_index, max_ts_index, gap_index, gap_delta, error, columns)
 * min_ts_index / max_ts_index / gap_index are -1 when this call did not change them; error is None or
 * the message of the CorruptRecordError the caller raises. Indexes of null-key records are appended to
 * the list null_keys. With `columns` true the result's last item is the walked records' 10 columns
 * (record_walker.COLUMNS order) as native int64s in a bytes object (array('q').frombytes), else None.
 * Reads only the buffer it is given; thread-safe (runs with the GIL held).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NCOLS 10

/* 0 ok, 1 truncated (ran past `end`), 2 too long. */
static int read_varint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end, int max_bytes, int64_t *out) {
    uint64_t u = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos >= end) return 1;
        unsigned char b = p[(*pos)++];
        if (max_bytes == 10 && i == 9 && b > 1) return 2; /* past 64 bits */
        u |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            int64_t v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            if (max_bytes == 5 && (v < INT32_MIN || v > INT32_MAX)) return 2;
            *out = v;
            return 0;
        }
        shift += 7;
    }
    return 2;
}

#define FAIL(...) do { snprintf(err, sizeof(err), __VA_ARGS__); goto done; } while (0)
#define VARINT(dst, maxb, what) do { \
        int rc_ = read_varint(d, &pos, rec_end, (maxb), &(dst)); \
        if (rc_) FAIL("Found invalid record structure at position %zd: %s %s", start, what, \
                      rc_ == 1 ? "runs past the record" : "varint is too long"); \
    } while (0)

static PyObject *walk(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t pos;
    long long index, count, min_ts, max_ts;
    int check_offsets, partial, want_columns;
    PyObject *null_keys;
    if (!PyArg_ParseTuple(args, "y*nLLppLLO!p", &view, &pos, &index, &count, &check_offsets, &partial,
                          &min_ts, &max_ts, &PyList_Type, &null_keys, &want_columns))
        return NULL;
    if (pos < 0) { /* the loop reads d[pos] once pos < len: a start before the buffer must not get there */
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "walk start %zd is before the buffer", pos);
        return NULL;
    }
    int64_t *cols = NULL;
    Py_ssize_t ncols = 0, cap = 0;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len;
    long long min_idx = -1, max_idx = -1, gap_idx = -1, gap_delta = 0;
    char err[256];
    err[0] = 0;
    Py_ssize_t start = pos;
    while (index < count) {
        start = pos;
        if (pos >= n) {
            if (partial) break;
            FAIL("Incorrect declared batch size, premature end of records after %lld of %lld", index, count);
        }
        int64_t length, ts, od, klen, vlen, nh;
        Py_ssize_t p2 = pos;
        int rc = read_varint(d, &p2, n, 5, &length);
        if (rc == 1 && partial) break;
        if (rc) FAIL("Found invalid record structure at position %zd: record length varint is %s", start,
                     rc == 1 ? "truncated" : "too long");
        pos = p2;
        if (length < 1) FAIL("Invalid record size %lld at position %zd", (long long)length, start);
        Py_ssize_t rec_end = pos + (Py_ssize_t)length;
        if (rec_end > n) {
            if (partial) { pos = start; break; }
            FAIL("Record at position %zd of size %lld runs past the end of the records", start, (long long)length);
        }
        pos += 1; /* attributes */
        Py_ssize_t kpos, vpos, hpos;
        VARINT(ts, 10, "timestamp delta");
        VARINT(od, 5, "offset delta");
        VARINT(klen, 5, "key length");
        kpos = pos;
        if (klen >= 0) {
            pos += (Py_ssize_t)klen;
        } else if (klen == -1) {
            PyObject *i = PyLong_FromLongLong(index);
            if (i == NULL || PyList_Append(null_keys, i) < 0) {
                Py_XDECREF(i);
                PyBuffer_Release(&view);
                free(cols);
                return NULL;
            }
            Py_DECREF(i);
        } else {
            FAIL("Invalid negative key length %lld in record %lld", (long long)klen, index);
        }
        if (pos >= rec_end) FAIL("Key of record %lld runs past the record's size %lld", index, (long long)length);
        VARINT(vlen, 5, "value length");
        vpos = pos;
        if (vlen >= 0) pos += (Py_ssize_t)vlen;
        else if (vlen != -1) FAIL("Invalid negative value length %lld in record %lld", (long long)vlen, index);
        if (pos >= rec_end) FAIL("Value of record %lld runs past the record's size %lld", index, (long long)length);
        hpos = pos;
        VARINT(nh, 5, "header count");
        if (nh < 0) FAIL("Found invalid number of record headers %lld", (long long)nh);
        if (nh > rec_end - pos) FAIL("Found invalid number of record headers %lld in record %lld", (long long)nh, index);
        for (int64_t h = 0; h < nh; h++) {
            int64_t hkl, hvl;
            VARINT(hkl, 5, "header key length");
            if (hkl < 0) FAIL("Invalid negative header key size");
            pos += (Py_ssize_t)hkl;
            if (pos > rec_end) FAIL("Header key of record %lld runs past the record", index);
            VARINT(hvl, 5, "header value length");
            if (hvl >= 0) pos += (Py_ssize_t)hvl;
            else if (hvl != -1) FAIL("Invalid negative header value size %lld", (long long)hvl);
            if (pos > rec_end) FAIL("Header value of record %lld runs past the record", index);
        }
        if (pos != rec_end)
            FAIL("Invalid record size: expected to read %lld bytes in record payload, but instead read %lld",
                 (long long)length, (long long)(length - (rec_end - pos)));
        if (ts < min_ts) { min_ts = ts; min_idx = index; }
        if (ts > max_ts) { max_ts = ts; max_idx = index; }
        if (check_offsets && od != index && gap_idx < 0) { gap_idx = index; gap_delta = od; }
        if (want_columns) {
            if (ncols + NCOLS > cap) {
                Py_ssize_t grown = cap ? cap * 2 : 64 * NCOLS;
                int64_t *more = realloc(cols, (size_t)grown * sizeof(int64_t));
                if (more == NULL) { free(cols); PyBuffer_Release(&view); return PyErr_NoMemory(); }
                cols = more;
                cap = grown;
            }
            int64_t row[NCOLS] = {start, rec_end, od, ts, kpos, klen, vpos, vlen, hpos, nh};
            for (int c = 0; c < NCOLS; c++) cols[ncols + c] = row[c];
            ncols += NCOLS;
        }
        index++;
    }
done:
    PyBuffer_Release(&view);
    PyObject *columns = Py_None;
    Py_INCREF(columns);
    if (want_columns) {
        Py_DECREF(columns);
        columns = PyBytes_FromStringAndSize((const char *)cols, ncols * (Py_ssize_t)sizeof(int64_t));
        free(cols);
        if (columns == NULL) return NULL;
    }
    PyObject *result;
    if (err[0])
        result = Py_BuildValue("nLLLLLLLsN", pos, index, min_ts, max_ts, min_idx, max_idx, gap_idx, gap_delta, err,
                               columns);
    else
        result = Py_BuildValue("nLLLLLLLON", pos, index, min_ts, max_ts, min_idx, max_idx, gap_idx, gap_delta,
                               Py_None, columns);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS, "Validation walk over magic-2 records (see record_walker.RecordWalk.walk)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_record_walk", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__record_walk(void) { return PyModule_Create(&module); }
