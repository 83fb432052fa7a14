/* Load a compiled .om and run it, as an ACL program does: the input by the
 * model's first input name from an .npy file, the first output compared with
 * an expected .npy.  Usage: run_om model.om input.npy expected.npy */
#include "npy.h"

#include <ge/ge.h>

#include <math.h>
#include <stdio.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        ge_status s_ = (call);                                                         \
        if (s_ != GE_OK) {                                                             \
            fprintf(stderr, "%s failed: %s: %s\n", #call, ge_status_message(s_),      \
                    ge_last_error_message());                                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: run_om model.om input.npy expected.npy\n");
        return 2;
    }
    npy_f32 x, want;
    if (npy_read_f32(argv[2], &x) || npy_read_f32(argv[3], &want)) return 1;

    ge_model *model = NULL;
    CHECK(ge_model_load_file(argv[1], 2, &model));
    printf("%s: %zu input(s), %zu output(s)\n", argv[1], ge_model_num_inputs(model),
           ge_model_num_outputs(model));
    ge_session *sess = NULL;
    CHECK(ge_session_new(model, &sess));

    ge_tensor_desc in = {ge_model_input_name(model, 0), GE_DTYPE_F32, x.shape, x.rank,
                         x.data, x.count * sizeof(float)};
    ge_outputs *out = NULL;
    CHECK(ge_session_run(sess, &in, 1, &out));
    ge_tensor_desc y;
    CHECK(ge_outputs_get(out, 0, &y));
    printf("output %s: %zu elements\n", y.name, y.size / sizeof(float));

    int bad = y.dtype != GE_DTYPE_F32 || y.size != want.count * sizeof(float);
    double max_diff = 0;
    for (size_t i = 0; !bad && i < want.count; i++) {
        double d = fabs((double)((const float *)y.data)[i] - want.data[i]);
        if (d > max_diff) max_diff = d;
    }
    printf("max |output - expected| = %g\n", max_diff);
    bad |= max_diff > 1e-4;

    /* A wrong shape is refused with a message, not a crash. */
    int64_t wrong_shape[1] = {3};
    ge_tensor_desc wrong = {in.name, GE_DTYPE_F32, wrong_shape, 1, x.data, 3 * sizeof(float)};
    ge_outputs *none = NULL;
    ge_status st = ge_session_run(sess, &wrong, 1, &none);
    printf("run with shape [3]: %s: %s\n", ge_status_message(st), ge_last_error_message());
    bad |= st == GE_OK;

    ge_outputs_free(out);
    ge_session_free(sess);
    ge_model_free(model);
    free(x.data);
    free(want.data);
    if (bad) {
        fprintf(stderr, "run_om: the output differs from %s\n", argv[3]);
        return 1;
    }
    printf("run_om: ok\n");
    return 0;
}
