# Safe copy of every results.sqlite of the store (sqlite backup API, fine while it is written) into DEST.
import sqlite3, glob, os, sys
src, dest = sys.argv[1], sys.argv[2]
for db in sorted(glob.glob(os.path.join(src, "*", "results.sqlite"))):
    name = os.path.basename(os.path.dirname(db))
    os.makedirs(os.path.join(dest, name), exist_ok=True)
    out = os.path.join(dest, name, "results.sqlite")
    tmp = out + ".part"
    s = sqlite3.connect(f"file:{db}?mode=ro", uri=True); d = sqlite3.connect(tmp)
    s.backup(d); d.execute("PRAGMA journal_mode=DELETE"); d.close(); s.close()
    os.replace(tmp, out)
    print(name, os.path.getsize(out))
