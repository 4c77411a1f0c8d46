# Per-test settings for `make test-asan` (test preset "asan"; docs/reliability.md),
# included by ctest after the discovered GoogleTest list (TEST_INCLUDE_FILES); without
# sanitizers (make test) they change nothing.
#
# Tests that need minutes under ASan+UBSan get the label slow_asan, which the preset leaves
# out (they keep the label unit and run in `make test`).
# The three longest gtests of the release suite (32, 17 and 7 s there, minutes under ASan;
# measured 2026-12-01), and the grown sanford2023 E1 sweep (25 s there, 177 s under ASan, 15 %
# of the ASan suite's test time on 2026-12-06: the smaller GrowSweep tests keep the grow
# path under the sanitizers). (The Python and docs tests are left out by the preset's name
# filter: a sanitizer build has no Python module.)
set(ATTNLAB_SLOW_ASAN_TESTS
  ModelIo.SaveLoadPredictsBitForBitForEveryModel
  Engine.ReproduceWritesAReportAndExitsByTheClaims
  NeuralModel.ThreadCountChangesNoBitOfAnyModel
  GrowSweep.SanfordE1GrownByOneMRunsOnlyTheNewPointsAndEqualsAFreshRun
)
foreach(t IN LISTS ATTNLAB_SLOW_ASAN_TESTS)
  set_tests_properties(${t} PROPERTIES LABELS "unit;slow_asan")
endforeach()

# Tests that cannot run under ASan at all get the label no_asan, which the preset leaves out
# too: a run under `ulimit -v` (AddressSanitizer reserves terabytes of address space).
foreach(t IN ITEMS CoreMemory.TheCommandLineUnderASmallAddressLimitSaysSoAndDoesNotHang)
  set_tests_properties(${t} PROPERTIES LABELS "unit;no_asan")
endforeach()

# Tests that start Open MPI (in the test or in the CLI it runs): Open MPI's libraries have
# no frame pointers, so only the slow unwinder sees through them to the frames that
# tests/sanitizer/lsan.supp names (fast unwinding leaves "<unknown module>" frames that no
# suppression matches). Slow unwinding costs time, hence these tests only.
foreach(t IN ITEMS MpiPieces.RunPointsRoundTripAsMessages
                   MpiPieces.DistributedIsNotPartOfRunIdsOrTheFingerprint
                   MpiPieces.OneRankDistributedRunEqualsTheLocalRun
                   MpiPieces.MpiFlagWithoutMpirun)
  set_tests_properties(${t} PROPERTIES ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:fast_unwind_on_malloc=0")
endforeach()
