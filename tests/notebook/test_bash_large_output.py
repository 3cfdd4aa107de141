"""100 MB of output through %bash: the kernel's memory stays bounded, the recorded text is the tail, and the
full output is in a file. Run in a fresh process so the peak memory measured is this command's alone."""

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json, os, resource
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.user_ns["__session__"] = os.path.abspath("big.ipynb")
    ip.run_line_magic("load_ext", "pi_notebook")
    ip.run_cell("%bash echo warm-up")  # imports, loop thread: the baseline includes them
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ip.run_cell("%bash head -c 100000000 /dev/zero | tr '\\\\0' x | fold -w 99; echo THE-END")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    import pi_notebook
    m = pi_notebook.current_session().messages[-1]
    print(json.dumps({"before_kb": before, "after_kb": after, "output_len": len(m.output),
                      "tail": m.output[-8:], "truncated": m.truncated, "path": m.full_output_path,
                      "exit": m.exit_code}))
    """
)


def test_100_mb_of_output_keeps_memory_bounded(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the 100 MB full-output file goes away with tmp_path
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    grew_mb = (result["after_kb"] - result["before_kb"]) / 1024
    print(f"peak memory grew by {grew_mb:.1f} MB for 100 MB of output")
    assert grew_mb < 40, f"memory grew by {grew_mb:.0f} MB"
    assert result["exit"] == 0 and result["truncated"] and result["tail"] == "THE-END\n"
    assert result["output_len"] <= 51_200
    full = result["path"]
    with open(full, "rb") as fh:
        fh.seek(0, 2)
        assert fh.tell() >= 100_000_000  # the full output is on disk
