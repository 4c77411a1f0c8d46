// Escaping text for markup: the XML specials & < > " as entities, for HTML reports and SVG
// titles alike.
#pragma once

#include <string>

namespace attn {

std::string xml_escape(const std::string& s);

}  // namespace attn
