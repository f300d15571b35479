# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled svmlight / LIBSVM text parser (and writer), the fast path of kernelbench/data/parse.py.

`parse_block` turns a block of complete text lines into CSR pieces (labels, raw feature indices,
values, entries per row) without holding the GIL, so that decompression runs on the other core.
scikit-learn's `load_svmlight_file` is the reference it agrees with, value for value (tests): labels
and values are read with the C library's correctly rounded strtod, as Python's float() reads them.

Published files carry defects that LIBSVM's and scikit-learn's readers refuse, although they have
exactly one reading. Each is repaired here, counted per kind (lines), and the first
line of each kind is recorded; with `strict` the first one is an error instead:

    MISSING_SEPARATOR   `13:6.64e-0114:8.74e-01`: a value glued to the next `index:` (LIBSVM's
                        SUSY.xz). The split is accepted only when exactly one way of cutting the
                        digits gives increasing indices below the next index (or n_features).
    MISSING_INDEX       `13:0.5 :0.7 15:0.1`: a value without its index, accepted only when exactly
                        one index fits between its neighbours.
    CRLF                a line ending in \\r\\n
    BLANK_LINE          an empty or whitespace-only line (dropped)
    NO_FINAL_NEWLINE    the last line has no \\n

Spaces before the label or after the last value are not defects: LIBSVM's own tools write a space
after every pair, and its reader, like scikit-learn's, accepts them.

Anything else (a token without ':', a value that is not a number, indices out of order or out of
range, a defect with two readings) stops the parse with a status code and the offending line.
"""
from cython cimport floating
from libc.stdio cimport snprintf
from libc.stdlib cimport strtod
from libc.string cimport memchr, memcpy

import numpy as np

# ---- status codes (parse.py turns them into messages) ----
cpdef enum Status:
    OK = 0
    ERR_LABEL = 1          # the first token is not a number
    ERR_TOKEN = 2          # a token is not <index>:<value>
    ERR_INDEX = 3          # an index is not a non-negative integer
    ERR_VALUE = 4          # a value is not a number
    ERR_ORDER = 5          # indices not strictly increasing
    ERR_RANGE = 6          # index 0 in a 1-based file, above n_features, or >= 2**31
    ERR_AMBIGUOUS = 7      # a defect with more than one (or no) consistent reading
    ERR_STRICT = 8         # strict: a repairable defect (the kind is in `err_kind`)

REPAIR_KINDS = ("missing_separator", "missing_index", "crlf", "blank_line", "no_final_newline")
cdef enum:
    K_SEPARATOR = 0
    K_INDEX = 1
    K_CRLF = 2
    K_BLANK = 3
    K_FINAL = 4
    N_KINDS = 5
    MAX_GLUES = 4             # repaired separators in one token (the published defect has one)
    MAX_INDEX_DIGITS = 10
    MAX_NUMBER_CHARS = 255

cdef long long INDEX_MAX = 2147483647
cdef long long NO_BOUND = 4294967296    # above every valid index


cdef struct Parser:
    long long n_features      # -1: unknown
    int base                  # 1: one-based, 0: zero-based, -1: auto (any index >= 0)
    bint strict
    long long line            # line number within the block (0-based)
    long long line_offset     # absolute number of the block's first line (0-based)
    long long[N_KINDS] repairs
    long long[N_KINDS] first_line
    bint[N_KINDS] seen        # kinds already counted on the current line
    int err_code
    int err_kind
    long long err_token       # byte offset of the offending token in the block
    long long min_index
    long long max_index


cdef inline bint _space(char c) noexcept nogil:
    return c == c' ' or c == c'\t' or c == c'\r' or c == c'\v' or c == c'\f'


cdef inline bint _digit(char c) noexcept nogil:
    return c'0' <= c <= c'9'


cdef bint _number(const char* s, Py_ssize_t length, double* out) noexcept nogil:
    """Parse s[:length] as a whole decimal number (as Python's float() would; no hex, no nan(...))."""
    cdef char[MAX_NUMBER_CHARS + 1] tmp
    cdef char* end
    cdef Py_ssize_t i
    if length <= 0 or length > MAX_NUMBER_CHARS:
        return False
    for i in range(length):
        if s[i] == c'x' or s[i] == c'X' or s[i] == c'(' or s[i] == c'_':
            return False
    memcpy(tmp, s, length)
    tmp[length] = 0
    out[0] = strtod(tmp, &end)
    return end == tmp + length


cdef bint _index(const char* s, Py_ssize_t length, long long* out) noexcept nogil:
    """A non-empty run of decimal digits (at most 10) as an integer."""
    cdef long long v = 0
    cdef Py_ssize_t i
    if length <= 0 or length > MAX_INDEX_DIGITS:
        return False
    for i in range(length):
        if not _digit(s[i]):
            return False
        v = v * 10 + (s[i] - c'0')
    out[0] = v
    return True


cdef inline int _repair(Parser* p, int kind) noexcept nogil:
    """Count a repair of `kind` on the current line; in strict mode it is an error instead."""
    if p.strict:
        p.err_code = ERR_STRICT
        p.err_kind = kind
        return -1
    if not p.seen[kind]:
        p.seen[kind] = True
        p.repairs[kind] += 1
        if p.first_line[kind] < 0:
            p.first_line[kind] = p.line_offset + p.line
    return 0


cdef inline long long _lower_bound(Parser* p) noexcept nogil:
    """The smallest valid index minus one."""
    return 0 if p.base == 1 else -1


cdef inline long long _upper_bound(Parser* p) noexcept nogil:
    """One above the largest valid raw index."""
    if p.n_features < 0:
        return NO_BOUND
    return p.n_features if p.base == 0 else p.n_features + 1


# ---- resolving a token with missing separators -----------------------------------------------
# A feature token with k > 1 colons, `i0:v0 i1:v1 ...` written without the spaces, is a chain of
# parts P0 : P1 : ... : Pk where every middle part is <value><index> glued together. Each middle part
# offers a few cuts (the index is a suffix of its trailing digits, without a leading zero; the
# rest must be a whole number); a reading is a choice of cut per part whose indices increase
# strictly between the previous index and the next one. Exactly one reading -> repaired.

cdef struct Glue:
    int n_parts                         # middle parts
    int[MAX_GLUES] n_cuts
    long long[MAX_GLUES][MAX_INDEX_DIGITS] cut_index
    double[MAX_GLUES][MAX_INDEX_DIGITS] cut_value
    int[MAX_GLUES] chosen
    int[MAX_GLUES] solution
    int n_solutions


cdef void _search(Glue* g, int part, long long prev, long long bound) noexcept nogil:
    cdef int c
    if g.n_solutions > 1:
        return
    if part == g.n_parts:
        if prev < bound:
            g.n_solutions += 1
            if g.n_solutions == 1:
                memcpy(g.solution, g.chosen, sizeof(int) * MAX_GLUES)
        return
    for c in range(g.n_cuts[part]):
        if prev < g.cut_index[part][c] < bound:
            g.chosen[part] = c
            _search(g, part + 1, g.cut_index[part][c], bound)


cdef int _cuts(Glue* g, int part, const char* s, Py_ssize_t length) noexcept nogil:
    """The possible <value><index> cuts of one middle part."""
    cdef Py_ssize_t run = 0, cut
    cdef long long idx
    cdef double val
    while run < length and _digit(s[length - 1 - run]):
        run += 1
    g.n_cuts[part] = 0
    for cut in range(1, min(run, MAX_INDEX_DIGITS) + 1):
        if cut > 1 and s[length - cut] == c'0':
            continue                        # an index is never written with a leading zero
        if not _index(s + length - cut, cut, &idx):
            continue
        if not _number(s, length - cut, &val):
            continue
        g.cut_index[part][g.n_cuts[part]] = idx
        g.cut_value[part][g.n_cuts[part]] = val
        g.n_cuts[part] += 1
    return g.n_cuts[part]


cdef long long _next_index(const char* buf, Py_ssize_t pos, Py_ssize_t end, Parser* p) noexcept nogil:
    """The index of the token after `pos` on this line (its leading digits up to ':'), the upper
    bound if there is none, -1 if that token does not start with an index."""
    cdef Py_ssize_t q
    cdef long long idx
    while pos < end and _space(buf[pos]):
        pos += 1
    if pos >= end:
        return _upper_bound(p)
    q = pos
    while q < end and _digit(buf[q]):
        q += 1
    if q < end and buf[q] == c':' and _index(buf + pos, q - pos, &idx):
        return idx
    return -1


# ---- one line ---------------------------------------------------------------------------------

cdef int _emit(Parser* p, long long idx, double val, long long* prev, long long nnz, long long* row_len,
               double* values, int* columns) noexcept nogil:
    if idx <= prev[0]:
        p.err_code = ERR_ORDER
        return -1
    if idx > INDEX_MAX or idx >= _upper_bound(p) or (p.base == 1 and idx == 0):
        p.err_code = ERR_RANGE
        return -1
    columns[nnz + row_len[0]] = <int>idx
    values[nnz + row_len[0]] = val
    row_len[0] += 1
    prev[0] = idx
    if idx < p.min_index:
        p.min_index = idx
    if idx > p.max_index:
        p.max_index = idx
    return 0


cdef int _glued(Parser* p, const char* buf, Py_ssize_t t0, Py_ssize_t t1, Py_ssize_t line_end,
                long long* prev, long long nnz, long long* row_len, double* values, int* columns) noexcept nogil:
    """A feature token with missing separators (or a missing index): repair it if it has one reading."""
    cdef Glue g
    cdef Py_ssize_t[MAX_GLUES + 2] colon
    cdef int n_colons = 0, i
    cdef Py_ssize_t q
    cdef long long idx0 = -1, bound, low
    cdef double val
    for q in range(t0, t1):
        if buf[q] == c':':
            if n_colons == MAX_GLUES + 1:
                p.err_code = ERR_AMBIGUOUS
                return -1
            colon[n_colons] = q
            n_colons += 1
    bound = _next_index(buf, t1, line_end, p)
    if bound < 0:
        p.err_code = ERR_AMBIGUOUS
        return -1
    low = prev[0]
    if low < _lower_bound(p):
        low = _lower_bound(p)
    if colon[0] == t0:                              # ':value' -- the index is missing
        # exactly one index must fit between the neighbours; where the file's base is not known
        # yet (user files), index 0 would decide it: not a reading we may choose
        if n_colons != 1 or bound - low != 2 or (p.base < 0 and low + 1 == 0):
            p.err_code = ERR_AMBIGUOUS
            return -1
        if not _number(buf + t0 + 1, t1 - t0 - 1, &val):
            p.err_code = ERR_VALUE
            return -1
        if _repair(p, K_INDEX) < 0:
            return -1
        return _emit(p, low + 1, val, prev, nnz, row_len, values, columns)
    # `i0:<v0><i1>:<v1>...`: the index, the glued middle parts, the last value
    g.n_parts = 0
    g.n_solutions = 0
    if not _index(buf + t0, colon[0] - t0, &idx0):
        p.err_code = ERR_INDEX
        return -1
    if idx0 <= low:
        p.err_code = ERR_ORDER
        return -1
    for i in range(1, n_colons):
        q = colon[i - 1] + 1
        if _cuts(&g, g.n_parts, buf + q, colon[i] - q) == 0:
            p.err_code = ERR_AMBIGUOUS
            return -1
        g.n_parts += 1
    if not _number(buf + colon[n_colons - 1] + 1, t1 - colon[n_colons - 1] - 1, &val):
        p.err_code = ERR_VALUE
        return -1
    _search(&g, 0, idx0, bound)
    if g.n_solutions != 1:
        p.err_code = ERR_AMBIGUOUS
        return -1
    if _repair(p, K_SEPARATOR) < 0:
        return -1
    for i in range(g.n_parts):                      # i0:v0, i1:v1, ..., then the last index:val
        if _emit(p, idx0, g.cut_value[i][g.solution[i]], prev, nnz, row_len, values, columns) < 0:
            return -1
        idx0 = g.cut_index[i][g.solution[i]]
    return _emit(p, idx0, val, prev, nnz, row_len, values, columns)


cdef int _line(Parser* p, const char* buf, Py_ssize_t s, Py_ssize_t e, double* label, long long nnz,
               long long* row_len, double* values, int* columns) noexcept nogil:
    """Parse the tokens of one non-blank line buf[s:e] (comment and edge whitespace removed)."""
    cdef Py_ssize_t t0 = s, t1, q, colon_at
    cdef int n_colons
    cdef long long prev = -1, idx
    cdef double val
    cdef bint first = True
    row_len[0] = 0
    while t0 < e:
        while t0 < e and _space(buf[t0]):
            t0 += 1
        if t0 >= e:
            break
        t1 = t0
        n_colons = 0
        colon_at = -1
        while t1 < e and not _space(buf[t1]):
            if buf[t1] == c':':
                n_colons += 1
                if colon_at < 0:
                    colon_at = t1
            t1 += 1
        p.err_token = t0
        if first:
            first = False
            if n_colons != 0 or not _number(buf + t0, t1 - t0, label):
                p.err_code = ERR_LABEL          # e.g. '1:0.5 2:...' with no label at all
                return -1
            # scikit-learn skips a `qid:<n>` token right after the label
            q = t1
            while q < e and _space(buf[q]):
                q += 1
            if e - q >= 4 and buf[q] == c'q' and buf[q + 1] == c'i' and buf[q + 2] == c'd' and buf[q + 3] == c':':
                while q < e and not _space(buf[q]):
                    q += 1
                t1 = q
        elif n_colons == 1 and colon_at > t0:
            if not _index(buf + t0, colon_at - t0, &idx):
                p.err_code = ERR_INDEX
                return -1
            if not _number(buf + colon_at + 1, t1 - colon_at - 1, &val):
                p.err_code = ERR_VALUE
                return -1
            if _emit(p, idx, val, &prev, nnz, row_len, values, columns) < 0:
                return -1
        elif n_colons == 0:
            p.err_code = ERR_TOKEN
            return -1
        elif _glued(p, buf, t0, t1, e, &prev, nnz, row_len, values, columns) < 0:
            return -1
        t0 = t1
    return 0


# ---- public API ------------------------------------------------------------------------------

def count_block(const unsigned char[::1] buf):
    """(newlines, colons) of a block: upper bounds for its rows and entries."""
    cdef Py_ssize_t i, n = buf.shape[0]
    cdef long long lines = 0, colons = 0
    with nogil:
        for i in range(n):
            if buf[i] == c'\n':
                lines += 1
            elif buf[i] == c':':
                colons += 1
    return lines, colons


def parse_block(const unsigned char[::1] buf, bint final, long long n_features, int base, bint strict,
                long long line_offset, double[::1] labels, double[::1] values, int[::1] columns,
                int[::1] row_nnz, long long[::1] repairs, long long[::1] first_line):
    """Parse the complete lines of `buf` (all of it when `final`: the last line may lack '\\n').

    n_features: -1 when unknown; base: 1 one-based, 0 zero-based, -1 either (raw indices are
    stored; parse.py shifts them). labels / row_nnz need one slot per line, values / columns one
    per ':' (count_block). repairs / first_line (one slot per REPAIR_KINDS) accumulate across blocks
    (first_line -1 = none yet; absolute 0-based line numbers).

    Returns a dict: status, rows, nnz, consumed (bytes of complete lines parsed), lines,
    min_index, max_index, and on error: line (0-based, absolute), token (byte offset in buf), kind.
    """
    cdef Parser p
    cdef Py_ssize_t n = buf.shape[0], pos = 0, end, s, e, next_pos, k
    cdef const unsigned char* base_ptr = &buf[0] if n > 0 else NULL
    cdef const char* b = <const char*> base_ptr
    cdef const void* hit
    cdef long long rows = 0, nnz = 0, row_len = 0
    cdef bint has_newline, comment, crlf
    cdef double label = 0.0
    p.n_features = n_features
    p.base = base
    p.strict = strict
    p.line = 0
    p.line_offset = line_offset
    p.err_code = OK
    p.err_kind = -1
    p.err_token = -1
    p.min_index = NO_BOUND
    p.max_index = -1
    for k in range(N_KINDS):
        p.repairs[k] = 0
        p.first_line[k] = first_line[k]
    with nogil:
        while pos < n:
            hit = memchr(b + pos, c'\n', n - pos)
            if hit == NULL:
                if not final:
                    break
                end = n
                has_newline = False
                next_pos = n
            else:
                end = <const char*> hit - b
                has_newline = True
                next_pos = end + 1
            for k in range(N_KINDS):
                p.seen[k] = False
            e = end
            crlf = e > pos and b[e - 1] == c'\r'
            if crlf:
                e -= 1
            hit = memchr(b + pos, c'#', e - pos)
            comment = hit != NULL
            if comment:
                e = <const char*> hit - b
            s = pos
            while s < e and _space(b[s]):
                s += 1
            if s == e:                          # blank, or a comment line (legal svmlight)
                if not comment and _repair(&p, K_BLANK) < 0:
                    break
                p.line += 1
                pos = next_pos
                continue
            if crlf and _repair(&p, K_CRLF) < 0:
                break
            while e > s and _space(b[e - 1]):
                e -= 1
            if not has_newline and _repair(&p, K_FINAL) < 0:
                break
            if _line(&p, b, s, e, &label, nnz, &row_len, &values[0], &columns[0]) < 0:
                break
            labels[rows] = label
            row_nnz[rows] = <int>row_len
            nnz += row_len
            rows += 1
            p.line += 1
            pos = next_pos
    for k in range(N_KINDS):
        repairs[k] += p.repairs[k]
        first_line[k] = p.first_line[k]
    out = {"status": p.err_code, "rows": rows, "nnz": nnz, "consumed": pos, "lines": p.line,
           "min_index": p.min_index if p.max_index >= 0 else -1, "max_index": p.max_index}
    if p.err_code != OK:
        out.update(line=line_offset + p.line, token=p.err_token, kind=p.err_kind, start=pos)
    return out


def scatter_dense(const int[::1] row_nnz, const int[::1] columns, const double[::1] values,
                  long long shift, floating[:, ::1] out):
    """out[r, columns[j] - shift] = values[j] for the entries of each row (out pre-zeroed)."""
    cdef Py_ssize_t r, j = 0, k
    with nogil:
        for r in range(out.shape[0]):
            for k in range(row_nnz[r]):
                out[r, columns[j] - shift] = <floating>values[j]
                j += 1


def format_rows(const double[:, ::1] X, const double[::1] y, bytes label_format, bytes value_format,
                bint indexed, bytes separator):
    """Text lines for rows of X: `<label><sep><i>:<v><sep>...` (indexed, 1-based) or
    `<label><sep><v><sep>...`, with printf formats (e.g. b"%.0f", b"%.18e"). The writer of
    synthetic replicas in the published files' formats."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, j, used = 0
    cdef Py_ssize_t capacity = n * (d * 40 + 48) + 1
    cdef bytearray text = bytearray(capacity)
    cdef char* out = text
    cdef const char* lf = label_format
    cdef const char* vf = value_format
    cdef char sep = separator[0]
    with nogil:
        for i in range(n):
            used += min(snprintf(out + used, 40, lf, y[i]), 39)
            for j in range(d):
                out[used] = sep
                used += 1
                if indexed:
                    used += min(snprintf(out + used, 16, b"%d:", <int>(j + 1)), 15)
                used += min(snprintf(out + used, 36, vf, X[i, j]), 35)
            out[used] = c'\n'
            used += 1
    return bytes(text[:used])
