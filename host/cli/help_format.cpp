#include "cli/help_format.h"

namespace weft::cli {
namespace {

std::vector<const CLI::Option*> positionals(const CLI::App& app) {
    return app.get_options([](const CLI::Option* o) { return o->get_positional(); });
}

bool has_commands(const CLI::App& app) {
    return !app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); }).empty();
}

}  // namespace

HelpFormat::HelpFormat() {
    label("SUBCOMMAND", "COMMAND");
    label("Subcommands", "Commands");
    label("Positionals", "Arguments");
    column_width(28);
}

std::string HelpFormat::make_usage(const CLI::App* app, std::string) const {
    std::string line = app->get_name() + " [OPTIONS]";
    for (const CLI::Option* p : positionals(*app)) line += " " + make_option_usage(p);
    if (has_commands(*app)) line += app->get_require_subcommand_min() ? " COMMAND" : " [COMMAND]";
    for (const CLI::App* a = app->get_parent(); a; a = a->get_parent()) {
        std::string words = a->get_name();
        for (const CLI::Option* p : positionals(*a)) words += " " + make_option_usage(p);
        line = words + " " + line;
    }
    return get_label("Usage") + ": " + line + "\n";
}

}  // namespace weft::cli
