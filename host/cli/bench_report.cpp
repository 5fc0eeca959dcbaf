#include "cli/bench_report.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// A full disk (or /dev/full) fails the writes, not the open.
void check_written(std::ofstream& out, const std::string& path) {
    if (!out.flush()) throw Error("cannot write " + path + ": " + std::strerror(errno));
}

// An algorithm as the chart's legend names it: what ran, where auto picked it.
std::string legend_entry(const std::string& requested, const nlohmann::json& rows) {
    std::vector<std::string> ran;
    for (const auto& row : rows)
        if (row["requested"] == requested &&
            std::find(ran.begin(), ran.end(), row["algo"].get<std::string>()) == ran.end())
            ran.push_back(row["algo"]);
    if (ran.empty() || (ran.size() == 1 && ran[0] == requested)) return requested;
    std::string entry = requested + ":";
    for (size_t i = 0; i < ran.size(); ++i) entry += (i ? ", " : " ") + ran[i];
    return entry;
}

// A number, or nothing where there is none (a check --no-check skipped).
std::string csv_cell(const nlohmann::json& v) { return v.is_null() ? "" : v.dump(); }

}  // namespace

void write_bench_json(const std::string& path, const std::string& op, const nlohmann::json& meta,
                      const nlohmann::json& rows) {
    nlohmann::json out = meta;
    out["op"] = op;
    out["rows"] = rows;
    std::ofstream file = open_for_writing(path);
    file << out.dump(1) << "\n";
    check_written(file, path);
}

void write_bench_csv(const std::string& path, const nlohmann::json& meta, const nlohmann::json& rows) {
    std::ofstream out = open_for_writing(path);
    // The run's metadata as comment lines, which CSV readers skip with comment='#'.
    for (const auto& [key, value] : meta.items())
        out << "# " << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
    out << "op,algo,bytes,count,type,redop,time_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong,"
           "in_place_time_us,in_place_algbw_gbs,in_place_busbw_gbs,in_place_wrong\n";
    for (const auto& row : rows) {
        out << row["op"].get<std::string>() << "," << row["algo"].get<std::string>() << "," << row["bytes"] << ","
            << row["count"] << "," << row["type"].get<std::string>() << "," << row["redop"].get<std::string>() << ","
            << row["time_us"] << "," << row["time_min_us"] << "," << row["time_max_us"] << "," << row["algbw_gbs"]
            << "," << row["busbw_gbs"] << "," << csv_cell(row["wrong"]);
        const nlohmann::json& in = row["in_place"];
        if (in.is_null()) out << ",,,,\n";
        else
            out << "," << in["time_us"] << "," << in["algbw_gbs"] << "," << in["busbw_gbs"] << ","
                << csv_cell(in["wrong"]) << "\n";
    }
    check_written(out, path);
}

std::vector<std::string> write_bench_png(const std::string& path, const std::string& title,
                                         const std::vector<std::string>& algos, const nlohmann::json& rows) {
    PlotSpec spec;
    spec.title = title;
    spec.x_label = "message size (bytes)";
    spec.y_label = "busbw (GB/s)";
    std::vector<std::string> legend;
    for (const std::string& algo : algos) {
        legend.push_back(legend_entry(algo, rows));
        PlotSeries series{legend.back(), {}};
        for (const auto& row : rows)
            if (row["requested"] == algo) {
                const double bytes = row["bytes"].get<double>(), bus = row["busbw_gbs"].get<double>();
                const double mean = row["time_us"].get<double>(), fastest = row["time_min_us"].get<double>(),
                             slowest = row["time_max_us"].get<double>();
                series.points.push_back({bytes, bus});
                // busbw is inversely proportional to the time.
                if (fastest > 0 && slowest > 0)
                    series.spread.push_back({bytes, bus * mean / slowest, bus * mean / fastest});
            }
        spec.series.push_back(series);
    }
    write_line_plot_png(path, spec);
    return legend;
}

}  // namespace weft::cli
