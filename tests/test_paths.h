// Where the tests find the command-line binary and the source tree. Defined in
// test_paths.cpp, the one file compiled with the build's paths, so that the other test
// objects do not depend on where the checkout or the build tree lives.
#pragma once

const char* test_cli_path();     // build/attnlab
const char* test_source_dir();   // the repository root
