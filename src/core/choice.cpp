// The error of a string choice that names no value (see choice.h).
#include "core/choice.h"

#include "core/error.h"
#include "core/suggest.h"

namespace attn {

void choice_unknown(const std::string& text, const std::vector<std::string>& names,
                    const std::string& what) {
  throw UserError("unknown " + what + " '" + text + "'" + did_you_mean(text, names) +
                  "; choices: " + join_names(names));
}

}  // namespace attn
