// The C++ wrapper (ge.hpp): import an ONNX model, compile it with ge-atc's
// options to an .om, load it, run it on an .npy input and compare with the
// expected .npy; then a small ES graph whose shape error arrives as a
// ge::Error exception.
// Usage: onnx_cpp model.onnx input.npy expected.npy out.om
#include "npy.h"

#include <ge/ge.hpp>

#include <cmath>
#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
    if (argc != 5) {
        std::cerr << "usage: onnx_cpp model.onnx input.npy expected.npy out.om\n";
        return 2;
    }
    if (!ge::abi_compatible()) {
        std::cerr << "libge_capi does not serve this header\n";
        return 1;
    }
    npy_f32 x, want;
    if (npy_read_f32(argv[2], &x) || npy_read_f32(argv[3], &want)) return 1;
    try {
        // Import (to look at it) and compile the file as ge-atc does.
        ge::Module m = ge::Module::import_onnx(argv[1]);
        std::string text = m.print();
        std::cout << "imported: " << text.substr(0, text.find('\n')) << " ...\n";
        ge::CompileOptions opts;
        opts.set("framework", "5").set("soc_version", "Ascend910B");
        opts.set("op_compiler_cache_mode", "disable");
        ge::compile_file(argv[1], opts, argv[4]);

        ge::Model model(argv[4], 2);
        for (const auto &io : model.inputs()) std::cout << "input " << io.first << ": " << io.second << "\n";
        ge::Session session(model);
        std::vector<float> xv(x.data, x.data + x.count);
        ge::Outputs out = session.run(
            {ge::Input::f32(model.inputs()[0].first, std::vector<int64_t>(x.shape, x.shape + x.rank), xv)});
        std::vector<float> y = out[0].f32();
        if (y.size() != want.count) {
            std::cerr << "onnx_cpp: " << y.size() << " outputs, expected " << want.count << "\n";
            return 1;
        }
        double max_diff = 0;
        for (size_t i = 0; i < y.size(); i++) max_diff = std::fmax(max_diff, std::fabs(y[i] - want.data[i]));
        std::cout << "max |output - expected| = " << max_diff << "\n";
        if (max_diff > 1e-4) return 1;
        // Again without copying the input: it is written into ge's memory.
        ge::HostTensor xt(GE_DTYPE_F32, std::vector<int64_t>(x.shape, x.shape + x.rank));
        std::memcpy(xt.data(), x.data, xt.size());
        ge::Outputs again = session.run({model.inputs()[0].first}, {&xt});
        if (again[0].f32() != y) {
            std::cerr << "onnx_cpp: the zero-copy run differs\n";
            return 1;
        }
        // Traced (ge-run's --trace): one record per task, the same outputs.
        ge::Outputs traced = session.run_traced(
            {ge::Input::f32(model.inputs()[0].first, std::vector<int64_t>(x.shape, x.shape + x.rank), xv)});
        std::vector<ge_trace_event> trace = traced.trace();
        std::cout << "traced run: " << trace.size() << " task records\n";
        if (traced[0].f32() != y || trace.empty() || out.trace().size() != 0 ||
            traced.trace_json().find("\"traceEvents\"") == std::string::npos) {
            std::cerr << "onnx_cpp: the traced run differs\n";
            return 1;
        }

        // ES from C++: any generated function through Graph::build.
        ge::Graph g("main");
        ge::Tensor a = g.input("a", "tensor<2x3xf32>");
        ge::Tensor r = g.build(ge_es_sigmoid, a);
        std::cout << "sigmoid: " << g.type(r) << "\n";
        try {
            g.build(ge_es_matmul, a, a);  // 2x3 @ 2x3: a shape error
            std::cerr << "onnx_cpp: matmul(a, a) was accepted\n";
            return 1;
        } catch (const ge::Error &e) {
            std::cout << "caught ge::Error (" << ge_status_message(e.status()) << "): " << e.what() << "\n";
            if (e.status() != GE_ERROR_BUILD) return 1;
        }
    } catch (const ge::Error &e) {
        std::cerr << "onnx_cpp: " << e.what() << "\n";
        return 1;
    }
    free(x.data);
    free(want.data);
    std::cout << "onnx_cpp: ok\n";
    return 0;
}
