"""The one home of benchmark results: Benchmarks/results.md.

`bench.py` records each run there (not a --smoke run, unless --results names a file): the command
line, the commit (with `+dirty` when the work tree has changes), the machine (CPU model, cores,
memory, kernel), the load average at the start and the end, and the report exactly as it was
printed. The newest run goes first, right after the `<!-- bench.py:runs -->` marker.
"""

import io
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

MARKER = "<!-- bench.py:runs -->"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "Benchmarks" / "results.md"


def commit():
    """The short commit of the work tree, with +dirty when it has uncommitted changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def machine():
    """CPU model, cores, memory and kernel, in one line."""
    model, memory = platform.processor() or platform.machine(), "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {memory} memory, Linux {platform.release()} ({platform.machine()})"


def load():
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


class Tee(io.TextIOBase):
    """Standard output that also keeps what was written."""

    def __init__(self, stream):
        self.stream, self.kept = stream, io.StringIO()

    def write(self, text):
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


class Recorder:
    """Keeps what the run prints and, when it ends, adds it to the results file."""

    def __init__(self, path, script="bench.py"):
        self.path, self.script = (Path(path) if path else None), script
        self.started, self.load_at_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load()
        self.commit, self.tee = commit(), None

    def __enter__(self):
        if self.path:
            self.tee = Tee(sys.stdout)
            sys.stdout = self.tee
        return self

    def __exit__(self, kind, error, trace):
        if not self.tee:
            return False
        sys.stdout = self.tee.stream
        outcome = "completed" if kind is None else f"ended early: {error}"
        command = f"python3 Benchmarks/{self.script} " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        entry = (f"### `{command.strip()}` at `{self.commit}`, {self.started}\n\n"
                 f"Machine: {machine()}. Load average {self.load_at_start} at the start, {load()} at the end. "
                 f"The run {outcome}.\n\n```\n{self.tee.kept.getvalue().strip()}\n```\n\n")
        text = self.path.read_text() if self.path.exists() else f"# Benchmark results\n\n{MARKER}\n"
        if MARKER not in text:
            text += f"\n{MARKER}\n"
        head, tail = text.split(MARKER, 1)
        self.path.write_text(f"{head}{MARKER}\n\n{entry}{tail.lstrip(chr(10))}")
        print(f"bench: recorded this run in {self.path}", file=sys.stderr)
        return False
