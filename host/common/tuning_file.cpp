#include "common/tuning_file.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <mutex>

namespace weft::knobs {
namespace {

using TuningFile = std::map<std::string, TuningValue>;  // by knob name

std::string at(const std::string& path, int line) { return path + ":" + std::to_string(line) + ": "; }

const Knob* tunable_with_key(const std::string& key) {
    for (const Knob& k : kKnobs)
        if (k.tunable && file_key(k) == key) return &k;
    return nullptr;
}

std::string known_keys() {
    std::string known;
    for (const Knob& k : kKnobs)
        if (k.tunable) known += (known.empty() ? "" : ", ") + file_key(k);
    return known;
}

YAML::Node load(const std::string& path) {
    try {
        return YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
        throw KnobError(path + ": cannot read the CCL tuning file (WEFT_CCL_CONFIG)");
    } catch (const YAML::Exception& e) {
        throw KnobError(at(path, e.mark.line + 1) + e.msg);
    }
}

TuningFile parse(const std::string& path) {
    const YAML::Node root = load(path);
    TuningFile f;
    if (root.IsNull()) return f;
    if (!root.IsMap()) throw KnobError(at(path, root.Mark().line + 1) + "expected a map of tunables");
    for (const auto& kv : root) {
        const std::string key = kv.first.as<std::string>();
        const int line = kv.first.Mark().line + 1;
        const Knob* k = tunable_with_key(key);
        if (!k) throw KnobError(at(path, line) + "unknown CCL tunable '" + key + "' (known: " + known_keys() + ")");
        if (!kv.second.IsScalar()) throw KnobError(at(path, line) + key + " must be " + range_text(*k));
        f[std::string(k->name)] = {kv.second.as<std::string>(), at(path, line) + key};
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

std::optional<TuningValue> tuning_file_value(const std::string& path, const Knob& k) {
    const TuningFile& f = tuning_file(path);
    const auto it = f.find(std::string(k.name));
    if (it == f.end()) return std::nullopt;
    return it->second;
}

}  // namespace weft::knobs
