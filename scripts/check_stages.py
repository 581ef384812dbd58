#!/usr/bin/env python3
"""Checks that the code keeps the structure DEVELOPERS.md declares (run by scripts/test.sh).

1. Stage graph: the ```stages block of DEVELOPERS.md lists each stage, lowest first, with
   the stages it may include. For every stage, that list must equal both the stages
   CMakeLists.txt links it to and the stages whose public headers its code includes
   (src/<stage>/ and include/vlbias/<stage>/), and name only stages listed before it.
2. Private headers stay private: a quoted include without the "vlbias/" prefix must name a
   header of the including file's own stage folder (subfolders included: src/audits/geo/ is
   the audits stage's; the path from the file's folder or from src/<stage>/) (tests: their own folder, tests/, or
   the stage's src folder); public headers include only public headers.
3. Namespaces: public headers declare into vlbias or a public family (vlbias::stats,
   vlbias::unicode, vlbias::yaml); private headers only into vlbias::<stage>_internal;
   sources into those, or an anonymous namespace.
4. Sizes: no function body over 120 lines, no file over 600 lines in src/ and include/
   (generated tables excepted).
5. No file name ending in _spec.cpp/_spec.h (tools read those as test files).
6. Copies of the graph: the plain graphs in README.md and docs/design.md ("    audits -> ...")
   equal the stages block, and docs/design.md's table of stages lists its stages in order; the
   Python module (python/CMakeLists.txt) links exactly the stages whose public headers python/
   includes.
7. Audit kinds as rooms: a file of src/audits/<kind>/ includes neither audit.h (the whole spec,
   every kind) nor audit_kind.h, except the kind's <kind>_audit_kind.cpp, which makes the kind's
   row of the table of kinds; and no file of one kind's folder includes another kind's public
   (vlbias/audits/<other>_audit.h) or private (<other>_audit_*.h) header.
8. References: every repository path named in a C++ comment, a tools/ script or a document
   (README.md, DEVELOPERS.md, docs/) exists (a * in it matches at least one file).

Prints one line per violation and exits 1 if there is any. Usage: check_stages.py [ROOT]
"""
import pathlib
import re
import sys

MAX_FUNCTION_LINES = 120
MAX_FILE_LINES = 600
GENERATED = {"src/text/unicode_tables.cpp"}
PUBLIC_FAMILIES = {"vlbias", "vlbias::stats", "vlbias::unicode", "vlbias::yaml"}
# Third-party namespaces a stage's source files and private headers may open, only to specialize
# that library's traits for our types: dlib::image_traits, so that dlib reads RgbImage in place
# (src/faces/dlib_image_views.h).
THIRD_PARTY_TRAITS = {"faces": {"dlib"}}
# Test helpers shared by several stages' tests that read a stage's private header on purpose:
# the report checks parse numbers exactly as the page formats them.
TEST_HELPER_STAGES = {"tests/report_checks.h": "report"}

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
problems = []


def rel(path):
    return str(path.relative_to(root))


def read_declared_stages():
    text = (root / "DEVELOPERS.md").read_text()
    block = re.search(r"```stages\n(.*?)```", text, re.S)
    if not block:
        problems.append("DEVELOPERS.md: no ```stages block")
        return {}
    declared = {}
    for line in block.group(1).splitlines():
        line = re.sub(r"\(.*?\)", "", line).strip()
        if not line:
            continue
        name, _, deps = line.partition(":")
        declared[name.strip()] = deps.split()
    order = list(declared)
    for stage, deps in declared.items():
        for dep in deps:
            if dep not in declared or order.index(dep) >= order.index(stage):
                problems.append(f"DEVELOPERS.md: stage {stage} lists {dep}, which is not a stage "
                                f"listed before it")
    return declared


def read_cmake_links(stages):
    text = (root / "CMakeLists.txt").read_text()
    links = {}
    for m in re.finditer(r"vlbias_stage\((\w+)\s+(\w+)([^)]*)\)", text):
        stage = m.group(2)
        links[stage] = sorted({t[len("vlbias_"):] for t in m.group(3).split()
                               if t.startswith("vlbias_") and t[len("vlbias_"):] in stages})
    return links


def strip_comments_and_strings(code):
    """Blanks comments and string/char literals, keeping line breaks."""
    out, i, n = [], 0, len(code)
    while i < n:
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", code[i:j]))
        elif code.startswith('R"', i) and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', code[i:])
            end = code.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", code[i:j]))
        elif code[i] in "\"'":
            q, j = code[i], i + 1
            while j < n and code[j] != q and code[j] != "\n":
                j += 2 if code[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(q + " " * (j - i - 2) + q if j - i >= 2 else code[i:j])
        else:
            j = i + 1
            out.append(code[i])
        i = j
    return "".join(out)


CONTROL = re.compile(r"(if|for|while|switch|catch|else|do|try)\b")
FUNCTION_HEAD = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>, ]+)?\s*\{")


def check_sizes(path, code):
    lines = code.split("\n")
    if rel(path) in GENERATED:
        return
    if len(lines) - 1 > MAX_FILE_LINES:
        problems.append(f"{rel(path)}: {len(lines) - 1} lines (at most {MAX_FILE_LINES})")
    stack = []
    for number, line in enumerate(lines, 1):
        for ch in line:
            if ch == "{":
                stack.append((number, line.strip()))
            elif ch == "}" and stack:
                start, head = stack.pop()
                before_paren = head.split("(")[0]
                if (FUNCTION_HEAD.search(head) and not CONTROL.match(head) and "[" not in before_paren
                        and "= " not in before_paren and number - start + 1 > MAX_FUNCTION_LINES):
                    problems.append(f"{rel(path)}:{start}: function of {number - start + 1} lines "
                                    f"(at most {MAX_FUNCTION_LINES}): {head[:70]}")


FORWARD_DECLARATIONS = re.compile(r"\bnamespace\s+\w+\s*\{(\s*(class|struct)\s+\w+\s*;)+\s*\}")


def opened_namespaces(code):
    """Fully qualified names of the namespaces a file opens ("" = anonymous); blocks that only
    forward-declare a third-party class (namespace CLI { class App; }) do not count."""
    code = FORWARD_DECLARATIONS.sub("", code)
    names, stack = [], []
    for m in re.finditer(r"\bnamespace\s*([\w:]*)\s*\{|[{}]", code):
        token = m.group(0)
        if token.startswith("namespace"):
            inner = [s for s in stack if s is not None]
            full = "::".join(inner + [m.group(1)]) if m.group(1) else ""
            names.append(full)
            stack.append(m.group(1) if m.group(1) else None)
        elif token == "{":
            stack.append(None)
        elif stack:
            stack.pop()
    return names


def check_namespaces(path, code, stage, kind):
    internal = f"vlbias::{stage}_internal"
    for name in opened_namespaces(code):
        if name == "" and kind != "public":
            continue
        private_ok = name == internal or name.startswith(internal + "::") or name == "vlbias"
        if kind == "public":
            ok = name in PUBLIC_FAMILIES
        elif kind == "private":
            ok = private_ok or name in THIRD_PARTY_TRAITS.get(stage, set())
        else:
            ok = (private_ok or name in PUBLIC_FAMILIES or
                  name in THIRD_PARTY_TRAITS.get(stage, set()))
        if not ok:
            problems.append(f"{rel(path)}: namespace '{name or 'anonymous'}' (a {kind} file of "
                            f"stage {stage} declares into "
                            f"{'vlbias or its public families' if kind == 'public' else internal}"
                            f"{' or vlbias' if kind == 'source' else ''})")


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def stages_included(code, stages):
    """The stages whose public headers (vlbias/<stage>/...) the code includes."""
    return {m.group(1) for inc in INCLUDE.findall(code)
            for m in [re.match(r"vlbias/(\w+)/", inc)] if m and m.group(1) in stages}


def report_mismatch(used, wanted, extra_message, missing_message):
    """One problem for the stages used but not wanted, one for those wanted but not used; each
    message's {} receives the stage names."""
    if used - wanted:
        problems.append(extra_message.format(" ".join(sorted(used - wanted))))
    if wanted - used:
        problems.append(missing_message.format(" ".join(sorted(wanted - used))))


def check_stage_files(stage, stages):
    used = set()
    folders = [(root / "src" / stage, "src"), (root / "include" / "vlbias" / stage, "public")]
    for folder, where in folders:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if path.suffix not in (".h", ".cpp"):
                continue
            raw = path.read_text(errors="replace")
            for inc in INCLUDE.findall(raw):
                m = re.match(r"vlbias/(\w+)/", inc)
                if m and m.group(1) in stages:
                    if m.group(1) != stage:
                        used.add(m.group(1))
                elif inc.startswith("vlbias/"):
                    pass  # generated top-level headers (vlbias/version.h)
                elif where == "public":
                    problems.append(f"{rel(path)}: public header includes \"{inc}\", which is "
                                    f"not a public header")
                elif not (path.parent / inc).is_file() and not (root / "src" / stage / inc).is_file():
                    problems.append(f"{rel(path)}: includes \"{inc}\", which is not a header of "
                                    f"src/{stage}/ (another stage's private header?)")
            code = strip_comments_and_strings(raw)
            kind = "public" if where == "public" else ("private" if path.suffix == ".h" else "source")
            check_namespaces(path, code, stage, kind)
            check_sizes(path, code)
    return sorted(used)


def check_audit_rooms():
    audits = root / "src" / "audits"
    rooms = sorted(p for p in audits.iterdir() if p.is_dir()) if audits.is_dir() else []
    names = {p.name for p in rooms}
    for room in rooms:
        for path in sorted(room.rglob("*")):
            if path.suffix not in (".h", ".cpp"):
                continue
            for inc in INCLUDE.findall(path.read_text(errors="replace")):
                base = inc.rsplit("/", 1)[-1]
                if base in ("audit.h", "audit_kind.h") and not path.name.endswith("_kind.cpp"):
                    problems.append(f"{rel(path)}: includes \"{inc}\"; a kind's code reads "
                                    f"AuditCommonSpec and its own spec (only its *_kind.cpp "
                                    f"sees the whole AuditSpec)")
                other = [n for n in names - {room.name}
                         if base == f"{n}_audit.h" or base.startswith(f"{n}_audit_")
                         or base == f"{n}.h" or base.startswith(f"{n}_internal")]
                if other:
                    problems.append(f"{rel(path)}: includes \"{inc}\", a header of the "
                                    f"{other[0]} kind (src/audits/{other[0]}/); what kinds share "
                                    f"lives in src/audits/")


def check_tests(stages):
    tests = root / "tests"
    for path in sorted(tests.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        parts = path.relative_to(tests).parts
        stage = parts[0] if len(parts) > 1 and parts[0] in stages else None
        stage = TEST_HELPER_STAGES.get(rel(path), stage)
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            if inc.startswith("vlbias/") or (path.parent / inc).is_file() or (tests / inc).is_file():
                continue
            if stage and (root / "src" / stage / inc).is_file():
                continue
            problems.append(f"{rel(path)}: includes \"{inc}\", which is neither a test helper nor "
                            f"a private header of {'src/' + stage if stage else 'its stage'}")


REFERENCE = re.compile(r"(?<![\w/.])((?:src|include|tests|tools|bench|fuzz|docs|data|examples|scripts|"
                       r"python)/[\w./*-]+\.(?:cpp|h|py|md|csv|json|sh|yaml|jsonl|txt|npy))(?!\w)")


def check_references(stages):
    files = [root / "README.md", root / "DEVELOPERS.md"]
    for top in ("src", "include", "tests", "tools", "bench", "fuzz", "docs", "python", "scripts"):
        files += sorted(p for p in (root / top).rglob("*")
                        if p.suffix in (".cpp", ".h", ".py", ".md", ".sh"))
    for path in files:
        for number, line in enumerate(path.read_text(errors="replace").split("\n"), 1):
            if path.suffix in (".cpp", ".h"):
                if "//" not in line:
                    continue
                line = line[line.index("//"):]  # comments only: tests name missing files on purpose
            for ref in REFERENCE.findall(line):
                parts = ref.split("/")
                if parts[0] == "src" and parts[1] not in stages and parts[1] != "main.cpp":
                    continue  # another project's file (src/PIL/..., src/open_clip/...)
                if not list(root.glob(ref)):
                    problems.append(f"{rel(path)}:{number}: names {ref}, which does not exist")


GRAPH_LINE = re.compile(r"^    (\w+)\s*(?:->\s*(.*))?$")


def check_graph_copies(declared):
    """README.md and docs/design.md show the graph as indented "stage -> deps" lines."""
    want = [(stage, sorted(deps)) for stage, deps in declared.items()]
    for name in ("README.md", "docs/design.md"):
        lines = (root / name).read_text().split("\n")
        starts = [i for i, line in enumerate(lines) if line == "    core"]
        if not starts:
            problems.append(f"{name}: no copy of the stage graph (an indented line \"core\")")
        for start in starts:
            copy = []
            for line in lines[start:]:
                m = GRAPH_LINE.match(line)
                if not m:
                    break
                deps = [d.strip() for d in (m.group(2) or "").split(",") if d.strip()]
                copy.append((m.group(1), sorted(deps)))
            if copy != want:
                differ = [f"{s}" for s, d in copy if dict(want).get(s) != d]
                missing = [s for s, _ in want if s not in dict(copy)]
                problems.append(f"{name}:{start + 1}: the stage graph differs from DEVELOPERS.md's "
                                f"stages block (stages {' '.join(differ + missing) or 'in order'})")


def check_stage_table(declared):
    """docs/design.md's table of stages ("| stage | what it holds | ... |") lists every stage of
    the stages block, in its order."""
    text = (root / "docs" / "design.md").read_text()
    section = re.search(r"\n## Stages\n(.*?)\n## ", text, re.S)
    rows = re.findall(r"^\| (\w+) \|", section.group(1), re.M) if section else []
    rows = [r for r in rows if r != "Stage"]
    if rows != list(declared):
        missing = [s for s in declared if s not in rows]
        extra = [s for s in rows if s not in declared]
        problems.append(f"docs/design.md: the table of stages differs from DEVELOPERS.md's stages "
                        f"block (missing: {' '.join(missing) or 'none'}; not stages: "
                        f"{' '.join(extra) or 'none'}; else the order)")


def check_python_links(stages):
    text = (root / "python" / "CMakeLists.txt").read_text()
    m = re.search(r"target_link_libraries\(_vlbias\s+PRIVATE([^)]*)\)", text)
    if not m:
        problems.append("python/CMakeLists.txt: no target_link_libraries(_vlbias PRIVATE ...)")
        return
    linked = {t[len("vlbias_"):] for t in m.group(1).split() if t.startswith("vlbias_")}
    used = set()
    for path in sorted((root / "python").glob("*")):
        if path.suffix in (".cpp", ".h"):
            used |= stages_included(path.read_text(errors="replace"), stages)
    report_mismatch(used, linked, f"python/CMakeLists.txt: python/ includes headers of {{}}, "
                    f"which the module does not link", f"python/CMakeLists.txt: links {{}}, whose "
                    f"headers no file of python/ includes")

def main():
    declared = read_declared_stages()
    stages = set(declared)
    on_disk = {p.name for p in (root / "src").iterdir() if p.is_dir()}
    for missing in sorted(on_disk - stages):
        problems.append(f"src/{missing}/: a stage folder DEVELOPERS.md's stage list does not name")
    links = read_cmake_links(stages)
    for stage in declared:
        want = sorted(declared[stage])
        if stage not in links:
            problems.append(f"CMakeLists.txt: no vlbias_stage() for stage {stage}")
        elif links[stage] != want:
            problems.append(f"CMakeLists.txt: stage {stage} links {' '.join(links[stage]) or 'none'}"
                            f", DEVELOPERS.md lists {' '.join(want) or 'none'}")
        report_mismatch(set(check_stage_files(stage, stages)), set(want),
                        f"src/{stage}: includes headers of {{}}, which DEVELOPERS.md does not "
                        f"list for it", f"src/{stage}: DEVELOPERS.md lists {{}} for it, but no "
                        f"file of the stage includes their headers")
    check_tests(stages)
    check_audit_rooms()
    check_graph_copies(declared)
    check_stage_table(declared)
    check_python_links(stages)
    check_references(stages)
    for top in ("src", "include", "tests", "bench", "fuzz", "tools", "python"):
        for path in sorted((root / top).rglob("*_spec.*")):
            if path.suffix in (".cpp", ".h", ".cc"):
                problems.append(f"{rel(path)}: a *_spec file name reads as a test to tools")
    for line in problems:
        print(line)
    print(f"check_stages: {len(problems)} problem(s) in {len(declared)} stages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
