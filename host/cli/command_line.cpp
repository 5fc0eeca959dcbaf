#include "cli/command_line.h"

#include "transport/edm/edm_wait.h"
#include "transport/fabric/fabric_wait.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/arguments.h"
#include "cli/version.h"
#include "cli/exit_codes.h"
#include "cli/help_format.h"
#include "common/knobs.h"
#include "common/log.h"
#include "driver/paths.h"

namespace weft::cli {
namespace {

constexpr const char* kAbout =
    "weft: start, inspect and fault a virtual cluster of accelerator chips, and run collective ops on it";

std::string footer() {
    return std::string(kExitCodesHelp) +
           "\n\n'weft help COMMAND' or 'weft COMMAND --help': a command's arguments and options;"
           " 'weft help env': the WEFT_* variables";
}

bool is_option(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

// Words no command took come first: a misplaced option also shifts the words
// after it (weft up --dtype bf16 takes bf16 for the cluster), so what that
// makes of them is no news.
std::string message_of(const CLI::ParseError& e, const CLI::App& weft, const CLI::App& where) {
    const std::vector<std::string> extra = weft.remaining(true);
    std::string options;
    for (const std::string& w : extra)
        if (is_option(w)) options += (options.empty() ? "" : ", ") + w;
    if (!options.empty()) return "does not take " + options;
    if (!where.get_parent() && !extra.empty()) return "unknown command '" + extra.front() + "'";
    return e.what();
}

// argv up to the first ':' word; the words of each group after a ':' go to `groups`.
std::vector<char*> split_groups(int argc, char** argv, std::vector<std::vector<std::string>>& groups) {
    std::vector<char*> head;
    for (int i = 0; i < argc; ++i) {
        if (std::string(argv[i]) == ":" && i > 0) groups.emplace_back();
        else if (groups.empty())
            head.push_back(argv[i]);
        else
            groups.back().push_back(argv[i]);
    }
    return head;
}

}  // namespace

CommandLine::CommandLine() : app_(kAbout, "weft") {
    globals_.run_dir = paths::default_run_dir();
    app_.formatter(std::make_shared<HelpFormat>());  // before the commands: they copy it
    app_.require_subcommand(0, 1);
    app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as it always was
    add_run_dir(app_, globals_.run_dir);
    app_.set_version_flag("--version", std::string("weft ") + version_text(), "the version of weft, and exit");
    for (const Command& c :
         {add_up(app_, globals_), add_down(app_, globals_), add_status(app_, globals_), add_linktest(app_, globals_),
          add_link(app_, globals_), add_fault(app_, globals_), add_reset(app_, globals_), add_run(app_, globals_),
          add_bench(app_, globals_), add_launch(app_, globals_), add_console(app_, globals_), add_gdb(app_, globals_),
          add_fabric(app_, globals_), add_replay(app_, globals_), add_routes(app_), add_completion(app_), add_help(app_)}) {
        runners_[c.app] = c.run;
        c.app->group("Commands");
    }
    app_.footer(footer());  // after the commands: they would copy it too
}

int CommandLine::run(int argc, char** argv) {
    // Any hang report this process prints names what a stuck EDM waits for,
    // whether or not this process built the EDM.
    transport::register_edm_wait_decoder();
    transport::register_fabric_wait_decoder();
    // CLI11 prints the version as soon as it meets the flag, whatever follows.
    if (argc > 2 && std::any_of(argv + 1, argv + argc, [](const char* w) { return std::string(w) == "--version"; }))
        return refuse("--version prints weft's version and takes no other words");
    std::vector<char*> head = split_groups(argc, argv, globals_.groups);
    try {
        app_.parse(static_cast<int>(head.size()), head.data());
    } catch (const CLI::CallForHelp& e) {
        return app_.exit(e);  // the help of the command it was given to
    } catch (const CLI::CallForVersion& e) {
        return app_.exit(e);  // prints the version, exit code 0
    } catch (const CLI::ParseError& e) {
        const std::string message = message_of(e, app_, innermost());
        if (std::any_of(argv + 1, argv + argc, [](const char* w) { return std::string(w) == "--json"; }))
            std::printf("%s\n", nlohmann::json{{"error", message}, {"exit_code", kUsage}}.dump().c_str());
        return refuse(message);
    }
    return run_command();
}

int CommandLine::run_command() {
    const auto chosen = app_.get_subcommands();
    if (!globals_.groups.empty() && (chosen.empty() || chosen.front()->get_name() != "launch"))
        return refuse("':' starts the next kernel of 'weft launch' (weft launch A ... : B ...), and no other command");
    if (chosen.empty()) {
        std::cout << app_.help();
        return kOk;
    }
    // With --json, a script reads the failure as JSON on stdout too.
    const CLI::Option* json = chosen.front()->get_option_no_throw("--json");
    const auto fail = [&](const char* what, int code) {
        if (json && json->count())
            std::printf("%s\n", nlohmann::json{{"error", what}, {"exit_code", code}}.dump().c_str());
        return code;
    };
    try {
        log::level();  // a bad WEFT_DEBUG is a usage error, before anything runs
        knobs::check(knobs::Reader::kCluster);  // as are the other variables every command may read
    } catch (const Error& e) {
        std::fprintf(stderr, "weft: %s\n", e.what());
        return fail(e.what(), kUsage);
    }
    try {
        return runners_.at(chosen.front())();
    } catch (const UsageError& e) {
        return fail(e.what(), refuse(e.what()));
    } catch (const knobs::KnobError& e) {
        std::fprintf(stderr, "weft: %s\n", e.what());
        return fail(e.what(), kUsage);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weft: %s\n", e.what());
        return fail(e.what(), kFailed);
    }
}

// "weft fault drop: RATE: must be ...", the usage line, and where the help is.
int CommandLine::refuse(const std::string& message) const {
    const CLI::App& where = innermost();
    std::string command, help = "weft help";
    for (const CLI::App* a = &where; a->get_parent(); a = a->get_parent()) {
        command = " " + a->get_name() + command;
        if (a->get_parent() == &app_) help += " " + a->get_name();
    }
    std::fprintf(stderr, "weft%s: %s\n%s(see '%s')\n", command.c_str(), message.c_str(),
                 HelpFormat().make_usage(&where, "").c_str(), help.c_str());
    return kUsage;
}

const CLI::App& CommandLine::innermost() const {
    const CLI::App* a = &app_;
    while (!a->get_subcommands().empty()) a = a->get_subcommands().front();
    return *a;
}

}  // namespace weft::cli
