/* Build a small graph with ES, compile it with ge-atc's options, load and run
 * it, and check the outputs against the same math in C:
 *   h = relu(x @ w + b), probs = softmax(h, axis 1), top = argmax(probs, 1),
 *   total = reduce_sum(h, axes [1]) (built by name with ge_es_op).
 * Usage: es_build [model.om]   (also writes the compiled model there) */
#include <ge/ge.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

enum { B = 2, K = 4, N = 3 };

int main(int argc, char **argv) {
    /* The library serves this header: same major, not an older minor. */
    uint32_t v = ge_api_version();
    if ((v >> 16) != GE_API_VERSION_MAJOR || (v & 0xffff) < GE_API_VERSION_MINOR) {
        fprintf(stderr, "ge library API %u.%u does not serve header %u.%u\n", v >> 16,
                v & 0xffff, GE_API_VERSION_MAJOR, GE_API_VERSION_MINOR);
        return 1;
    }

    const float w[K * N] = {0.5f, -1.0f, 0.25f, 1.0f, 0.5f, -0.5f,
                            -0.25f, 0.75f, 1.0f, 0.1f, 0.2f, 0.3f};
    const float bias[N] = {0.1f, -0.2f, 0.3f};
    const int64_t w_shape[2] = {K, N}, b_shape[1] = {N};

    ge_graph *g = NULL;
    CHECK(ge_graph_new("main", &g));
    CHECK(ge_graph_symbol_bound(g, "B", 8));
    ge_es_tensor x, wt, bt, h, probs, top_v, top_i, total;
    CHECK(ge_graph_input(g, "x", "tensor<Bx4xf32>", &x));
    CHECK(ge_graph_weight(g, "fc.w", GE_DTYPE_F32, w_shape, 2, w, sizeof w, &wt));
    CHECK(ge_graph_weight(g, "fc.b", GE_DTYPE_F32, b_shape, 1, bias, sizeof bias, &bt));
    CHECK(ge_es_matmul(g, x, wt, &h));
    CHECK(ge_es_add(g, h, bt, &h));
    CHECK(ge_es_relu(g, h, &h));
    int64_t axis = 1;
    CHECK(ge_es_softmax(g, h, &axis, &probs));
    CHECK(ge_es_topk(g, probs, 1, &axis, NULL, NULL, &top_v, &top_i));
    size_t n = 0;
    CHECK(ge_es_op(g, "graph.reduce_sum", &h, 1, "{axes = [1]}", &total, 1, &n));

    ge_bytes *ty = NULL;
    CHECK(ge_graph_tensor_type(g, probs, &ty));
    printf("probs: %s\n", (const char *)ge_bytes_data(ty));
    if (strcmp((const char *)ge_bytes_data(ty), "tensor<Bx3xf32>") != 0) return 1;
    ge_bytes_free(ty);

    /* A shape error is a status and a message, not a crash. */
    ge_es_tensor bad;
    ge_status st = ge_es_matmul(g, x, x, &bad);
    printf("matmul(x, x): %s: %s\n", ge_status_message(st), ge_last_error_message());
    if (st != GE_ERROR_BUILD) return 1;

    ge_es_tensor outs[3] = {probs, top_i, total};
    const char *names[3] = {"probs", "top", "total"};
    CHECK(ge_graph_output(g, outs, names, 3));
    ge_module *m = NULL;
    CHECK(ge_graph_finish(g, &m));
    ge_graph_free(g);

    ge_compile_options *opts = NULL;
    CHECK(ge_compile_options_new(&opts));
    CHECK(ge_compile_options_set(opts, "soc_version", "Ascend910B"));
    CHECK(ge_compile_options_set(opts, "op_compiler_cache_mode", "disable"));
    ge_bytes *om = NULL;
    CHECK(ge_compile_module(m, opts, argc > 1 ? argv[1] : NULL, &om));
    ge_compile_options_free(opts);
    ge_module_free(m);

    ge_model *model = NULL;
    CHECK(ge_model_load_bytes(ge_bytes_data(om), ge_bytes_size(om), 1, &model));
    ge_bytes_free(om);
    for (size_t i = 0; i < ge_model_num_inputs(model); i++)
        printf("input %s: %s\n", ge_model_input_name(model, i), ge_model_input_type(model, i));
    for (size_t i = 0; i < ge_model_num_outputs(model); i++)
        printf("output %s: %s\n", ge_model_output_name(model, i), ge_model_output_type(model, i));

    const float xv[B * K] = {1.0f, 2.0f, -1.0f, 0.5f, -0.5f, 0.25f, 2.0f, 1.0f};
    const int64_t x_shape[2] = {B, K};
    ge_tensor_desc in = {"x", GE_DTYPE_F32, x_shape, 2, xv, sizeof xv};
    ge_session *sess = NULL;
    CHECK(ge_session_new(model, &sess));
    ge_outputs *res = NULL;
    CHECK(ge_session_run(sess, &in, 1, &res));

    /* The same math in C. */
    float hv[B][N], pv[B][N], tv[B];
    int64_t iv[B];
    for (int r = 0; r < B; r++) {
        float mx = -INFINITY, sum = 0;
        tv[r] = 0;
        iv[r] = 0;
        for (int c = 0; c < N; c++) {
            float acc = bias[c];
            for (int k = 0; k < K; k++) acc += xv[r * K + k] * w[k * N + c];
            hv[r][c] = acc > 0 ? acc : 0;
            tv[r] += hv[r][c];
            if (hv[r][c] > mx) mx = hv[r][c];
        }
        for (int c = 0; c < N; c++) sum += (pv[r][c] = expf(hv[r][c] - mx));
        for (int c = 0; c < N; c++) {
            pv[r][c] /= sum;
            if (pv[r][c] > pv[r][iv[r]]) iv[r] = c;
        }
    }

    ge_tensor_desc d;
    int bad_values = 0;
    CHECK(ge_outputs_find(res, "probs", &d));
    const float *p = d.data;
    if (d.dtype != GE_DTYPE_F32 || d.rank != 2 || d.shape[0] != B || d.shape[1] != N) return 1;
    for (int i = 0; i < B * N; i++) bad_values += fabsf(p[i] - pv[i / N][i % N]) > 1e-5f;
    CHECK(ge_outputs_find(res, "top", &d));
    const int64_t *ti = d.data;
    if (d.dtype != GE_DTYPE_I64 || d.size != B * sizeof(int64_t)) return 1;
    for (int i = 0; i < B; i++) bad_values += ti[i] != iv[i];
    CHECK(ge_outputs_find(res, "total", &d));
    const float *t = d.data;
    for (int i = 0; i < B; i++) bad_values += fabsf(t[i] - tv[i]) > 1e-4f;
    printf("probs[0] = %.5f %.5f %.5f, top = %lld %lld, total = %.4f %.4f\n", p[0], p[1], p[2],
           (long long)ti[0], (long long)ti[1], t[0], t[1]);

    /* Zero-copy: a tensor in ge's (aligned) memory, filled in place and lent
     * to the run; the outputs must be the same. */
    ge_tensor *xt = NULL;
    CHECK(ge_tensor_new(GE_DTYPE_F32, x_shape, 2, &xt));
    memcpy(ge_tensor_data(xt), xv, sizeof xv);
    const char *in_names[1] = {"x"};
    ge_outputs *res2 = NULL;
    CHECK(ge_session_run_tensors(sess, in_names, &xt, 1, &res2));
    ge_tensor_desc d2;
    CHECK(ge_outputs_find(res, "probs", &d));
    CHECK(ge_outputs_find(res2, "probs", &d2));
    if (d.size != d2.size || memcmp(d.data, d2.data, d.size) != 0) {
        fprintf(stderr, "es_build: the zero-copy run differs\n");
        return 1;
    }
    ge_outputs_free(res2);
    ge_tensor_free(xt);

    /* An unknown input name is an error listing the model's inputs. */
    ge_tensor_desc wrong = in;
    wrong.name = "y";
    ge_outputs *none = NULL;
    st = ge_session_run(sess, &wrong, 1, &none);
    printf("run with input 'y': %s: %s\n", ge_status_message(st), ge_last_error_message());
    if (st == GE_OK || none != NULL) return 1;

    ge_outputs_free(res);
    ge_session_free(sess);
    ge_model_free(model);
    if (bad_values) {
        fprintf(stderr, "es_build: %d values differ from the C reference\n", bad_values);
        return 1;
    }
    printf("es_build: ok\n");
    return 0;
}
