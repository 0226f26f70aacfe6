"""pto.Error and the parsing of the tools' diagnostics into records (docs/python.md)."""
import re
from typing import List, NamedTuple, Optional


class Diagnostic(NamedTuple):
    """One report of a tool: where (None when the report has no place) and what."""

    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    severity: str  # "error", "warning", "note" or "fatal"
    message: str


_TOOL = r"(?:pto-(?:as|ld|run): )?"
_SEVERITY = r"(?P<sev>error|warning|note|fatal|runtime error)"
# "file:12:5: error: message" (pto-as, the runtime), optionally after the tool's name.
_LOCATED = re.compile(_TOOL + r"(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): " + _SEVERITY + r": (?P<msg>.*)$")
# "file: error: message", "pto-ld: error: message", "note: called from ...".
_PLAIN = re.compile(_TOOL + r"(?:(?P<file>[^:]+?): )?" + _SEVERITY + r": (?P<msg>.*)$")
# pto-ld puts the place inside the message: "error: k.pto:3:5: message (in @k, k.o)".
_PLACE_IN_MESSAGE = re.compile(r"(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
# The caret line under a quoted source line.
_CARET = re.compile(r"^[ \t]*(?:\.\.\.)?[ \t]*\^~*$")


def _severity(text: str) -> str:
    return "error" if text == "runtime error" else text


def parse_diagnostics(text: str) -> List[Diagnostic]:
    """The reports in `text` as the tools print them: each header line is one record; the quoted
    source line and its caret after a located report, and closing lines such as
    "1 error generated.", are not records."""
    lines = text.split("\n")
    out: List[Diagnostic] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = _LOCATED.match(line)
        if m:
            out.append(Diagnostic(m["file"], int(m["line"]), int(m["col"]), _severity(m["sev"]), m["msg"]))
            if i + 1 < len(lines) and _CARET.match(lines[i + 1]):
                i += 2  # the source line and its caret
            continue
        m = _PLAIN.match(line)
        if not m:
            continue
        msg, file = m["msg"], m["file"]
        place = _PLACE_IN_MESSAGE.match(msg) if file is None else None
        if place:
            out.append(Diagnostic(place["file"], int(place["line"]), int(place["col"]), _severity(m["sev"]), place["msg"]))
        else:
            out.append(Diagnostic(file, None, None, _severity(m["sev"]), msg))
    return out


class Error(Exception):
    """A failure of pto-as, pto-ld or pto-run, or bad input to a run. str() is the diagnostics
    exactly as the tool prints them; .diagnostics lists them as Diagnostic records."""

    def __init__(self, text: str, diagnostics: Optional[List[Diagnostic]] = None):
        super().__init__(text)
        self.text = text
        self.diagnostics = diagnostics if diagnostics is not None else parse_diagnostics(text)

    def __str__(self) -> str:
        return self.text
