// Where attnlab finds its own files at run time: shipped experiments (experiments/) and
// helper scripts (scripts/). ATTNLAB_HOME overrides the source tree recorded at build
// time. Python helpers run with ATTNLAB_PYTHON, or Debian's /usr/bin/python3.
#pragma once

#include <string>

namespace attn {

std::string attnlab_home();
std::string attnlab_python();

}  // namespace attn
