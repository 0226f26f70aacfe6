#!/usr/bin/env python3
"""Checks the rooms of the source tree (docs/development.md, "Rooms"): every #include of a
project header in a room's files names a room that room may depend on, and every program's
main is under tools/. Exits 1 listing each violation as file:line."""
import pathlib
import re
import sys

# Each room and the rooms it may include from (itself always). Rooms are the longest matching
# folder prefix; tests/, bench/ and tools/ may include everything.
ALLOWED = {
    "support": [],
    "isa": ["support"],
    "obj": ["isa", "support"],
    "asm/ir": ["isa", "support"],
    "asm/mc": ["obj", "isa", "support"],
    "asm/parse": ["asm/ir", "isa", "obj", "support"],
    "asm/codegen": ["asm/ir", "asm/mc", "obj", "isa", "support"],
    "link": ["asm/mc", "obj", "isa", "support"],
    "runtime": ["asm/mc", "obj", "isa", "support"],
    "export": ["asm/mc", "obj", "isa", "support"],
    "ref": ["asm/ir", "runtime", "asm/mc", "obj", "isa", "support"],
    "python": ["asm/ir", "asm/parse", "asm/codegen", "asm/mc", "link", "runtime", "ref", "obj",
               "isa", "support"],
}
UNRESTRICTED = ("tools", "tests", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
MAIN = re.compile(r"^\s*int\s+main\s*\(", re.M)


def room_of(rel: str):
    best = None
    for room in list(ALLOWED) + list(UNRESTRICTED):
        if rel == room or rel.startswith(room + "/"):
            if best is None or len(room) > len(best):
                best = room
    return best


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".cpp", ".h", ".inc") or "build" in path.relative_to(root).parts[0]:
            continue
        rel = path.relative_to(root).as_posix()
        room = room_of(rel)
        if room is None or room in UNRESTRICTED:
            continue
        text = path.read_text(errors="replace")
        if MAIN.search(text):
            problems.append(f"{rel}: a main outside tools/")
        for n, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = room_of(m.group(1))
            if target is None or target == room:
                continue  # generated or room-local headers (PTOParser.h, embedded/...)
            if target not in ALLOWED[room]:
                problems.append(f"{rel}:{n}: {room}/ may not include {m.group(1)} ({target}/ is not below it)")
    for p in problems:
        print(p)
    print(f"check_rooms: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
