/* Optional native reader for plain uiautomator dumps (android_gym.xml.tree uses it when it was built).

read_dump(xml: str, fields: tuple[str, ...]) reads a document made of an optional XML declaration, one
<hierarchy ...> element and nested <node .../> or <node ...>...</node> elements with nothing but
whitespace between tags. It returns None for anything else (comments, other tags, text, a carriage
return, a character XML forbids, an entity XML does not predefine, junk around the document ...): the
Python readers then take the dump, and expat reports errors. What it accepts expat accepts too, and it
builds the same tree (tests compare the readers on real, generated and damaged dumps).

Result: (hierarchy_attrs, keys, raw, rows, parents, roots, kids, ends, bounds, undecided) where keys is
the attribute-name tuple shared by every node and raw all values in one flat tuple (len(keys) per node),
or keys is None and raw holds per node [name, value, ..., ""] (the expat reader's layout); rows hold per
node the values of `fields` ("" when absent); bounds hold per node (x1, y1, x2, y2), None, or the raw
string when it is not plain ASCII (undecided counts those; Python reads them).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    Py_ssize_t n;         /* number of attributes */
    const char **names;   /* into the source buffer */
    Py_ssize_t *lens;
    PyObject *name_objs;  /* tuple of str */
    Py_ssize_t *field_pos; /* per field: attribute position or -1 */
} Layout;

/* A value already made in this call (borrowed: the node values keep it alive until the call ends). */
struct Slot {
    const char *p;
    Py_ssize_t n;
    PyObject *obj;
};
#define CACHE_SLOTS 1024
#define CACHE_MAX_LEN 64

typedef struct {
    const char *s;
    Py_ssize_t len;
    Py_ssize_t i;
    char *buf;            /* scratch for values with references */
    Py_ssize_t buf_cap;
    PyObject *empty, *s_true, *s_false;
    struct Slot *cache;   /* recent short values: class, package and resource ids repeat on every screen */
} Reader;

/* Attribute list of the element being read. */
typedef struct {
    Py_ssize_t n, cap;
    const char **names;
    Py_ssize_t *lens;
    PyObject **values;
} Attrs;

#define NOT_SIMPLE 1   /* not a plain dump: return None */
#define FAILED 2       /* a Python error is set */

/* Bytes that need a look inside an attribute value: C0 controls, '&', '<', 0xEF (U+FFFE/U+FFFF), quotes. */
static unsigned char SCAN[256];

static void init_scan(void) {
    for (int b = 0; b < 0x20; b++) SCAN[b] = 1;
    SCAN['&'] = SCAN['<'] = SCAN[0xEF] = SCAN['"'] = SCAN['\''] = 1;
}

/* Short names compare faster in a loop than through a memcmp call. */
static inline int same_bytes(const char *x, const char *y, Py_ssize_t n) {
    for (Py_ssize_t j = 0; j < n; j++)
        if (x[j] != y[j]) return 0;
    return 1;
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n'; }

/* What Python's re reads as \s among ASCII characters. */
static int is_re_space(char c) { return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f); }

static int is_name_start(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':';
}

static int is_name_char(unsigned char c) {
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static void skip_ws(Reader *r) {
    while (r->i < r->len && is_ws(r->s[r->i])) r->i++;
}

static int starts(Reader *r, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(r->len - r->i) >= n && memcmp(r->s + r->i, lit, n) == 0;
}

static int attrs_push(Attrs *a, const char *name, Py_ssize_t len, PyObject *value) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? a->cap * 2 : 32;
        const char **names = PyMem_Realloc(a->names, cap * sizeof(*names));
        if (!names) { PyErr_NoMemory(); return FAILED; }
        a->names = names;
        Py_ssize_t *lens = PyMem_Realloc(a->lens, cap * sizeof(*lens));
        if (!lens) { PyErr_NoMemory(); return FAILED; }
        a->lens = lens;
        PyObject **values = PyMem_Realloc(a->values, cap * sizeof(*values));
        if (!values) { PyErr_NoMemory(); return FAILED; }
        a->values = values;
        a->cap = cap;
    }
    a->names[a->n] = name;
    a->lens[a->n] = len;
    a->values[a->n] = value;
    a->n++;
    return 0;
}

static void attrs_clear(Attrs *a) {
    for (Py_ssize_t j = 0; j < a->n; j++) Py_XDECREF(a->values[j]);
    a->n = 0;
}

static int put_utf8(char *out, unsigned long c) {
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) { out[0] = (char)(0xC0 | (c >> 6)); out[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12)); out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F)); return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18)); out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F)); out[3] = (char)(0x80 | (c & 0x3F)); return 4;
}

static int xml_char(unsigned long c) {
    return c == 9 || c == 10 || c == 13 || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD)
        || (c >= 0x10000 && c <= 0x10FFFF);
}

/* Decode the value s[start:end] (references expanded, tab and newline read as spaces, as expat does). */
static PyObject *make_value(Reader *r, Py_ssize_t start, Py_ssize_t end, int special) {
    Py_ssize_t n = end - start;
    const char *p = r->s + start;
    if (n == 0) { Py_INCREF(r->empty); return r->empty; }
    if (!special) {
        if (n == 5 && memcmp(p, "false", 5) == 0) { Py_INCREF(r->s_false); return r->s_false; }
        if (n == 4 && memcmp(p, "true", 4) == 0) { Py_INCREF(r->s_true); return r->s_true; }
        if (n > CACHE_MAX_LEN) return PyUnicode_DecodeUTF8(p, n, NULL);
        uint32_t h = 2166136261u;  /* FNV-1a */
        for (Py_ssize_t j = 0; j < n; j++) h = (h ^ (unsigned char)p[j]) * 16777619u;
        struct Slot *slot = &r->cache[h & (CACHE_SLOTS - 1)];
        if (slot->obj && slot->n == n && memcmp(slot->p, p, n) == 0) { Py_INCREF(slot->obj); return slot->obj; }
        PyObject *v = PyUnicode_DecodeUTF8(p, n, NULL);
        if (v) { slot->p = p; slot->n = n; slot->obj = v; }
        return v;
    }
    if (r->buf_cap < n) {
        char *buf = PyMem_Realloc(r->buf, n);
        if (!buf) { PyErr_NoMemory(); return NULL; }
        r->buf = buf;
        r->buf_cap = n;
    }
    Py_ssize_t o = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        char c = p[j];
        if (c == '\t' || c == '\n') { r->buf[o++] = ' '; continue; }
        if (c != '&') { r->buf[o++] = c; continue; }
        const char *semi = memchr(p + j, ';', n - j);
        if (!semi) return Py_None;  /* marker: not simple (no reference held) */
        Py_ssize_t rl = semi - (p + j) - 1;  /* between '&' and ';' */
        const char *q = p + j + 1;
        unsigned long code = 0;
        if (rl == 3 && memcmp(q, "amp", 3) == 0) code = '&';
        else if (rl == 2 && memcmp(q, "lt", 2) == 0) code = '<';
        else if (rl == 2 && memcmp(q, "gt", 2) == 0) code = '>';
        else if (rl == 4 && memcmp(q, "quot", 4) == 0) code = '"';
        else if (rl == 4 && memcmp(q, "apos", 4) == 0) code = '\'';
        if (code == 0) {
            if (rl >= 3 && rl <= 8 && q[0] == '#' && q[1] == 'x') {
                for (Py_ssize_t k = 2; k < rl; k++) {
                    char d = q[k];
                    int v = (d >= '0' && d <= '9') ? d - '0' : (d >= 'a' && d <= 'f') ? d - 'a' + 10
                          : (d >= 'A' && d <= 'F') ? d - 'A' + 10 : -1;
                    if (v < 0) return Py_None;
                    code = code * 16 + (unsigned long)v;
                }
            } else if (rl >= 2 && rl <= 8 && q[0] == '#') {
                for (Py_ssize_t k = 1; k < rl; k++) {
                    char d = q[k];
                    if (d < '0' || d > '9') return Py_None;
                    code = code * 10 + (unsigned long)(d - '0');
                }
            } else {
                return Py_None;
            }
            if (!xml_char(code)) return Py_None;
        }
        /* A reference never yields more bytes than it was written with (&#x10FFFF; is 4 bytes). */
        o += put_utf8(r->buf + o, code);
        j += rl + 1;
    }
    return PyUnicode_DecodeUTF8(r->buf, o, NULL);
}

/* Read the attributes of a start tag up to its '>' or '/>'; sets *closed for '/>'. ``hint`` (the
   previous node's layout, or NULL) is tried first for each name; *follows says whether the tag listed
   exactly the hint's names in its order. */
static int read_attrs(Reader *r, Attrs *a, int *closed, const Layout *hint, int *follows) {
    int hinted = hint != NULL;
    for (;;) {
        Py_ssize_t before = r->i;
        skip_ws(r);
        if (r->i >= r->len) return NOT_SIMPLE;
        char c = r->s[r->i];
        if (c == '>' || c == '/') {
            if (c == '/') {
                if (r->i + 1 >= r->len || r->s[r->i + 1] != '>') return NOT_SIMPLE;
                r->i++;
            }
            r->i++;
            *closed = c == '/';
            *follows = hinted && a->n == hint->n;
            return 0;
        }
        if (r->i == before || !is_name_start((unsigned char)c)) return NOT_SIMPLE;
        Py_ssize_t ns = r->i, nl;
        if (hinted && a->n < hint->n && r->len - r->i > hint->lens[a->n]
            && r->s[r->i + hint->lens[a->n]] == '=' && same_bytes(r->s + r->i, hint->names[a->n], hint->lens[a->n])) {
            nl = hint->lens[a->n];  /* the name the previous node had here */
            r->i += nl + 1;
        } else {
            hinted = 0;
            while (r->i < r->len && is_name_char((unsigned char)r->s[r->i])) r->i++;
            nl = r->i - ns;
            skip_ws(r);
            if (r->i >= r->len || r->s[r->i] != '=') return NOT_SIMPLE;
            r->i++;
        }
        skip_ws(r);
        if (r->i >= r->len) return NOT_SIMPLE;
        char quote = r->s[r->i];
        if (quote != '"' && quote != '\'') return NOT_SIMPLE;
        Py_ssize_t vs = ++r->i;
        /* One pass to the closing quote (SCAN marks both quotes) that also spots bytes needing a look. */
        const unsigned char *b = (const unsigned char *)r->s + vs, *stop = (const unsigned char *)r->s + r->len;
        int special = 0;
        for (;; b++) {
            if (b >= stop) return NOT_SIMPLE;
            if (!SCAN[*b]) continue;
            if (*b == (unsigned char)quote) break;
            if (*b == '\t' || *b == '\n' || *b == '&' || *b == '"' || *b == '\'') {
                special |= *b != '"' && *b != '\'';
            } else if (*b == 0xEF) {  /* U+FFFE and U+FFFF are not XML characters */
                if (b + 2 < stop && b[1] == 0xBF && (b[2] == 0xBE || b[2] == 0xBF)) return NOT_SIMPLE;
            } else {
                return NOT_SIMPLE;  /* '<', a carriage return or a C0 control: leave it to expat */
            }
        }
        r->i = (const char *)b - r->s;
        Py_ssize_t ve = r->i++;
        PyObject *v = make_value(r, vs, ve, special);
        if (v == NULL) return FAILED;
        if (v == Py_None) return NOT_SIMPLE;
        if (attrs_push(a, r->s + ns, nl, v)) { Py_DECREF(v); return FAILED; }
        if (r->i < r->len && !is_ws(r->s[r->i]) && r->s[r->i] != '>' && r->s[r->i] != '/') return NOT_SIMPLE;
    }
}

static int same_names(const Layout *l, const Attrs *a) {
    if (l->n != a->n) return 0;
    for (Py_ssize_t j = 0; j < a->n; j++)
        if (l->lens[j] != a->lens[j] || memcmp(l->names[j], a->names[j], a->lens[j]) != 0) return 0;
    return 1;
}

static void free_layout(Layout *l) {
    PyMem_Free(l->names);
    PyMem_Free(l->lens);
    PyMem_Free(l->field_pos);
    Py_XDECREF(l->name_objs);
}

static int has_duplicates(const Attrs *a) {
    for (Py_ssize_t j = 1; j < a->n; j++)
        for (Py_ssize_t k = 0; k < j; k++)
            if (a->lens[j] == a->lens[k] && memcmp(a->names[j], a->names[k], a->lens[j]) == 0) return 1;
    return 0;
}

static int new_layout(Layout *l, const Attrs *a, PyObject *fields) {
    Py_ssize_t nf = PyTuple_GET_SIZE(fields);
    memset(l, 0, sizeof(*l));
    l->n = a->n;
    l->names = PyMem_Malloc((a->n + 1) * sizeof(*l->names));
    l->lens = PyMem_Malloc((a->n + 1) * sizeof(*l->lens));
    l->field_pos = PyMem_Malloc((nf + 1) * sizeof(*l->field_pos));
    l->name_objs = PyTuple_New(a->n);
    if (!l->names || !l->lens || !l->field_pos || !l->name_objs) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return FAILED;
    }
    for (Py_ssize_t j = 0; j < a->n; j++) {
        l->names[j] = a->names[j];
        l->lens[j] = a->lens[j];
        PyObject *name = PyUnicode_DecodeASCII(a->names[j], a->lens[j], NULL);
        if (!name) return FAILED;
        PyUnicode_InternInPlace(&name);
        PyTuple_SET_ITEM(l->name_objs, j, name);
    }
    for (Py_ssize_t f = 0; f < nf; f++) {
        Py_ssize_t fl;
        const char *fs = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(fields, f), &fl);
        if (!fs) return FAILED;
        l->field_pos[f] = -1;
        for (Py_ssize_t j = 0; j < a->n; j++)
            if (a->lens[j] == fl && memcmp(a->names[j], fs, fl) == 0) { l->field_pos[f] = j; break; }
    }
    return 0;
}

/* Coordinates and node indices repeat on every screen: ints below INT_CACHE are made once and kept. */
#define INT_CACHE 8192
static PyObject *INTS[INT_CACHE];

static PyObject *small_int(long v) {
    if (v < 0 || v >= INT_CACHE) return PyLong_FromLong(v);
    if (INTS[v] == NULL) {
        INTS[v] = PyLong_FromLong(v);
        if (INTS[v] == NULL) return NULL;
    }
    Py_INCREF(INTS[v]);
    return INTS[v];
}

/* parse_bounds for a plain ASCII value: the first "[x1,y1][x2,y2]" (spaces allowed around the parts). */
static PyObject *read_bounds(PyObject *value, Py_ssize_t *undecided) {
    if (PyUnicode_GET_LENGTH(value) == 0) Py_RETURN_NONE;
    if (!PyUnicode_IS_ASCII(value)) { (*undecided)++; Py_INCREF(value); return value; }
    const char *s = (const char *)PyUnicode_DATA(value);
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    for (Py_ssize_t start = 0; start < n; start++) {
        if (s[start] != '[') continue;
        long v[4];
        Py_ssize_t i = start;
        int ok = 1;
        for (int k = 0; k < 4 && ok; k++) {
            if (k == 2) {  /* "]" then spaces then "[" between the two points */
                while (i < n && is_re_space(s[i])) i++;
                if (i >= n || s[i] != '[') { ok = 0; break; }
                i++;
            } else if (k == 0) {
                i++;  /* the '[' */
            }
            while (i < n && is_re_space(s[i])) i++;
            int neg = 0;
            if (i < n && s[i] == '-') { neg = 1; i++; }
            Py_ssize_t ds = i;
            long x = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                if (i - ds >= 9) { (*undecided)++; Py_INCREF(value); return value; }
                x = x * 10 + (s[i] - '0');
                i++;
            }
            if (i == ds) { ok = 0; break; }
            v[k] = neg ? -x : x;
            while (i < n && is_re_space(s[i])) i++;
            char want = (k % 2 == 0) ? ',' : ']';
            if (i >= n || s[i] != want) { ok = 0; break; }
            i++;
        }
        if (ok) {
            PyObject *t = PyTuple_New(4);
            if (!t) return NULL;
            for (int k = 0; k < 4; k++) {
                PyObject *x = small_int(v[k]);
                if (!x) { Py_DECREF(t); return NULL; }
                PyTuple_SET_ITEM(t, k, x);
            }
            PyObject_GC_UnTrack(t);  /* ints only */
            return t;
        }
    }
    Py_RETURN_NONE;
}

/* Grow a C array of n_items elements of size `size` to hold at least one more; 0 on success. */
static int grow(void **arr, Py_ssize_t *cap, Py_ssize_t n_items, size_t size, Py_ssize_t first) {
    if (n_items < *cap) return 0;
    Py_ssize_t c = *cap ? *cap * 2 : first;
    void *p = PyMem_Realloc(*arr, (size_t)c * size);
    if (!p) { PyErr_NoMemory(); return FAILED; }
    *arr = p;
    *cap = c;
    return 0;
}

static PyObject *read_dump(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *xml, *fields;
    if (!PyArg_ParseTuple(args, "UO!:read_dump", &xml, &PyTuple_Type, &fields)) return NULL;
    Py_ssize_t nf = PyTuple_GET_SIZE(fields);
    Py_ssize_t bounds_field = -1;
    for (Py_ssize_t f = 0; f < nf; f++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(fields, f))) {
            PyErr_SetString(PyExc_TypeError, "read_dump: fields must be strings");
            return NULL;
        }
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(fields, f), "bounds") == 0) bounds_field = f;
    }
    Reader r;
    memset(&r, 0, sizeof(r));
    /* An ASCII str is its own UTF-8. Other text is encoded into a temporary copy: asking the str for its
       UTF-8 would keep that copy attached to it for as long as the caller keeps the dump. */
    PyObject *utf8 = NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(xml) < 0) return NULL;
#endif
    if (PyUnicode_IS_ASCII(xml)) {
        r.s = (const char *)PyUnicode_DATA(xml);
        r.len = PyUnicode_GET_LENGTH(xml);
    } else {
        utf8 = PyUnicode_AsUTF8String(xml);
        if (utf8 == NULL) { PyErr_Clear(); Py_RETURN_NONE; }  /* lone surrogates: expat's path reports them */
        r.s = PyBytes_AS_STRING(utf8);
        r.len = PyBytes_GET_SIZE(utf8);
    }

    PyObject *result = NULL, *hier = NULL, *parents = NULL, *kids = NULL, *ends = NULL;
    PyObject *rows = NULL, *raw = NULL, *keys = NULL, *bounds = NULL, *roots = NULL;
    Attrs a = {0};
    Layout *layouts = NULL;
    Py_ssize_t n_layouts = 0, cap_layouts = 0, last_layout = 0;
    Py_ssize_t *node_layout = NULL, *node_offset = NULL, *node_parent = NULL, *node_end = NULL, *stack = NULL;
    Py_ssize_t n_nodes = 0, cap_layout = 0, cap_offset = 0, cap_parent = 0, cap_end = 0, depth = 0, cap_stack = 0;
    PyObject **vals = NULL, **ints = NULL;
    Py_ssize_t n_vals = 0, cap_vals = 0, n_ints = 0;
    int status = 0;

    /* Thousands of new lists and tuples would run the cycle collector several times over objects that
       cannot form cycles; it stays off for this call only (no Python code runs meanwhile). */
    int gc_was_enabled = PyGC_Disable();
    r.empty = PyUnicode_FromStringAndSize("", 0);
    r.s_true = PyUnicode_InternFromString("true");
    r.s_false = PyUnicode_InternFromString("false");
    r.cache = PyMem_Calloc(CACHE_SLOTS, sizeof(*r.cache));
    hier = PyDict_New();
    if (!r.empty || !r.s_true || !r.s_false || !hier) goto fail;
    if (!r.cache) { PyErr_NoMemory(); goto fail; }

    /* Prolog: whitespace, an optional declaration, whitespace, then <hierarchy ...>. */
    skip_ws(&r);
    if (starts(&r, "<?xml")) {
        Py_ssize_t j = r.i + 5;
        while (j < r.len && r.s[j] != '>') j++;
        if (j >= r.len || r.s[j - 1] != '?') goto not_simple;
        r.i = j + 1;
        skip_ws(&r);
    }
    if (!starts(&r, "<hierarchy")) goto not_simple;
    r.i += 10;
    if (r.i >= r.len || !(is_ws(r.s[r.i]) || r.s[r.i] == '>')) goto not_simple;
    {
        int closed = 0, follows = 0;
        status = read_attrs(&r, &a, &closed, NULL, &follows);
        if (status) goto done_status;
        if (closed) goto not_simple;
        for (Py_ssize_t j = 0; j < a.n; j++) {
            PyObject *name = PyUnicode_DecodeASCII(a.names[j], a.lens[j], NULL);
            if (!name || PyDict_SetItem(hier, name, a.values[j]) < 0) { Py_XDECREF(name); goto fail; }
            Py_DECREF(name);
        }
        if (PyDict_GET_SIZE(hier) != a.n) goto not_simple;  /* a repeated attribute */
        attrs_clear(&a);
    }

    /* Body: <node> tags and whitespace up to </hierarchy>. */
    for (;;) {
        skip_ws(&r);
        if (r.i >= r.len) goto not_simple;
        if (starts(&r, "</")) {
            Py_ssize_t j = r.i + 2;
            int is_node = 0;
            if (r.len - j >= 4 && memcmp(r.s + j, "node", 4) == 0) { is_node = 1; j += 4; }
            else if (r.len - j >= 9 && memcmp(r.s + j, "hierarchy", 9) == 0) { j += 9; }
            else goto not_simple;
            while (j < r.len && is_ws(r.s[j])) j++;
            if (j >= r.len || r.s[j] != '>') goto not_simple;
            r.i = j + 1;
            if (is_node) {
                if (depth == 0) goto not_simple;
                node_end[stack[--depth]] = n_nodes;  /* the subtree ends after the last node read */
                continue;
            }
            if (depth != 0 || n_nodes == 0) goto not_simple;
            skip_ws(&r);
            if (r.i != r.len) goto not_simple;
            break;
        }
        if (!starts(&r, "<node")) goto not_simple;
        r.i += 5;
        if (r.i >= r.len || !(is_ws(r.s[r.i]) || r.s[r.i] == '>' || r.s[r.i] == '/')) goto not_simple;
        int closed = 0, follows = 0;
        status = read_attrs(&r, &a, &closed, n_layouts ? &layouts[last_layout] : NULL, &follows);
        if (status) goto done_status;
        /* Which layout: most dumps use one for every node. */
        Py_ssize_t lay = follows ? last_layout : -1;
        for (Py_ssize_t l = 0; lay < 0 && l < n_layouts; l++)
            if (same_names(&layouts[l], &a)) lay = l;
        if (lay < 0) {
            if (has_duplicates(&a)) goto not_simple;  /* a node that repeats an attribute: expat refuses it */
            if (grow((void **)&layouts, &cap_layouts, n_layouts, sizeof(*layouts), 4)) goto fail;
            if (new_layout(&layouts[n_layouts], &a, fields)) { n_layouts++; goto fail; }
            lay = n_layouts++;
        }
        if (grow((void **)&node_layout, &cap_layout, n_nodes, sizeof(Py_ssize_t), 256)
            || grow((void **)&node_offset, &cap_offset, n_nodes, sizeof(Py_ssize_t), 256)
            || grow((void **)&node_parent, &cap_parent, n_nodes, sizeof(Py_ssize_t), 256)
            || grow((void **)&node_end, &cap_end, n_nodes, sizeof(Py_ssize_t), 256))
            goto fail;
        node_layout[n_nodes] = last_layout = lay;
        node_offset[n_nodes] = n_vals;
        node_parent[n_nodes] = depth ? stack[depth - 1] : -1;
        node_end[n_nodes] = n_nodes + 1;  /* a node closed at once; an open one gets its end at its closing tag */
        for (Py_ssize_t j = 0; j < a.n; j++) {
            if (grow((void **)&vals, &cap_vals, n_vals, sizeof(PyObject *), 4096)) goto fail;
            vals[n_vals++] = a.values[j];  /* the reference moves from a to vals */
        }
        a.n = 0;
        if (!closed) {
            if (grow((void **)&stack, &cap_stack, depth, sizeof(Py_ssize_t), 64)) goto fail;
            stack[depth++] = n_nodes;
        }
        n_nodes++;
    }

    /* Shared int objects for node indices 0..n (parents, child lists and ends all hold them). */
    ints = PyMem_Malloc((size_t)(n_nodes + 2) * sizeof(PyObject *));
    if (!ints) { PyErr_NoMemory(); goto fail; }
    for (; n_ints <= n_nodes + 1; n_ints++) {
        ints[n_ints] = small_int(n_ints - 1);  /* ints[k] is k - 1: ints[0] is -1 */
        if (!ints[n_ints]) goto fail;
    }
    parents = PyList_New(n_nodes);
    ends = PyList_New(n_nodes);
    kids = PyList_New(n_nodes);
    rows = PyList_New(n_nodes);
    bounds = PyList_New(n_nodes);
    if (!parents || !ends || !kids || !rows || !bounds) goto fail;
    {
        /* Child lists sized exactly: count, then fill in document order. */
        Py_ssize_t *count = PyMem_Calloc((size_t)n_nodes + 1, sizeof(Py_ssize_t));
        if (!count) { PyErr_NoMemory(); goto fail; }
        for (Py_ssize_t i = 0; i < n_nodes; i++) count[node_parent[i] + 1]++;  /* count[0]: the roots */
        roots = PyList_New(count[0]);
        int ok = roots != NULL;
        for (Py_ssize_t i = 0; ok && i < n_nodes; i++) {
            PyObject *lst = PyList_New(count[i + 1]);
            if (!lst) { ok = 0; break; }
            PyList_SET_ITEM(kids, i, lst);
        }
        if (ok) {
            memset(count, 0, ((size_t)n_nodes + 1) * sizeof(Py_ssize_t));
            for (Py_ssize_t i = 0; i < n_nodes; i++) {
                Py_ssize_t p = node_parent[i];
                PyObject *lst = p < 0 ? roots : PyList_GET_ITEM(kids, p);
                Py_INCREF(ints[i + 1]);
                PyList_SET_ITEM(lst, count[p + 1]++, ints[i + 1]);
                Py_INCREF(ints[p + 1]);
                PyList_SET_ITEM(parents, i, ints[p + 1]);
                Py_INCREF(ints[node_end[i] + 1]);
                PyList_SET_ITEM(ends, i, ints[node_end[i] + 1]);
            }
        }
        PyMem_Free(count);
        if (!ok) goto fail;
    }
    /* Rows (the wanted fields of each node) and bounds. */
    Py_ssize_t undecided = 0;
    for (Py_ssize_t i = 0; i < n_nodes; i++) {
        Layout *l = &layouts[node_layout[i]];
        PyObject *row = PyTuple_New(nf);
        if (!row) goto fail;
        for (Py_ssize_t f = 0; f < nf; f++) {
            Py_ssize_t pos = l->field_pos[f];
            PyObject *v = pos >= 0 ? vals[node_offset[i] + pos] : r.empty;
            Py_INCREF(v);
            PyTuple_SET_ITEM(row, f, v);
        }
        PyObject_GC_UnTrack(row);  /* strings only: never part of a cycle (CPython untracks such tuples too) */
        PyList_SET_ITEM(rows, i, row);
        PyObject *b = bounds_field >= 0 ? read_bounds(PyTuple_GET_ITEM(row, bounds_field), &undecided) : Py_None;
        if (!b) goto fail;
        if (b == Py_None) Py_INCREF(b);
        PyList_SET_ITEM(bounds, i, b);
    }
    if (n_layouts == 1) {
        keys = layouts[0].name_objs;
        Py_INCREF(keys);
        /* A tuple of strings, which the cycle collector need not walk (a list of thousands it would). */
        raw = PyTuple_New(n_vals);
        if (!raw) goto fail;
        for (Py_ssize_t j = 0; j < n_vals; j++) PyTuple_SET_ITEM(raw, j, vals[j]);
        n_vals = 0;  /* the tuple owns them now */
        PyObject_GC_UnTrack(raw);
    } else {
        keys = Py_None;
        Py_INCREF(keys);
        raw = PyList_New(n_nodes);
        if (!raw) goto fail;
        for (Py_ssize_t i = 0; i < n_nodes; i++) {
            Layout *l = &layouts[node_layout[i]];
            PyObject *lst = PyList_New(2 * l->n + 1);
            if (!lst) goto fail;
            for (Py_ssize_t j = 0; j < l->n; j++) {
                PyObject *name = PyTuple_GET_ITEM(l->name_objs, j);
                PyObject *v = vals[node_offset[i] + j];
                Py_INCREF(name);
                Py_INCREF(v);
                PyList_SET_ITEM(lst, 2 * j, name);
                PyList_SET_ITEM(lst, 2 * j + 1, v);
            }
            Py_INCREF(r.empty);
            PyList_SET_ITEM(lst, 2 * l->n, r.empty);
            PyList_SET_ITEM(raw, i, lst);
        }
    }
    result = Py_BuildValue("(OOOOOOOOOn)", hier, keys, raw, rows, parents, roots, kids, ends, bounds, undecided);
    goto cleanup;

not_simple:
    status = NOT_SIMPLE;
done_status:
    if (status == NOT_SIMPLE) { result = Py_None; Py_INCREF(result); goto cleanup; }
fail:
    result = NULL;
cleanup:
    attrs_clear(&a);
    Py_XDECREF(utf8);
    PyMem_Free(a.names);
    PyMem_Free(a.lens);
    PyMem_Free(a.values);
    for (Py_ssize_t l = 0; l < n_layouts; l++) free_layout(&layouts[l]);
    PyMem_Free(layouts);
    PyMem_Free(node_layout);
    PyMem_Free(node_offset);
    PyMem_Free(node_parent);
    PyMem_Free(node_end);
    PyMem_Free(stack);
    for (Py_ssize_t j = 0; j < n_vals; j++) Py_DECREF(vals[j]);
    PyMem_Free(vals);
    for (Py_ssize_t j = 0; j < n_ints; j++) Py_DECREF(ints[j]);
    PyMem_Free(ints);
    PyMem_Free(r.buf);
    PyMem_Free(r.cache);
    Py_XDECREF(r.empty);
    Py_XDECREF(r.s_true);
    Py_XDECREF(r.s_false);
    Py_XDECREF(hier);
    Py_XDECREF(parents);
    Py_XDECREF(kids);
    Py_XDECREF(ends);
    Py_XDECREF(rows);
    Py_XDECREF(raw);
    Py_XDECREF(keys);
    Py_XDECREF(bounds);
    Py_XDECREF(roots);
    if (gc_was_enabled) PyGC_Enable();
    return result;
}

static PyMethodDef methods[] = {
    {"read_dump", read_dump, METH_VARARGS,
     "read_dump(xml, fields) -> tuple | None\n\nRead a plain uiautomator dump (see android_gym.xml.tree); None when it is not one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "android_gym.xml._speedups",
    .m_doc = "Optional native reader for plain uiautomator dumps; android_gym.xml.tree falls back to Python without it.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    init_scan();
    return PyModule_Create(&module);
}
