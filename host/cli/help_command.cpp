// weft help [COMMAND | env]: a command's help, or every WEFT_* variable from
// the registry (common/knobs.h) with its range, default and meaning.
#include <cstdio>
#include <iostream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "common/knobs.h"

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

int help(const CLI::App& weft, const std::string& topic) {
    if (topic == "env") print_env();
    else if (topic.empty())  // not weft.help(): that would be help's own, the command being run
        std::cout << weft.get_formatter()->make_help(&weft, "weft", CLI::AppFormatMode::Normal);
    else
        std::cout << weft.get_subcommand(topic)->help("weft");
    return 0;
}

}  // namespace

Command add_help(CLI::App& weft) {
    CLI::App* cmd =
        weft.add_subcommand("help", "this help, a command's, or the WEFT_* environment variables ('weft help env')");
    auto topic = std::make_shared<std::string>();
    std::vector<std::string> topics = command_names(weft);
    topics.push_back("env");
    add_word(*cmd, "TOPIC", "", *topic, one_of(topics), "a command, or env");
    return {cmd, [&weft, topic] { return help(weft, *topic); }};
}

}  // namespace weft::cli
