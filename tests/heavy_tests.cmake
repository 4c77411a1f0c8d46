# Tests too slow for CI get the label heavy beside unit (`make test-heavy`;
# the default and ASan test presets leave them out). Included by ctest after the discovered
# GoogleTest list (TEST_INCLUDE_FILES).
foreach(t IN ITEMS Engine.KillCampaignOfFiftySigkillsChangesNoStoredValue
                  Vmath.EveryFloatWithinItsBound)
  set_tests_properties(${t} PROPERTIES LABELS heavy TIMEOUT 1800)
endforeach()
