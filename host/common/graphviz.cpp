#include "common/graphviz.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/child_tool.h"
#include "common/error.h"

namespace weft {
namespace {

std::string format_of(const std::string& path) {
    const size_t dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
    if (ext == "svg" || ext == "png" || ext == "pdf") return ext;
    throw Error("cannot draw '" + path + "': name it .svg, .png or .pdf");
}

}  // namespace

void render_graphviz(const std::string& dot_path, const std::string& out_path, const std::string& engine,
                     const std::vector<std::string>& options) {
    const std::string format = format_of(out_path);
    // Beside the result, so the rename cannot cross file systems.
    const std::string partial = out_path + ".tmp" + std::to_string(getpid());
    std::vector<std::string> args{"-K" + engine};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"-T" + format, "-o", partial, dot_path});
    try {
        run_child_tool({"dot", kGraphvizPackage, "pictures"}, args);
    } catch (const Error& e) {
        unlink(partial.c_str());
        throw Error("cannot draw '" + out_path + "': " + e.what());
    }
    if (std::rename(partial.c_str(), out_path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        unlink(partial.c_str());
        throw Error("cannot write '" + out_path + "': " + why);
    }
}

}  // namespace weft
