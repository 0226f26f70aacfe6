#!/usr/bin/env python3
"""Runs every command that the project's READMEs show, as written (tests/lit/readme/).

Commands are the lines of ```sh fenced blocks and the `Run: `...`` lines of README.md and
samples/*/README.md. Each README's commands run in order, in a fresh temporary directory
holding a copy of what the README's directory holds (for README.md, the repository's
samples/), with the tools on PATH, under `bash -e -o pipefail`. Lines that run the project's
own scripts (./scripts/...) are not run here: they build the project, which CI does anyway.

usage: readme_commands.py SOURCE_ROOT   (exit 1 and the failing command's output on failure)
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def commands(readme):
    out = []
    fence = None
    with open(readme, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = re.match(r"^```(\w*)", line)
            if m:
                fence = None if fence is not None else m.group(1)
                continue
            if fence == "sh":
                cmd = re.sub(r"\s+#.*$", "", line).strip()
                if cmd and not cmd.startswith("./scripts/"):
                    out.append((n, cmd))
            elif fence is None:
                m = re.match(r"^Run: `(.+)`\s*$", line)
                if m:
                    out.append((n, m.group(1)))
    return out


def main():
    root = os.path.abspath(sys.argv[1])
    readmes = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "samples", "*", "README.md")))
    failures = 0
    total = 0
    for readme in readmes:
        cmds = commands(readme)
        if not cmds:
            continue
        rel = os.path.relpath(readme, root)
        with tempfile.TemporaryDirectory(prefix="readme-") as work:
            if os.path.dirname(readme) == root:
                shutil.copytree(os.path.join(root, "samples"), os.path.join(work, "samples"))
            else:
                shutil.copytree(os.path.dirname(readme), work, dirs_exist_ok=True)
            for n, cmd in cmds:
                total += 1
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=work, capture_output=True, text=True)
                if r.returncode != 0:
                    failures += 1
                    print(f"FAIL {rel}:{n}: {cmd}\n  exit {r.returncode}\n{r.stdout}{r.stderr}")
                else:
                    print(f"ok   {rel}:{n}: {cmd}")
    print(f"{total - failures} of {total} README commands work as written")
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
