// weft help [COMMAND | env]: a command's help, or every WEFT_* variable from
// the registry (common/knobs.h) with its range, default and meaning.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include "ccl/algorithm_table.h"
#include "ccl/collective.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "common/knobs.h"
#include "driver/paths.h"

namespace weft::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& weft) {
    std::vector<std::string> names;
    for (const CLI::App* c : weft.get_subcommands({})) names.push_back(c->get_name());
    return names;
}

void print_knob(const knobs::Knob& k) {
    const std::string file = k.tunable ? "; tuning file key " + knobs::file_key(k) : "";
    std::printf("  %s\n      %s\n      %s; default %s%s\n", std::string(k.name).c_str(), std::string(k.meaning).c_str(),
                knobs::range_text(k).c_str(), knobs::default_text(k).c_str(), file.c_str());
}

void print_env() {
    std::printf("WEFT_* environment variables. A bad value is refused naming the variable and its range\n"
                "(weft exits with 2); an empty one counts as unset.\n");
    for (knobs::Reader r : {knobs::Reader::kCluster, knobs::Reader::kBridge, knobs::Reader::kCcl, knobs::Reader::kBench,
                            knobs::Reader::kTest}) {
        std::printf("\nread by %s:\n", std::string(knobs::reader_name(r)).c_str());
        for (const knobs::Knob& k : knobs::kKnobs)
            if (k.reader == r) print_knob(k);
    }
}

// `weft help fault shape`: the command's help, where its word is explained
// (a word its help never names is refused, not silently dropped).
int help(const CLI::App& weft, const std::vector<std::string>& words) {
    const std::string topic = words.empty() ? "" : words.front();
    std::vector<std::string> topics = command_names(weft);
    topics.push_back("env");
    try {
        if (!topic.empty()) one_of(topics)(topic);
    } catch (const Error& e) {
        throw UsageError(std::string("TOPIC: ") + e.what());
    }
    if (topic == "env" && words.size() > 1) throw UsageError("weft help env takes no further words");
    if (topic == "env") {
        print_env();
        return 0;
    }
    if (topic.empty()) {  // not weft.help(): that would be help's own, the command being run
        std::cout << weft.get_formatter()->make_help(&weft, "weft", CLI::AppFormatMode::Normal);
        return 0;
    }
    const std::string text = weft.get_subcommand(topic)->help("weft");
    for (size_t i = 1; i < words.size(); ++i)
        if (text.find(words[i]) == std::string::npos)
            throw UsageError("weft " + topic + " has no '" + words[i] + "': see weft help " + topic);
    std::cout << text;
    return 0;
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// Every option spelling of a command (and "help" words for its subcommands).
std::vector<std::string> words_of(const CLI::App& cmd) {
    std::vector<std::string> words;
    for (const CLI::Option* o : cmd.get_options()) {
        for (const std::string& l : o->get_lnames()) words.push_back("--" + l);
        for (const std::string& s : o->get_snames()) words.push_back("-" + s);
    }
    for (const CLI::App* sub : cmd.get_subcommands({})) {
        if (!sub->get_name().empty()) {
            words.push_back(sub->get_name());
            continue;
        }
        for (const std::string& w : words_of(*sub))  // an option group: its options are the command's
            if (std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
    }
    return words;
}

// The kernels `weft launch` finds by name, on any board the build made.
std::vector<std::string> kernel_names() {
    std::set<std::string> names;
    for (const std::string& board : paths::built_boards())
        for (const std::string& folder : paths::kernel_dirs(board))
            if (std::filesystem::is_directory(folder))
                for (const auto& e : std::filesystem::directory_iterator(folder))
                    if (e.path().extension() == ".elf") names.insert(e.path().stem());
    return {names.begin(), names.end()};
}

// Every algorithm --algo takes for the op, wherever it runs (the fabric's, a grid's).
std::vector<std::string> algorithm_names(ccl::Collective c, bool sweep) {
    std::vector<std::string> names = {"auto"};
    if (sweep) names.push_back("all");
    const std::vector<std::string> all = ccl::all_algorithms(c);
    names.insert(names.end(), all.begin(), all.end());
    return names;
}

// `case $op in OP) ...` completing --algo with that op's algorithms.
void print_algo_case(bool sweep) {
    std::printf("            case $op in\n");
    for (ccl::Collective c : ccl::all_collectives())
        std::printf("                %s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n",
                    ccl::collective_name(c).c_str(), joined(algorithm_names(c, sweep)).c_str());
    std::printf("            esac\n");
}

// The values of the options that take one of a few words.
void print_option_values(const std::vector<std::string>& ops) {
    std::vector<std::string> dtypes, redops;
    for (abi::DataType t : {abi::kF32, abi::kBF16, abi::kF16, abi::kI32}) dtypes.push_back(ccl::dtype_name(t));
    for (abi::MathOp m : {abi::kMathSum, abi::kMathMax, abi::kMathMin, abi::kMathProd})
        redops.push_back(ccl::redop_name(m));
    std::printf("    case $prev in\n"
                "        -d|--dtype|--datatype) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n"
                "        -o|--redop|--op) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n"
                "        --transport) COMPREPLY=($(compgen -W \"edm fabric auto\" -- \"$cur\")); return ;;\n",
                joined(dtypes).c_str(), joined(redops).c_str());
    std::printf("        --algo)\n            local op= ops=\" %s \"\n"
                "            for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
                "                case $ops in *\" $w \"*) op=$w ;; esac\n            done\n",
                joined(ops).c_str());
    std::printf("            if [ \"$cmd\" = bench ]; then\n");
    print_algo_case(true);
    std::printf("            else\n");
    print_algo_case(false);
    std::printf("            fi\n            return ;;\n    esac\n");
}

// A bash completion script made from the command line's own definition, so
// it can never fall behind it: commands, their options and subcommands; the
// values of --algo (the op's algorithms), --dtype, --redop and --transport;
// cluster names, ops, kernels and help topics where a command takes them.
int completion(const CLI::App& weft) {
    const std::vector<std::string> clusters = paths::cluster_names(), kernels = kernel_names();
    std::vector<std::string> ops;
    for (ccl::Collective c : ccl::all_collectives()) ops.push_back(ccl::collective_name(c));
    std::printf(
        "# bash completion for weft: source it, or put it in ~/.local/share/bash-completion/completions/weft\n"
        "# (made by 'weft completion')\n_weft() {\n"
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= w\n"
        "    for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
        "        case $w in -*) ;; *) cmd=$w; break ;; esac\n    done\n"
        "    case $prev in --cluster) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n"
        "        --json-out|--csv|--png|--trace|--run-dir) COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac\n",
        joined(clusters).c_str());
    print_option_values(ops);
    std::printf("    case $cmd in\n        '') COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n",
                joined(words_of(weft)).c_str());
    for (const CLI::App* c : weft.get_subcommands({})) {
        std::vector<std::string> words = words_of(*c);
        const std::string name = c->get_name();
        if (name == "up" || name == "routes") words.insert(words.end(), clusters.begin(), clusters.end());
        if (name == "run" || name == "bench") words.insert(words.end(), ops.begin(), ops.end());
        if (name == "launch") words.insert(words.end(), kernels.begin(), kernels.end());
        if (name == "help") {
            const std::vector<std::string> topics = command_names(weft);
            words.insert(words.end(), topics.begin(), topics.end());
            words.push_back("env");
        }
        std::printf("        %s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", name.c_str(),
                    joined(words).c_str());
    }
    std::printf("    esac\n}\ncomplete -F _weft weft\n");
    return 0;
}

}  // namespace

Command add_completion(CLI::App& weft) {
    CLI::App* cmd = weft.add_subcommand("completion", "print a bash completion script for weft (source it)");
    return {cmd, [&weft] { return completion(weft); }};
}

Command add_help(CLI::App& weft) {
    CLI::App* cmd =
        weft.add_subcommand("help", "this help, a command's, or the WEFT_* environment variables ('weft help env')");
    auto words = std::make_shared<std::vector<std::string>>();
    cmd->add_option("TOPIC", *words, "a command (and words of it, as in weft help fault shape), or env")
        ->option_text("TOPIC [WORD...]");
    return {cmd, [&weft, words] { return help(weft, *words); }};
}

}  // namespace weft::cli
