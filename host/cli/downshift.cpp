// weft routes' --remove-row and --remove-column (cli/downshift.h).
#include "cli/downshift.h"

#include "cli/arguments.h"
#include "cli/exit_codes.h"
#include "common/error.h"

namespace weft::cli {
namespace {

// A row or column of a mesh to take out, as --remove-row/--remove-column name it.
struct LineOut {
    bool row = true;
    uint32_t mesh = 0, at = 0;
};

LineOut parse_line(const std::string& word, bool row, const ClusterSpec& spec) {
    const std::string option = row ? "--remove-row" : "--remove-column";
    LineOut l;
    l.row = row;
    const size_t colon = word.find(':');
    try {
        if (colon == std::string::npos) {
            if (spec.meshes.size() > 1)
                throw Error(spec.name + " has " + std::to_string(spec.meshes.size()) + " meshes: name one, MESH:" +
                            (row ? "Y" : "X"));
            l.at = static_cast<uint32_t>(parse_whole(word, 0, UINT32_MAX));
        } else {
            l.mesh = static_cast<uint32_t>(parse_whole(word.substr(0, colon), 0, UINT32_MAX));
            l.at = static_cast<uint32_t>(parse_whole(word.substr(colon + 1), 0, UINT32_MAX));
        }
        if (l.mesh >= spec.meshes.size())
            throw Error(spec.name + " has no mesh " + std::to_string(l.mesh) + " (meshes 0-" +
                        std::to_string(spec.meshes.size() - 1) + ")");
    } catch (const Error& e) {
        throw UsageError(option + " '" + word + "': " + e.what());
    }
    return l;
}

const char* decision_kind(transport::RerouteDecision::Kind k) {
    switch (k) {
    case transport::RerouteDecision::kNewTables: return "new tables";
    case transport::RerouteDecision::kCutOff: return "CUT OFF";
    case transport::RerouteDecision::kRefused: return "REFUSED";
    case transport::RerouteDecision::kFallback: return "fallback";
    case transport::RerouteDecision::kNone: break;
    }
    return "unchanged";
}

void take_out(Downshift& d, const LineOut& l) {
    transport::RerouteDecision r;
    try {
        r = l.row ? d.control.remove_row(l.mesh, l.at) : d.control.remove_column(l.mesh, l.at);
    } catch (const Error& e) {
        throw UsageError(std::string(l.row ? "--remove-row" : "--remove-column") + ": " + e.what());
    }
    const Mesh& m = d.control.topology().mesh(l.mesh);  // the topology changed with the removal
    std::string chips;
    for (uint32_t i = 0; i < (l.row ? m.width : m.height); ++i)
        chips += (chips.empty() ? "" : ", ") + std::to_string(l.row ? d.control.topology().chip_at(l.mesh, i, l.at)
                                                                    : d.control.topology().chip_at(l.mesh, l.at, i));
    d.usable &= r.kind != transport::RerouteDecision::kCutOff && r.kind != transport::RerouteDecision::kRefused;
    d.decisions.push_back(std::string(l.row ? "row " : "column ") + std::to_string(l.at) + " of mesh " +
                          std::to_string(l.mesh) + " taken out (chips " + chips + "): " +
                          (r.kind == transport::RerouteDecision::kNewTables && !r.why.empty()  // it says so
                               ? r.why
                               : decision_kind(r.kind) + (r.why.empty() ? "" : ": " + r.why)));
}

}  // namespace

Downshift downshift(const ClusterSpec& spec, const std::vector<std::string>& rows,
                    const std::vector<std::string>& columns) {
    Downshift d{transport::ControlPlane(spec.board, ClusterTopology::from_spec(spec)), {}, true};
    for (const std::string& w : rows) take_out(d, parse_line(w, true, spec));
    for (const std::string& w : columns) take_out(d, parse_line(w, false, spec));
    return d;
}

}  // namespace weft::cli
