#include "ccl/tuning.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>

#include "common/env.h"
#include "common/error.h"

namespace weft::ccl {
namespace {

struct FileValue {
    std::string text;
    int line;
};
using TuningFile = std::map<std::string, FileValue>;  // by environment name

std::string key_of(const std::string& env_name) {
    std::string k = env_name.substr(5);  // without "WEFT_"
    std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
    return k;
}

TuningFile parse(const std::string& path) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
        throw Error(path + ": cannot read the CCL tuning file (WEFT_CCL_CONFIG)");
    } catch (const YAML::Exception& e) {
        throw Error(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    TuningFile f;
    if (root.IsNull()) return f;
    if (!root.IsMap()) throw Error(path + ":" + std::to_string(root.Mark().line + 1) + ": expected a map of tunables");
    for (const auto& kv : root) {
        const std::string key = kv.first.as<std::string>();
        const int line = kv.first.Mark().line + 1;
        std::string known;
        const std::string* env = nullptr;
        for (const std::string& n : tunable_names()) {
            known += (known.empty() ? "" : ", ") + key_of(n);
            if (key_of(n) == key) env = &n;
        }
        if (!env) throw Error(path + ":" + std::to_string(line) + ": unknown CCL tunable '" + key + "' (known: " + known + ")");
        if (!kv.second.IsScalar())
            throw Error(path + ":" + std::to_string(line) + ": " + key + " must be a whole number");
        f[*env] = {kv.second.as<std::string>(), line};
    }
    return f;
}

// Read once per path: ops ask for their tunables on every run.
const TuningFile& tuning_file(const std::string& path) {
    static std::mutex m;
    static std::map<std::string, TuningFile> files;
    std::lock_guard<std::mutex> lock(m);
    auto it = files.find(path);
    if (it == files.end()) it = files.emplace(path, parse(path)).first;
    return it->second;
}

}  // namespace

const std::vector<std::string>& tunable_names() {
    static const std::vector<std::string> names = {
        "WEFT_CCL_SLOTS",          "WEFT_CCL_SLOT_SIZE",     "WEFT_CTRING_PIPELINE_DEPTH", "WEFT_CTRING_CHUNK_SIZE",
        "WEFT_CTRING_NUM_CHUNKS",  "WEFT_CTRING_MAX_BDP",    "WEFT_CTRING_MIN_SHARD_SIZE", "WEFT_CTRING_BIDIR_AG_MAX_SIZE",
        "WEFT_CCL_WORKERS_PER_LINK", "WEFT_CCL_PLANES",           "WEFT_CTRING_BIDIR_RS_MAX_SIZE",
    };
    return names;
}

long long tunable(const char* env_name, long long fallback, long long min) {
    const char* env = std::getenv(env_name);
    if (env && *env) return env_integer(env_name, fallback, min);
    const char* path = std::getenv("WEFT_CCL_CONFIG");
    if (!path || !*path) return fallback;
    const TuningFile& f = tuning_file(path);
    auto it = f.find(env_name);
    if (it == f.end()) return fallback;
    const std::string where = std::string(path) + ":" + std::to_string(it->second.line) + ": " + key_of(env_name);
    char* end = nullptr;
    const long long x = std::strtoll(it->second.text.c_str(), &end, 0);
    if (it->second.text.empty() || *end != '\0') throw Error(where + " = " + it->second.text + " is not a whole number");
    if (x < min) throw Error(where + " = " + it->second.text + " must be at least " + std::to_string(min));
    return x;
}

}  // namespace weft::ccl
