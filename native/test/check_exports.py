"""Checks libsluice's exported symbols against its headers (docs/architecture.md, Build:
"libsluice exports only what its headers mark").

The library is built with hidden visibility, so a symbol leaves it only when its declaration in
include/sluice/ carries SLUICE_EXPORT. This compares what the built library exports (nm -D) with
what the headers mark, both ways:

- C: the sluice_* functions the library exports are exactly those sluice.h marks.
- C++: every exported symbol of namespace sluice belongs to a class or function a header marks,
  and none to sluice::internal or an anonymous namespace; every marked name exports something.

Symbols of other namespaces (std:: and arrow:: templates instantiated in the library) are not
the library's surface and are not looked at.

Usage: check_exports.py LIBSLUICE_SO INCLUDE_DIR
"""

import pathlib
import re
import subprocess
import sys

MARKED_CLASS = re.compile(r"\b(?:class|struct)\s+(?:\[\[\w+\]\]\s+)?SLUICE_EXPORT\s+(\w+)")
MARKED_FUNCTION = re.compile(r"SLUICE_EXPORT\s+[^;{()]*?\b(\w+)\s*\(", re.S)
# What nm's demangler puts before an entity for the data the compiler makes for it.
SPECIAL_PREFIXES = ("vtable for ", "typeinfo for ", "typeinfo name for ", "VTT for ",
                    "guard variable for ", "non-virtual thunk to ", "virtual thunk to ")


def marked_names(include_dir):
    """The C functions and the C++ names the headers mark SLUICE_EXPORT."""
    c_functions, cxx_names = set(), set()
    for header in sorted(pathlib.Path(include_dir).glob("*.h")):
        if header.name == "export.h":
            continue
        text = header.read_text()
        cxx_names.update(MARKED_CLASS.findall(text))
        for name in MARKED_FUNCTION.findall(text):
            (c_functions if name.startswith("sluice_") else cxx_names).add(name)
    return c_functions, cxx_names


def exported_symbols(library):
    """The names the library's dynamic symbol table defines, raw and demangled."""
    raw = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", library],
                         check=True, capture_output=True, text=True).stdout.split("\n")
    names = [line.split()[0] for line in raw if line.strip()]
    demangled = subprocess.run(["c++filt"], input="\n".join(names), check=True,
                               capture_output=True, text=True).stdout.split("\n")
    return list(zip(names, demangled))


def qualified_components(demangled):
    """sluice::SegmentWriter::Create(...) -> ["sluice", "SegmentWriter", "Create"]."""
    for prefix in SPECIAL_PREFIXES:
        if demangled.startswith(prefix):
            demangled = demangled[len(prefix):]
    demangled = demangled.replace("(anonymous namespace)", "{anonymous}")
    demangled = re.sub(r"\[abi:\w+\]", "", demangled)
    depth, entity = 0, []
    for ch in demangled:  # drops template arguments, stops at the parameter list
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            if ch == "(":
                break
            entity.append(ch)
    # A function template's instance starts with its return type.
    return "".join(entity).split(" ")[-1].split("::")


def main(library, include_dir):
    c_functions, cxx_names = marked_names(include_dir)
    problems, exported_c, cxx_seen = [], set(), set()
    for raw, demangled in exported_symbols(library):
        if raw.startswith("sluice_"):
            exported_c.add(raw)
            continue
        parts = qualified_components(demangled)
        if parts[0] != "sluice":
            continue
        if "internal" in parts or "{anonymous}" in parts:
            problems.append(f"exported, but internal: {demangled}")
        elif not cxx_names.intersection(parts):
            problems.append(f"exported, but no header marks it SLUICE_EXPORT: {demangled}")
        cxx_seen.update(parts)
    for name in sorted(exported_c - c_functions):
        problems.append(f"exported, but not declared SLUICE_EXPORT in sluice.h: {name}")
    for name in sorted(c_functions - exported_c):
        problems.append(f"marked SLUICE_EXPORT in sluice.h, but not exported: {name}")
    for name in sorted(cxx_names - cxx_seen):
        problems.append(f"marked SLUICE_EXPORT in include/sluice, but nothing exported: {name}")
    for problem in problems:
        print(problem)
    print(f"{len(exported_c)} C functions and {len(cxx_names)} C++ names checked, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
