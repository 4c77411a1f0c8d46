# Per experiment of the full-size sanford2023 store: stored runs / planned and summed run wall seconds.
import sqlite3, glob, os, sys
root = sys.argv[1] if len(sys.argv) > 1 else "/work/fullrun/sanford2023"
tot = 0.0
for db in sorted(glob.glob(os.path.join(root, "*", "results.sqlite"))):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n, ok, s = c.execute("select count(*), sum(status='ok'), coalesce(sum(wall_seconds),0) from runs").fetchone()
    planned = c.execute("select value from meta where key like '%planned%' or key like '%runs%'").fetchall()
    tot += s
    print(f"{os.path.basename(os.path.dirname(db)):40s} {n:4d} stored ({ok} ok)  {s:9.0f} run-s  {planned}")
print(f"total run seconds {tot:.0f} = {tot/3600:.2f} core-h")
