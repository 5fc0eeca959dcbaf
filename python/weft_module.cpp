// weft._weft: the native half of the Python module (python/weft/__init__.py
// is the other). NumPy arrays in and out, weft's errors as Python
// exceptions; the cluster's work runs with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>

#include "common/error.h"
#include "driver/paths.h"
#include "native_cluster.h"

namespace py = pybind11;
using weft::python::Bytes;
using weft::python::NativeCluster;
using weft::python::OpCall;
using weft::python::PlacedTensor;
using weft::python::TensorCall;
using weft::tensor::MeshTensor;

namespace {

weft::abi::DataType dtype_of(const py::dtype& d) {
    if (d.kind() == 'f' && d.itemsize() == 4) return weft::abi::kF32;
    if (d.kind() == 'f' && d.itemsize() == 2) return weft::abi::kF16;
    if (d.kind() == 'i' && d.itemsize() == 4) return weft::abi::kI32;
    throw py::type_error("weft takes float32, float16 or int32 arrays, not " +
                         std::string(py::str(static_cast<const py::handle&>(d))));
}

py::dtype numpy_dtype(weft::abi::DataType t) {
    switch (t) {
        case weft::abi::kF16: return py::dtype("float16");
        case weft::abi::kI32: return py::dtype("int32");
        default: return py::dtype("float32");
    }
}

// An array's bytes (C order); None: none.
Bytes bytes_of(const py::handle& h) {
    if (h.is_none()) return {};
    const py::array a = py::array::ensure(h, py::array::c_style);
    if (!a) throw py::type_error("weft takes NumPy arrays, not " + std::string(py::str(py::type::of(h))));
    const auto* p = static_cast<const uint8_t*>(a.data());
    return Bytes(p, p + a.nbytes());
}

// One dtype for every array given; throws naming the odd one.
weft::abi::DataType common_dtype(const py::list& arrays) {
    std::optional<weft::abi::DataType> t;
    for (size_t i = 0; i < arrays.size(); ++i) {
        if (arrays[i].is_none()) continue;
        const py::array a = py::array::ensure(arrays[i]);
        if (!a) throw py::type_error("input " + std::to_string(i) + " is not a NumPy array");
        const weft::abi::DataType d = dtype_of(a.dtype());
        if (t && *t != d) throw py::type_error("array " + std::to_string(i) + " has another dtype than the first");
        t = d;
    }
    if (!t) throw py::value_error("no array given");
    return *t;
}

py::object array_of(const Bytes& b, weft::abi::DataType t) {
    if (b.empty()) return py::none();
    py::array a(numpy_dtype(t), std::vector<py::ssize_t>{py::ssize_t(b.size() / weft::abi::dtype_size(t))});
    std::memcpy(a.mutable_data(), b.data(), b.size());
    return a;
}

py::list arrays_of(const std::vector<Bytes>& all, weft::abi::DataType t) {
    py::list out;
    for (const Bytes& b : all) out.append(array_of(b, t));
    return out;
}

std::array<uint32_t, 4> shape4(const std::vector<uint64_t>& shape) {
    if (shape.empty() || shape.size() > 4) throw py::value_error("a tensor has 1 to 4 dimensions");
    std::array<uint32_t, 4> s{1, 1, 1, 1};
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 || shape[i] > UINT32_MAX) throw py::value_error("a tensor's dimensions are 1 to 2^32 - 1");
        s[4 - shape.size() + i] = uint32_t(shape[i]);
    }
    return s;
}

// The weft tree this module belongs to, from where it lies: a build tree
// (BUILD/python/weft/_weft.so beside BUILD/bin) or an install
// (PREFIX/lib/python3/dist-packages/weft/_weft.so). $WEFT_BUILD_DIR still wins.
void find_weft_tree() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&find_weft_tree), &info) || !info.dli_fname) return;
    const std::filesystem::path package = std::filesystem::weakly_canonical(info.dli_fname).parent_path();
    const std::filesystem::path build = package.parent_path().parent_path();
    if (std::filesystem::exists(build / "bin" / "weft-bridge")) {
        setenv("WEFT_BUILD_DIR", build.c_str(), 0);
        return;
    }
    weft::paths::set_installed_prefix(package.parent_path().parent_path().parent_path().parent_path().c_str());
}

// Asked by a waiting op, which runs with the GIL released: a SIGINT Python
// has seen since leaves KeyboardInterrupt set, and the op ends.
bool ctrl_c_pressed() {
    py::gil_scoped_acquire locked;
    return PyErr_CheckSignals() != 0;
}

// Runs `call` (a call into the cluster) with the GIL released and Ctrl-C
// watched: an op it stops leaves KeyboardInterrupt set, raised here with a
// note saying where the op was.
template <typename Call>
auto interruptible(NativeCluster& c, Call&& call) {
    c.on_interrupt(ctrl_c_pressed);
    try {
        py::gil_scoped_release unlocked;
        return call();
    } catch (const weft::Error& stopped) {
        if (!PyErr_Occurred()) throw;
        py::error_already_set ctrl_c;
        if (py::hasattr(ctrl_c.value(), "add_note")) ctrl_c.value().attr("add_note")(stopped.what());
        throw ctrl_c;
    }
}

// Every chip's array of a tensor op: their common type, the first's shape
// and each one's bytes.
struct TensorParts {
    weft::abi::DataType dtype;
    std::vector<uint64_t> shape;
    std::vector<Bytes> bytes;
};
TensorParts tensor_parts(const py::list& parts) {
    TensorParts t{common_dtype(parts), {}, {}};
    const py::array first = py::array::ensure(parts[0]);
    t.shape.assign(first.shape(), first.shape() + first.ndim());
    for (const py::handle h : parts) t.bytes.push_back(bytes_of(h));
    return t;
}

void register_errors(py::module_& m) {
    static py::exception<weft::Error> error(m, "Error", PyExc_RuntimeError);
    static py::exception<weft::TimeoutError> timeout(m, "TimeoutError", error.ptr());
    static py::exception<weft::FaultError> fault(m, "FaultError", error.ptr());
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const weft::TimeoutError& e) {
            timeout(e.what());
        } catch (const weft::FaultError& e) {
            fault(e.what());
        } catch (const weft::Error& e) {
            error(e.what());
        }
    });
}

}  // namespace

PYBIND11_MODULE(_weft, m) {
    m.doc() = "weft's native module: use the weft package (import weft)";
    find_weft_tree();
    register_errors(m);
    py::class_<PlacedTensor>(m, "PlacedTensor")
        .def_readonly("chip", &PlacedTensor::chip)
        .def_property_readonly("address", [](const PlacedTensor& t) { return t.at.base; })
        .def_property_readonly("pages", [](const PlacedTensor& t) { return weft::abi::tensor_pages(t.at.spec); })
        .def_property_readonly("units", [](const PlacedTensor& t) { return weft::abi::tensor_units(t.at.spec); });
    py::class_<NativeCluster>(m, "NativeCluster")
        .def_static("start", &NativeCluster::start, py::arg("cluster"), py::arg("run_dir") = "",
                    py::call_guard<py::gil_scoped_release>())
        .def_static("attach", &NativeCluster::attach, py::arg("run_dir") = "")
        .def_static("model", &NativeCluster::model, py::arg("cluster"))
        .def_property_readonly("chips", &NativeCluster::chips)
        .def_property_readonly("name", &NativeCluster::name)
        .def_property_readonly("run_dir", &NativeCluster::run_dir)
        .def_property_readonly("closed", &NativeCluster::closed)
        .def("close", &NativeCluster::close, py::call_guard<py::gil_scoped_release>())
        .def(
            "collective",
            [](NativeCluster& c, const std::string& op, const py::list& inputs, const std::string& redop,
               const std::string& algo, const std::string& transport, uint32_t root, const std::vector<uint64_t>& shape,
               uint32_t dim, const std::vector<uint32_t>& chips) {
                OpCall call{op, common_dtype(inputs), redop, algo, transport, root, {}, dim, chips};
                if (!shape.empty()) {
                    const std::array<uint32_t, 4> s = shape4(shape);
                    for (size_t i = 0; i < 4; ++i) call.shape[i] = s[i];
                }
                std::vector<Bytes> in;
                for (const py::handle h : inputs) in.push_back(bytes_of(h));
                return arrays_of(interruptible(c, [&] { return c.collective(call, in); }), call.dtype);
            },
            py::arg("op"), py::arg("inputs"), py::arg("redop") = "sum", py::arg("algo") = "auto",
            py::arg("transport") = "auto", py::arg("root") = 0, py::arg("shape") = std::vector<uint64_t>{},
            py::arg("dim") = 0, py::arg("chips") = std::vector<uint32_t>{})
        .def("ring_order", &NativeCluster::ring_order, py::arg("transport") = "auto",
             py::arg("chips") = std::vector<uint32_t>{}, py::call_guard<py::gil_scoped_release>())
        .def(
            "put_tensor",
            [](NativeCluster& c, uint32_t chip, const py::array& data, const std::string& layout,
               const std::string& memory, std::pair<uint16_t, uint16_t> grid, std::optional<uint64_t> offset) {
                std::vector<uint64_t> shape(data.shape(), data.shape() + data.ndim());
                const TensorCall call{layout, memory, "", grid, offset, ""};
                const Bytes bytes = bytes_of(data);
                const weft::abi::DataType t = dtype_of(data.dtype());
                py::gil_scoped_release unlocked;
                return c.put_tensor(chip, shape4(shape), t, call, bytes);
            },
            py::arg("chip"), py::arg("data"), py::arg("layout") = "row", py::arg("memory") = "interleaved",
            py::arg("grid") = std::pair<uint16_t, uint16_t>{2, 1}, py::arg("offset") = py::none())
        .def("get_tensor",
             [](NativeCluster& c, const PlacedTensor& t) {
                 Bytes b;
                 {
                     py::gil_scoped_release unlocked;
                     b = c.get_tensor(t);
                 }
                 return array_of(b, weft::abi::DataType(t.at.spec.dtype));
             })
        .def(
            "all_gather_tensor",
            [](NativeCluster& c, const py::list& parts, uint32_t dim, const std::string& layout,
               const std::string& memory, const std::string& out_memory, std::pair<uint16_t, uint16_t> grid,
               const std::string& mesh_axis, const std::string& transport) {
                const TensorParts in = tensor_parts(parts);
                const TensorCall call{layout, memory, out_memory, grid, 0, mesh_axis};
                return arrays_of(interruptible(c,
                                               [&] {
                                                   return c.all_gather_tensor(shape4(in.shape), in.dtype,
                                                                              dim + uint32_t(4 - in.shape.size()), call,
                                                                              in.bytes, transport);
                                               }),
                                 in.dtype);
            },
            py::arg("parts"), py::arg("dim"), py::arg("layout") = "row", py::arg("memory") = "interleaved",
            py::arg("out_memory") = "", py::arg("grid") = std::pair<uint16_t, uint16_t>{2, 1},
            py::arg("mesh_axis") = "", py::arg("transport") = "fabric")
        .def(
            "all_reduce_tensor",
            [](NativeCluster& c, const py::list& parts, const std::string& redop, const std::string& algo,
               const std::string& transport, const std::string& layout, const std::string& memory,
               std::pair<uint16_t, uint16_t> grid, const std::string& mesh_axis) {
                const TensorParts in = tensor_parts(parts);
                const TensorCall call{layout, memory, "", grid, 0, mesh_axis};
                return arrays_of(interruptible(c,
                                               [&] {
                                                   return c.all_reduce_tensor(shape4(in.shape), in.dtype, redop, algo,
                                                                              transport, call, in.bytes);
                                               }),
                                 in.dtype);
            },
            py::arg("parts"), py::arg("redop") = "sum", py::arg("algo") = "auto", py::arg("transport") = "auto",
            py::arg("layout") = "row", py::arg("memory") = "interleaved",
            py::arg("grid") = std::pair<uint16_t, uint16_t>{2, 1}, py::arg("mesh_axis") = "")
        .def(
            "reduce_scatter_tensor",
            [](NativeCluster& c, const py::list& parts, uint32_t dim, const std::string& redop, const std::string& algo,
               const std::string& transport, const std::string& layout, const std::string& memory,
               const std::string& out_memory, std::pair<uint16_t, uint16_t> grid, const std::string& mesh_axis) {
                const TensorParts in = tensor_parts(parts);
                const TensorCall call{layout, memory, out_memory, grid, 0, mesh_axis};
                return arrays_of(interruptible(c,
                                               [&] {
                                                   return c.reduce_scatter_tensor(shape4(in.shape), in.dtype,
                                                                                  dim + uint32_t(4 - in.shape.size()),
                                                                                  redop, algo, transport, call,
                                                                                  in.bytes);
                                               }),
                                 in.dtype);
            },
            py::arg("parts"), py::arg("dim"), py::arg("redop") = "sum", py::arg("algo") = "auto",
            py::arg("transport") = "auto", py::arg("layout") = "row", py::arg("memory") = "interleaved",
            py::arg("out_memory") = "", py::arg("grid") = std::pair<uint16_t, uint16_t>{2, 1},
            py::arg("mesh_axis") = "")
        .def("mesh_axis_groups", &NativeCluster::mesh_axis_groups, py::arg("axis"))
        .def(
            "mesh_tensor_from_host",
            [](NativeCluster& c, const py::array& data, const std::string& layout, const std::string& by_row,
               const std::string& by_col) {
                const std::vector<uint64_t> shape(data.shape(), data.shape() + data.ndim());
                const Bytes bytes = bytes_of(data);
                const weft::abi::DataType t = dtype_of(data.dtype());
                return interruptible(c, [&] {
                    return c.mesh_tensor_from_host(shape4(shape), t, layout, by_row, by_col, bytes);
                });
            },
            py::arg("data"), py::arg("layout"), py::arg("by_row"), py::arg("by_col"))
        .def(
            "mesh_tensor_from_parts",
            [](NativeCluster& c, const py::list& parts, const std::string& layout, const std::string& by_row,
               const std::string& by_col) {
                const TensorParts in = tensor_parts(parts);
                return interruptible(c, [&] {
                    return c.mesh_tensor_from_parts(shape4(in.shape), in.dtype, layout, by_row, by_col, in.bytes);
                });
            },
            py::arg("parts"), py::arg("layout"), py::arg("by_row"), py::arg("by_col"))
        .def(
            "mesh_tensor_op",
            [](NativeCluster& c, const MeshTensor& t, const std::string& op, const std::string& axis, uint32_t dim) {
                return interruptible(c, [&] { return c.mesh_tensor_op(t, op, axis, dim); });
            },
            py::arg("tensor"), py::arg("op"), py::arg("axis"), py::arg("dim") = 0)
        .def(
            "mesh_tensor_part",
            [](NativeCluster& c, const MeshTensor& t, uint32_t chip) {
                return array_of(interruptible(c, [&] { return c.mesh_tensor_part(t, chip); }),
                                weft::abi::DataType(t.at().spec.dtype));
            },
            py::arg("tensor"), py::arg("chip"))
        .def(
            "mesh_tensor_whole",
            [](NativeCluster& c, const MeshTensor& t) {
                return array_of(interruptible(c, [&] { return c.mesh_tensor_whole(t); }),
                                weft::abi::DataType(t.at().spec.dtype));
            },
            py::arg("tensor"));
    // A mesh tensor's native half: where its parts are and how they lie.
    py::class_<MeshTensor, std::shared_ptr<MeshTensor>>(m, "NativeMeshTensor")
        .def_property_readonly("part_shape",
                               [](const MeshTensor& t) {
                                   return std::vector<uint32_t>(t.at().spec.shape, t.at().spec.shape + 4);
                               })
        .def_property_readonly("whole_shape",
                               [](const MeshTensor& t) {
                                   const weft::abi::TensorSpec w = t.whole();
                                   return std::vector<uint32_t>(w.shape, w.shape + 4);
                               })
        .def_property_readonly("by_row", [](const MeshTensor& t) { return weft::tensor::describe(t.by_row()); })
        .def_property_readonly("by_col", [](const MeshTensor& t) { return weft::tensor::describe(t.by_col()); });
}
