"""plotlib.py: how the benches' reports (lab/bench-report.py,
bench-mana-report.py, scale-report.py) draw their PNGs: gnuplot, when
installed, runs a script they build, with its data files in a temporary
directory.  Only the standard library."""
import os
import shutil
import subprocess
import sys
import tempfile


def start(who):
    """(gnuplot's path, a temporary directory for the data files), or
    (None, None) and a note on stderr when gnuplot is not installed."""
    gp = shutil.which("gnuplot")
    if not gp:
        print(f"{who}: gnuplot not found; no plot (apt-get install gnuplot-nox)", file=sys.stderr)
        return None, None
    return gp, tempfile.mkdtemp(prefix=f"{who}-plot.")


def finish(who, gp, tmp, lines):
    """Run the gnuplot script LINES, remove TMP; True when it drew."""
    script = os.path.join(tmp, "plot.gp")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    rc = subprocess.run([gp, script], capture_output=True, text=True)
    shutil.rmtree(tmp, ignore_errors=True)
    if rc.returncode:
        print(f"{who}: gnuplot failed: {rc.stderr.strip()}", file=sys.stderr)
        return False
    return True
