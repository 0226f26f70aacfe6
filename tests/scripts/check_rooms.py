#!/usr/bin/env python3
"""Checks the rooms of the source tree (docs/development.md, "Source tree"):
- every #include of a project header in a room's files names a room that room may depend on;
- every library's CMake link dependencies (target_link_libraries) are rooms it may depend on;
- every program's main is under tools/;
- no folder holds more than 25% of the C++ lines in its own files (tests, benches and the .def
  tables aside): the table is printed;
- no function is longer than 120 lines (measured with universal-ctags when it is installed:
  `apt-get install universal-ctags`; without it that check is reported as skipped).
Exits 1 listing each violation."""
import pathlib
import re
import shutil
import subprocess
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
# Rooms without C++ of their own that a library may link: the grammar (generated parser).
LINK_ONLY = {"asm/parse": ["grammar"]}
MAX_SHARE = 0.25
MAX_FUNCTION_LINES = 120
ROOT_FOLDERS = ("support", "isa", "obj", "asm", "link", "runtime", "ref", "export", "python",
                "tools", "grammar")
ADD_LIBRARY = re.compile(r"(?:add_library|pybind11_add_module)\(\s*(\w+)\s+([^)]*)\)", re.S)
LINK = re.compile(r"target_link_libraries\(\s*(\w+)\s+([^)]*)\)", re.S)
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


def library_rooms(root: pathlib.Path):
    """Each pto library of a room's CMakeLists.txt: its room (from its sources' folder) and the
    pto libraries it links. An INTERFACE library (pto_asm) stands for the libraries it links."""
    rooms, links = {}, {}
    for cm in sorted(root.glob("**/CMakeLists.txt")):
        rel = cm.relative_to(root)
        if rel.parts[0] in ("tests", "bench", "build") or rel.parts[0].startswith("build"):
            continue
        text = re.sub(r"#.*", "", cm.read_text())
        folder = rel.parent.as_posix()
        for name, args in ADD_LIBRARY.findall(text):
            words = args.split()
            srcs = [w for w in words if w.endswith(".cpp")]
            if "INTERFACE" in words:
                rooms[name] = None
            elif srcs:
                rooms[name] = room_of(f"{folder}/{srcs[0]}" if folder != "." else srcs[0])
            else:
                rooms[name] = room_of(folder + "/x.cpp") or folder
        for name, args in LINK.findall(text):
            links.setdefault(name, []).extend(w for w in args.split() if w.startswith("pto_"))
    return rooms, links


def check_links(root: pathlib.Path):
    rooms, links = library_rooms(root)

    def expand(lib, seen=()):  # an INTERFACE library's rooms are those of what it links
        if rooms.get(lib, "?") is None:
            return [r for dep in links.get(lib, []) if dep not in seen for r in expand(dep, seen + (lib,))]
        return [rooms.get(lib)]

    problems, checked = [], 0
    for lib, deps in sorted(links.items()):
        room = rooms.get(lib)
        if room is None or room in UNRESTRICTED:
            continue
        for dep in deps:
            for target in expand(dep):
                checked += 1
                if target is None or target == room:
                    continue
                if target not in ALLOWED.get(room, []) + LINK_ONLY.get(room, []):
                    problems.append(f"CMake: {lib} ({room}/) links {dep} ({target}/ is not below it)")
    return problems, checked


def folder_shares(root: pathlib.Path):
    """C++ lines in each folder's own files (not its subfolders'), .def tables aside."""
    own = {}
    for folder in ROOT_FOLDERS:
        for path in (root / folder).rglob("*"):
            if path.suffix not in (".cpp", ".h", ".hpp", ".inc") or not path.is_file():
                continue
            rel = path.relative_to(root).parent.as_posix()
            own[rel] = own.get(rel, 0) + len(path.read_text(errors="replace").splitlines())
    return own


def long_functions(root: pathlib.Path):
    ctags = shutil.which("ctags")
    if not ctags:
        return None
    out = subprocess.run(
        [ctags, "-R", "--languages=C++", "--kinds-C++=f", "--fields=+ne", "-x",
         "--_xformat=%{end} %{line} %F %N"] + [f for f in ROOT_FOLDERS if (root / f).is_dir()],
        cwd=root, capture_output=True, text=True)
    if out.returncode != 0 or "%{end}" in out.stdout:
        return None  # not universal-ctags
    found = []
    for row in out.stdout.splitlines():
        parts = row.split(None, 3)
        if len(parts) == 4 and parts[0].isdigit() and parts[1].isdigit():
            n = int(parts[0]) - int(parts[1]) + 1
            if n > MAX_FUNCTION_LINES:
                found.append(f"{parts[2]}:{parts[1]}: {parts[3]} is {n} lines (at most {MAX_FUNCTION_LINES})")
    return found


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
    link_problems, links_checked = check_links(root)
    problems += link_problems
    own = folder_shares(root)
    total = sum(own.values())
    print(f"{'folder':<16}{'C++ lines':>10}{'share':>8}   with subfolders")
    for folder, n in sorted(own.items(), key=lambda kv: -kv[1]):
        tree = sum(m for f, m in own.items() if f == folder or f.startswith(folder + "/"))
        print(f"{folder:<16}{n:>10}{100.0 * n / total:>7.1f}%   {100.0 * tree / total:5.1f}%")
        if n > MAX_SHARE * total:
            problems.append(f"{folder}/ holds {100.0 * n / total:.1f}% of the C++ lines (at most {MAX_SHARE:.0%})")
    print(f"{'total':<16}{total:>10}")
    functions = long_functions(root)
    if functions is None:
        print("check_rooms: function lengths skipped (universal-ctags is not installed)")
    else:
        problems += functions
    for p in problems:
        print(p)
    print(f"check_rooms: {links_checked} link dependencies checked, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
