// What weft bench writes beside its table: the rows as JSON, CSV and a PNG
// chart of busbw against size, one line per algorithm asked for.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::cli {

// rows: one object per (size, algorithm), as weft bench records them; meta:
// what the run was (cluster, board, dtype, iterations, date, version), at the
// top of the JSON object and as '#' lines before the CSV header.
void write_bench_json(const std::string& path, const std::string& op, const nlohmann::json& meta,
                      const nlohmann::json& rows);
void write_bench_csv(const std::string& path, const nlohmann::json& meta, const nlohmann::json& rows);
// A line per algorithm asked for; "auto" is named by what it picked ("auto:
// ring", "auto: ring, tree" where the pick changes with the size). Returns
// the legend's entries.
std::vector<std::string> write_bench_png(const std::string& path, const std::string& title,
                                         const std::vector<std::string>& algos, const nlohmann::json& rows);

}  // namespace weft::cli
