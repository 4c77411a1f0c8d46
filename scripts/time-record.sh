# Reading `/usr/bin/time -v` records, for bench/ and scripts/ (sourced, not run). A file may hold
# several records (`time -a`, a run resumed with the same command): each function gives one line
# per record, in file order.
#   time_values FILE LABEL   the value of each record's line starting with LABEL
#                            (e.g. 'Elapsed (wall clock) time', 'Maximum resident set size (kbytes)')
#   time_seconds             stdin h:mm:ss or m:ss.ss per line -> seconds per line
#   time_kib_gib KIB         a `time -v` memory figure (KiB) in GiB, two decimals

time_values() {
  grep -F "$2" "$1" | sed 's/^[^:]*: *//; s/^.*): *//'
}
time_seconds() {
  awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; printf "%.2f\n", s }'
}
time_kib_gib() {
  awk -v k="$1" 'BEGIN { printf "%.2f", k / 1048576 }'
}
