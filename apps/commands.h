// The attnlab subcommands. Each registers its options on the CLI11 app and runs from the
// callback; errors are thrown (attn::UserError) and reported by main.cpp.
#pragma once

namespace CLI {
class App;
}

namespace attn {

void data_command_register(CLI::App& app);
void list_command_register(CLI::App& app);

}  // namespace attn
