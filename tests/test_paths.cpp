// The build's paths, compiled into this one file (see test_paths.h).
#include "test_paths.h"

const char* test_cli_path() { return ATTNLAB_CLI_PATH; }
const char* test_source_dir() { return ATTNLAB_SOURCE_DIR; }
