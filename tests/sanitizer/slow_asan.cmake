# Tests that need minutes under ASan+UBSan (measured with `make test-asan`, see
# docs/reliability.md): they get the ctest label slow_asan, which the test preset "asan"
# leaves out. They keep the label unit and run in `make test` without sanitizers.
# Included by ctest after the discovered GoogleTest list (TEST_INCLUDE_FILES).
set(ATTNLAB_SLOW_ASAN_TESTS
)
foreach(t IN LISTS ATTNLAB_SLOW_ASAN_TESTS)
  set_tests_properties(${t} PROPERTIES LABELS "unit;slow_asan")
endforeach()
