#include "cli/link_text.h"

#include <cstdio>

namespace weft::cli {

std::string faults_text(const nlohmann::json& f) {
    std::string out;
    const auto add = [&](const char* fmt, auto... v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, fmt, v...);
        out += out.empty() ? buf : std::string(" ") + buf;
    };
    if (const double d = f["drop_rate"].get<double>(); d > 0) add("drop %g", d);
    if (const double b = f["bit_error_rate"].get<double>(); b > 0) add("ber %g", b);
    if (const unsigned p = f["flap_period_ms"].get<unsigned>(); p > 0)
        add("flap %u/%ums", p, f["flap_down_ms"].get<unsigned>());
    return out.empty() ? "none" : out;
}

std::string describe_shaping(double gbps, double latency_us) {
    if (gbps <= 0 && latency_us <= 0) return "unshaped";
    char buf[80];
    if (gbps > 0) std::snprintf(buf, sizeof buf, "shaped %g GB/s + %g us", gbps, latency_us);
    else
        std::snprintf(buf, sizeof buf, "shaped: full speed + %g us", latency_us);
    return buf;
}

std::string faults_and_shaping(const nlohmann::json& link) {
    const std::string shaping = describe_shaping(link["shaping"]["bandwidth_gbps"], link["shaping"]["latency_us"]);
    return faults_text(link["faults"]) + (shaping == "unshaped" ? "" : ", " + shaping);
}

}  // namespace weft::cli
