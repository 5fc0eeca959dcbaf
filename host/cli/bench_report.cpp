#include "cli/bench_report.h"

#include <fstream>

#include "common/error.h"
#include "common/plot.h"

namespace weft::cli {
namespace {

std::ofstream open_for_writing(const std::string& path) {
    std::ofstream out(path);
    if (!out) throw Error("cannot write " + path);
    return out;
}

}  // namespace

void write_bench_json(const std::string& path, const std::string& op, uint32_t chips, const nlohmann::json& rows) {
    open_for_writing(path) << nlohmann::json{{"op", op}, {"chips", chips}, {"rows", rows}}.dump(1) << "\n";
}

void write_bench_csv(const std::string& path, const nlohmann::json& rows) {
    std::ofstream out = open_for_writing(path);
    out << "op,algo,bytes,count,type,redop,time_us,algbw_gbs,busbw_gbs,wrong\n";
    for (const auto& row : rows)
        out << row["op"].get<std::string>() << "," << row["algo"].get<std::string>() << "," << row["bytes"] << ","
            << row["count"] << "," << row["type"].get<std::string>() << "," << row["redop"].get<std::string>() << ","
            << row["time_us"] << "," << row["algbw_gbs"] << "," << row["busbw_gbs"] << "," << row["wrong"] << "\n";
}

void write_bench_png(const std::string& path, const std::string& title, const std::vector<std::string>& algos,
                     const nlohmann::json& rows) {
    PlotSpec spec;
    spec.title = title;
    spec.x_label = "message size (bytes)";
    spec.y_label = "busbw (GB/s)";
    for (const std::string& algo : algos) {
        PlotSeries series{algo, {}};
        for (const auto& row : rows)
            if (row["requested"] == algo)
                series.points.push_back({row["bytes"].get<double>(), row["busbw_gbs"].get<double>()});
        spec.series.push_back(series);
    }
    write_line_plot_png(path, spec);
}

}  // namespace weft::cli
