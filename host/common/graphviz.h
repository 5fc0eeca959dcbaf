// Drawing graphs with Graphviz (its `dot` program, run as a child process:
// common/child_tool.h): the fabric model's pictures of a cluster, its routes
// and a deadlock's cycle.
#pragma once
#include <string>
#include <vector>

namespace weft {

// The Debian package that provides dot and its layout engines; error
// messages name it.
inline constexpr const char* kGraphvizPackage = "graphviz";

// Draws the DOT file `dot_path` into `out_path`, in the format its extension
// names (svg, png, pdf), laid out by Graphviz's engine `engine` (dot, neato,
// ...) with `options` (neato's "-n": the nodes' pos are kept). The file
// appears only once complete. Throws Error naming out_path for an unknown
// format, a missing Graphviz (naming its package) or a failed drawing.
void render_graphviz(const std::string& dot_path, const std::string& out_path, const std::string& engine = "dot",
                     const std::vector<std::string>& options = {});

}  // namespace weft
