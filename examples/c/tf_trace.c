/* TensorFlow through ge.h: import a frozen GraphDef and a SavedModel with
 * ge-atc's options (as `ge-atc --framework=3`), compile, run once traced
 * (as `ge-run --trace`) and check the outputs and the trace.
 * Usage: tf_trace frozen.pb input.npy expected.npy saved_model_dir expected.npy trace.json
 * (the SavedModel's input is the int32 ids [[4, 0], [2, 2]] of testdata's
 * ResourceGather case, written here: npy.h reads float32 only). */
#include "npy.h"

#include <ge/ge.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        ge_status s_ = (call);                                                         \
        if (s_ != GE_OK) {                                                             \
            fprintf(stderr, "%s failed: %s: %s\n", #call, ge_status_message(s_),      \
                    ge_last_error_message());                                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* Import a TensorFlow model with one ge-atc option (`option` = `value`), compile it
 * to .om bytes (ge-atc's defaults, no compile cache), load it and open a session. */
static int import_and_load(const char *path, const char *option, const char *value,
                           ge_model **model, ge_session **sess) {
    ge_compile_options *imp = NULL, *opts = NULL;
    CHECK(ge_compile_options_new(&imp));
    CHECK(ge_compile_options_set(imp, option, value));
    ge_module *m = NULL;
    CHECK(ge_import_tf(path, imp, &m));
    /* The module compiles as an .air file: import options do not apply to it. */
    CHECK(ge_compile_options_new(&opts));
    CHECK(ge_compile_options_set(opts, "op_compiler_cache_mode", "disable"));
    ge_bytes *om = NULL;
    CHECK(ge_compile_module(m, opts, NULL, &om));
    CHECK(ge_model_load_bytes(ge_bytes_data(om), ge_bytes_size(om), 1, model));
    CHECK(ge_session_new(*model, sess));
    ge_bytes_free(om);
    ge_module_free(m);
    ge_compile_options_free(imp);
    ge_compile_options_free(opts);
    return 0;
}

static double max_diff(const ge_tensor_desc *y, const npy_f32 *want) {
    if (y->dtype != GE_DTYPE_F32 || y->size != want->count * sizeof(float)) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < want->count; i++) {
        double d = fabs((double)((const float *)y->data)[i] - want->data[i]);
        if (d > m) m = d;
    }
    return m;
}

/* The frozen small CNN: import, compile, one traced run. */
static int frozen(const char *pb, const char *in_npy, const char *want_npy, const char *json_path) {
    npy_f32 x, want;
    if (npy_read_f32(in_npy, &x) || npy_read_f32(want_npy, &want)) return 1;
    ge_model *model = NULL;
    ge_session *sess = NULL;
    if (import_and_load(pb, "input_shape", "input:1,8,8,3", &model, &sess)) return 1;
    ge_tensor_desc in = {ge_model_input_name(model, 0), GE_DTYPE_F32, x.shape, x.rank,
                         x.data, x.count * sizeof(float)};
    ge_outputs *out = NULL;
    CHECK(ge_session_run_traced(sess, &in, 1, &out));
    ge_tensor_desc y;
    CHECK(ge_outputs_get(out, 0, &y));
    double d = max_diff(&y, &want);
    printf("%s: output %s, max |output - expected| = %g\n", pb, y.name, d);
    int bad = !(d <= 1e-4);

    /* One record per executed task, in start order. */
    size_t n = ge_outputs_trace_count(out);
    double busy = 0;
    for (size_t i = 0; i < n; i++) {
        ge_trace_event e;
        CHECK(ge_outputs_trace_event(out, i, &e));
        bad |= e.end_us < e.start_us || !e.name[0] || !e.engine[0];
        busy += e.end_us - e.start_us;
        if (i < 3) printf("  task %zu (%s on %s, stream %zu): %.1f us\n", e.task, e.name,
                          e.engine, e.stream, e.end_us - e.start_us);
    }
    printf("trace: %zu task records, %.1f us busy\n", n, busy);
    bad |= n == 0;
    ge_bytes *json = NULL;
    CHECK(ge_outputs_trace_json(out, &json));
    bad |= strstr((const char *)ge_bytes_data(json), "\"traceEvents\"") == NULL;
    FILE *f = fopen(json_path, "wb");
    if (!f || fwrite(ge_bytes_data(json), 1, ge_bytes_size(json), f) != ge_bytes_size(json)) {
        fprintf(stderr, "cannot write %s\n", json_path);
        bad = 1;
    }
    if (f) fclose(f);
    ge_bytes_free(json);
    ge_outputs_free(out);
    ge_session_free(sess);
    ge_model_free(model);
    free(x.data);
    free(want.data);
    return bad;
}

/* A SavedModel folder by signature: a gather of a variable's rows. */
static int saved_model(const char *dir, const char *want_npy) {
    npy_f32 want;
    if (npy_read_f32(want_npy, &want)) return 1;
    ge_model *model = NULL;
    ge_session *sess = NULL;
    if (import_and_load(dir, "signature", "serving_default", &model, &sess)) return 1;
    int32_t ids[4] = {4, 0, 2, 2};
    int64_t shape[2] = {2, 2};
    ge_tensor_desc in = {NULL, GE_DTYPE_I32, shape, 2, ids, sizeof ids};
    ge_outputs *out = NULL;
    CHECK(ge_session_run(sess, &in, 1, &out));
    ge_tensor_desc y;
    CHECK(ge_outputs_get(out, 0, &y));
    double d = max_diff(&y, &want);
    printf("%s: output %s, max |output - expected| = %g\n", dir, y.name, d);
    ge_outputs_free(out);
    ge_session_free(sess);
    ge_model_free(model);
    free(want.data);
    return !(d <= 1e-6);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: tf_trace frozen.pb input.npy expected.npy saved_model_dir "
                        "expected.npy trace.json\n");
        return 2;
    }
    if (frozen(argv[1], argv[2], argv[3], argv[6]) || saved_model(argv[4], argv[5])) {
        fprintf(stderr, "tf_trace: a result differs from the expected one\n");
        return 1;
    }
    printf("tf_trace: ok\n");
    return 0;
}
