// ge.hpp: a small header-only C++17 wrapper of ge.h. Handles are RAII
// (move-only) objects, a failed call throws ge::Error (status + message).
// Everything is inline over the C API, so a program links libge_capi only.
#ifndef GE_GE_HPP
#define GE_GE_HPP

#include "ge.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ge {

// A failed call: the ge_status and ge_last_error_message() of the thread.
class Error : public std::runtime_error {
public:
    Error(ge_status status, const std::string &message)
        : std::runtime_error(message), status_(status) {}
    ge_status status() const noexcept { return status_; }

private:
    ge_status status_;
};

// Throw ge::Error unless `s` is GE_OK.
inline void check(ge_status s) {
    if (s != GE_OK) {
        throw Error(s, std::string(ge_status_message(s)) + ": " + ge_last_error_message());
    }
}

// The header and the library agree (same major, library not older).
inline bool abi_compatible() noexcept {
    uint32_t lib = ge_api_version();
    return (lib >> 16) == GE_API_VERSION_MAJOR && (lib & 0xffff) >= GE_API_VERSION_MINOR;
}

namespace detail {
// An owned handle freed by `Free` (which ignores NULL).
template <class T, void (*Free)(T *)> class Handle {
public:
    Handle() = default;
    explicit Handle(T *p) noexcept : p_(p) {}
    ~Handle() { Free(p_); }
    Handle(Handle &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    Handle &operator=(Handle &&o) noexcept {
        if (this != &o) {
            Free(p_);
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    T *get() const noexcept { return p_; }

private:
    T *p_ = nullptr;
};
} // namespace detail

// Bytes returned by ge (an .om image, text).
class Bytes : public detail::Handle<ge_bytes, ge_bytes_free> {
public:
    using Handle::Handle;
    const uint8_t *data() const { return ge_bytes_data(get()); }
    size_t size() const { return ge_bytes_size(get()); }
    std::string str() const { return std::string(reinterpret_cast<const char *>(data()), size()); }
};

// ge-atc options by name ("soc_version", "input_shape", ...).
class CompileOptions : public detail::Handle<ge_compile_options, ge_compile_options_free> {
public:
    CompileOptions() {
        ge_compile_options *p = nullptr;
        check(ge_compile_options_new(&p));
        *this = CompileOptions(p);
    }
    CompileOptions &set(const std::string &name, const std::string &value) {
        check(ge_compile_options_set(get(), name.c_str(), value.c_str()));
        return *this;
    }

private:
    explicit CompileOptions(ge_compile_options *p) : Handle(p) {}
};

// Compile a model file as ge-atc does, writing om_path.
inline void compile_file(const std::string &model, const CompileOptions &opts,
                         const std::string &om_path) {
    check(ge_compile_file(model.c_str(), opts.get(), om_path.c_str(), nullptr));
}

class Module : public detail::Handle<ge_module, ge_module_free> {
public:
    using Handle::Handle;
    static Module parse(const std::string &air) {
        ge_module *p = nullptr;
        check(ge_module_parse(air.c_str(), &p));
        return Module(p);
    }
    static Module import_onnx(const std::string &path) {
        ge_module *p = nullptr;
        check(ge_import_onnx_file(path.c_str(), &p));
        return Module(p);
    }
    static Module import_onnx(const void *data, size_t size) {
        ge_module *p = nullptr;
        check(ge_import_onnx_bytes(static_cast<const uint8_t *>(data), size, &p));
        return Module(p);
    }
    // TensorFlow: a frozen GraphDef (.pb) or a SavedModel folder, with ge-atc's
    // input_shape / out_nodes / signature from `opts` (nullptr: defaults).
    static Module import_tf(const std::string &path, const CompileOptions *opts = nullptr) {
        ge_module *p = nullptr;
        check(ge_import_tf(path.c_str(), opts ? opts->get() : nullptr, &p));
        return Module(p);
    }
    static Module import_tf(const void *data, size_t size, const CompileOptions *opts = nullptr) {
        ge_module *p = nullptr;
        check(ge_import_tf_bytes(static_cast<const uint8_t *>(data), size,
                                 opts ? opts->get() : nullptr, &p));
        return Module(p);
    }
    std::string print(bool generic = false) const {
        ge_bytes *b = nullptr;
        check(ge_module_print(get(), generic, &b));
        return Bytes(b).str();
    }
    void compile(const CompileOptions &opts, const std::string &om_path) const {
        check(ge_compile_module(get(), opts.get(), om_path.c_str(), nullptr));
    }
    Bytes compile(const CompileOptions &opts) const {
        ge_bytes *b = nullptr;
        check(ge_compile_module(get(), opts.get(), nullptr, &b));
        return Bytes(b);
    }
};

using Tensor = ge_es_tensor;

// A graph built with ES: g.build(ge_es_relu, x) calls any generated
// ge_es_* function of one result and returns it; g.op("graph.relu", {x})
// builds an op by name.
class Graph : public detail::Handle<ge_graph, ge_graph_free> {
public:
    explicit Graph(const std::string &name) {
        ge_graph *p = nullptr;
        check(ge_graph_new(name.c_str(), &p));
        *this = Graph(p);
    }
    Tensor input(const std::string &name, const std::string &type) {
        Tensor t{};
        check(ge_graph_input(get(), name.c_str(), type.c_str(), &t));
        return t;
    }
    void symbol_bound(const std::string &symbol, int64_t bound) {
        check(ge_graph_symbol_bound(get(), symbol.c_str(), bound));
    }
    Tensor weight(const std::string &name, const std::vector<int64_t> &shape,
                  const std::vector<float> &values) {
        Tensor t{};
        check(ge_graph_weight(get(), name.c_str(), GE_DTYPE_F32, shape.data(), shape.size(),
                              values.data(), values.size() * sizeof(float), &t));
        return t;
    }
    template <class F, class... A> Tensor build(F f, A &&...args) {
        Tensor out{};
        check(f(get(), std::forward<A>(args)..., &out));
        return out;
    }
    std::vector<Tensor> op(const std::string &name, const std::vector<Tensor> &operands,
                           const char *attrs = nullptr, size_t max_results = 8) {
        std::vector<Tensor> out(max_results);
        size_t n = 0;
        check(ge_es_op(get(), name.c_str(), operands.data(), operands.size(), attrs, out.data(),
                       out.size(), &n));
        out.resize(n);
        return out;
    }
    std::string type(Tensor t) const {
        ge_bytes *b = nullptr;
        check(ge_graph_tensor_type(get(), t, &b));
        return Bytes(b).str();
    }
    void output(const std::vector<Tensor> &outs, const std::vector<std::string> &names = {}) {
        std::vector<const char *> ns;
        for (const auto &n : names) ns.push_back(n.c_str());
        check(ge_graph_output(get(), outs.data(), names.empty() ? nullptr : ns.data(),
                              outs.size()));
    }
    Module finish() {
        ge_module *p = nullptr;
        check(ge_graph_finish(get(), &p));
        return Module(p);
    }

private:
    explicit Graph(ge_graph *p) : Handle(p) {}
};

// An input of a run (the data is read during run() only, in place when 8-byte aligned).
struct Input {
    std::string name;
    ge_dtype dtype;
    std::vector<int64_t> shape;
    const void *data;
    size_t size;
    static Input f32(std::string name, std::vector<int64_t> shape, const std::vector<float> &v) {
        return Input{std::move(name), GE_DTYPE_F32, std::move(shape), v.data(),
                     v.size() * sizeof(float)};
    }
};

// An output of a run, read in place (valid while its Outputs lives).
struct Output {
    std::string name;
    ge_dtype dtype;
    std::vector<int64_t> shape;
    const void *data;
    size_t size;
    std::vector<float> f32() const {
        if (dtype != GE_DTYPE_F32) throw Error(GE_ERROR_INVALID_ARGUMENT, "output is not f32");
        const float *p = static_cast<const float *>(data);
        return std::vector<float>(p, p + size / sizeof(float));
    }
};

class Outputs : public detail::Handle<ge_outputs, ge_outputs_free> {
public:
    using Handle::Handle;
    size_t size() const { return ge_outputs_count(get()); }
    Output operator[](size_t i) const { return view([&](ge_tensor_desc *d) { return ge_outputs_get(get(), i, d); }); }
    Output at(const std::string &name) const {
        return view([&](ge_tensor_desc *d) { return ge_outputs_find(get(), name.c_str(), d); });
    }

    // The task records of a run made with Session::run_traced (empty otherwise).
    std::vector<ge_trace_event> trace() const {
        std::vector<ge_trace_event> v(ge_outputs_trace_count(get()));
        for (size_t i = 0; i < v.size(); i++) check(ge_outputs_trace_event(get(), i, &v[i]));
        return v;
    }
    // Its Chrome/Perfetto trace JSON (what ge-run --trace writes).
    std::string trace_json() const {
        ge_bytes *b = nullptr;
        check(ge_outputs_trace_json(get(), &b));
        return Bytes(b).str();
    }

private:
    template <class F> Output view(F get_desc) const {
        ge_tensor_desc d{};
        check(get_desc(&d));
        return Output{d.name ? d.name : "", d.dtype, std::vector<int64_t>(d.shape, d.shape + d.rank),
                      d.data, d.size};
    }
};

class Model : public detail::Handle<ge_model, ge_model_free> {
public:
    explicit Model(const std::string &om_path, uint32_t threads = 1) {
        ge_model *p = nullptr;
        check(ge_model_load_file(om_path.c_str(), threads, &p));
        *this = Model(p);
    }
    static Model from_bytes(const void *data, size_t size, uint32_t threads = 1) {
        ge_model *p = nullptr;
        check(ge_model_load_bytes(static_cast<const uint8_t *>(data), size, threads, &p));
        return Model(p);
    }
    // (name, .air type) of each input / output.
    std::vector<std::pair<std::string, std::string>> inputs() const {
        std::vector<std::pair<std::string, std::string>> v;
        for (size_t i = 0; i < ge_model_num_inputs(get()); i++)
            v.emplace_back(ge_model_input_name(get(), i), ge_model_input_type(get(), i));
        return v;
    }
    std::vector<std::pair<std::string, std::string>> outputs() const {
        std::vector<std::pair<std::string, std::string>> v;
        for (size_t i = 0; i < ge_model_num_outputs(get()); i++)
            v.emplace_back(ge_model_output_name(get(), i), ge_model_output_type(get(), i));
        return v;
    }

private:
    explicit Model(ge_model *p) : Handle(p) {}
};

// A tensor in ge's memory (64-byte aligned): fill data() in place and pass
// it to Session::run without a copy.
class HostTensor : public detail::Handle<ge_tensor, ge_tensor_free> {
public:
    HostTensor(ge_dtype dtype, const std::vector<int64_t> &shape) {
        ge_tensor *p = nullptr;
        check(ge_tensor_new(dtype, shape.data(), shape.size(), &p));
        *this = HostTensor(p);
    }
    void *data() { return ge_tensor_data(get()); }
    size_t size() const { return ge_tensor_size(get()); }

private:
    explicit HostTensor(ge_tensor *p) : Handle(p) {}
};

class Session : public detail::Handle<ge_session, ge_session_free> {
public:
    explicit Session(const Model &m) {
        ge_session *p = nullptr;
        check(ge_session_new(m.get(), &p));
        *this = Session(p);
    }
    Outputs run(const std::vector<Input> &inputs) const {
        std::vector<ge_tensor_desc> ds = descs(inputs);
        ge_outputs *o = nullptr;
        check(ge_session_run(get(), ds.data(), ds.size(), &o));
        return Outputs(o);
    }
    // run(), recording one trace record per executed task (ge-run's --trace).
    Outputs run_traced(const std::vector<Input> &inputs) const {
        std::vector<ge_tensor_desc> ds = descs(inputs);
        ge_outputs *o = nullptr;
        check(ge_session_run_traced(get(), ds.data(), ds.size(), &o));
        return Outputs(o);
    }
    // Inputs in ge's memory, by name, without a copy.
    Outputs run(const std::vector<std::string> &names, std::vector<HostTensor *> inputs) const {
        std::vector<const char *> ns;
        for (const auto &n : names) ns.push_back(n.c_str());
        std::vector<ge_tensor *> ts;
        for (HostTensor *t : inputs) ts.push_back(t->get());
        ge_outputs *o = nullptr;
        check(ge_session_run_tensors(get(), ns.data(), ts.data(), ts.size(), &o));
        return Outputs(o);
    }

private:
    explicit Session(ge_session *p) : Handle(p) {}
    static std::vector<ge_tensor_desc> descs(const std::vector<Input> &inputs) {
        std::vector<ge_tensor_desc> ds;
        for (const auto &in : inputs)
            ds.push_back(ge_tensor_desc{in.name.c_str(), in.dtype, in.shape.data(),
                                        in.shape.size(), in.data, in.size});
        return ds;
    }
};

} // namespace ge

#endif // GE_GE_HPP
