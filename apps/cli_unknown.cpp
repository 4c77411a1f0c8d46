// Unknown subcommands and options: see cli_unknown.h.
#include "apps/cli_unknown.h"

#include <vector>

#include "core/suggest.h"

namespace attn {
namespace {

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string unknown_option(const CLI::App& cmd, const std::string& arg, const std::string& where) {
  const std::string name = arg.substr(0, arg.find('='));
  return "unknown option " + name + " for " + where + did_you_mean(name, option_names(cmd)) +
         "; see " + where + " --help";
}

}  // namespace

std::string cli_unknown_argument(const CLI::App& app) {
  const auto subs = app.get_subcommands();
  if (subs.empty()) {
    const auto left = app.remaining();
    if (left.empty()) return "";
    if (left[0].rfind("-", 0) == 0) return unknown_option(app, left[0], "attnlab");
    std::vector<std::string> names;
    for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
      names.push_back(s->get_name());
    return "unknown command '" + left[0] + "'" + did_you_mean(left[0], names) +
           "; the commands are " + join_names(names) + " (see attnlab --help)";
  }
  const CLI::App& sub = *subs.front();
  const auto left = sub.remaining();
  if (left.empty() || left[0].rfind("-", 0) != 0) return "";
  return unknown_option(sub, left[0], "attnlab " + sub.get_name());
}

}  // namespace attn
