#!/usr/bin/env python3
"""Checks the module layering of src/ without a build (docs/architecture.md, "Module dependencies").

Each folder src/<module>/ declares what it depends on in its CMakeLists.txt:
sluice_module(<module> DEPS sluice_<dep> ...) or, for the app, sluice_executable(<target> DEPS ...).
A module may include its own headers and those of the modules it depends on, directly or through
their DEPS; nothing else. This script reads the declarations, fails on an unknown module or a
dependency cycle, then scans src/<module>/*.cc and *.h for #include lines and fails on every
include of a module outside the allowed set, naming file:line and the rule broken. The build
enforces the same rule (cmake/Sluice.cmake gives each module an include root that holds only the
modules it may include); this check is cheap, so scripts/test.sh runs it before building.

  scripts/check_module_deps.py            # exit 0: no violation; 1: violations (printed)
  scripts/check_module_deps.py --print    # also print each module's declared and allowed deps
"""

import argparse
import os
import re
import sys

CALL_RE = re.compile(r"\b(sluice_module|sluice_executable)\s*\(([^)]*)\)", re.S)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
SOURCE_EXTS = (".cc", ".h")
# The top of the layering: only app (the executable, which nothing links) may depend on these.
TOP_MODULES = ("cli", "proxy")
APP = "app"


def strip_cmake_comments(text):
    # Good enough for these files: no '#' inside quoted arguments.
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def read_declarations(src, modules, errors):
    """Returns {module: [declared module deps]} from src/<module>/CMakeLists.txt."""
    deps = {}
    for mod in modules:
        path = os.path.join(src, mod, "CMakeLists.txt")
        with open(path, encoding="utf-8") as f:
            text = strip_cmake_comments(f.read())
        calls = CALL_RE.findall(text)
        rel = os.path.relpath(path)
        if len(calls) != 1:
            errors.append(f"{rel}: expected one sluice_module() or sluice_executable() call, "
                          f"found {len(calls)}")
            deps[mod] = []
            continue
        kind, args = calls[0]
        words = args.split()
        if kind == "sluice_module" and (not words or words[0] != mod):
            errors.append(f"{rel}: sluice_module({words[0] if words else ''}) in folder "
                          f"src/{mod}: a module is named after its folder")
        declared = []
        if "DEPS" in words:
            for word in words[words.index("DEPS") + 1:]:
                m = re.fullmatch(r"sluice_(\w+)", word)
                if not m:
                    continue  # fmt::fmt, Threads::Threads, ...
                dep = m.group(1)
                if dep not in modules:
                    errors.append(f"{rel}: DEPS names {word}, but there is no src/{dep}/")
                elif dep == mod:
                    errors.append(f"{rel}: {mod} lists itself in DEPS")
                elif dep not in declared:
                    declared.append(dep)
        deps[mod] = declared
    return deps


def find_cycle(deps):
    """Returns one dependency cycle as a list [a, b, ..., a], or None."""
    state = {}  # 1: on the current path, 2: done
    path = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for d in deps.get(m, []):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state:
                cycle = visit(d)
                if cycle:
                    return cycle
        path.pop()
        state[m] = 2
        return None

    for m in sorted(deps):
        if m not in state:
            cycle = visit(m)
            if cycle:
                return cycle
    return None


def closure(deps, mod):
    seen = {mod}
    todo = [mod]
    while todo:
        for d in deps.get(todo.pop(), []):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def included_module(src, modules, file_dir, bracket, name):
    """The module an #include names, or None when it names no module (system, fmt, gtest)."""
    if bracket == '"':
        # The compiler looks next to the including file first: "../proxy/x.h" or "x.h".
        local = os.path.normpath(os.path.join(file_dir, name))
        if os.path.exists(local):
            rel = os.path.relpath(local, src)
            if rel.startswith(".."):
                return None
            return rel.split(os.sep, 1)[0]
    first = name.split("/", 1)[0]
    if "/" not in name or first not in modules:
        return None
    if bracket == "<" and not os.path.exists(os.path.join(src, name)):
        return None  # <net/if.h> is the system's, not src/net's
    return first


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="repository root (default: the one holding this script)")
    parser.add_argument("--print", action="store_true", dest="print_layers",
                        help="print each module's declared and allowed dependencies")
    args = parser.parse_args()

    root = os.path.abspath(args.root)
    os.chdir(root)
    src = os.path.join(root, "src")
    modules = sorted(d for d in os.listdir(src)
                     if os.path.isfile(os.path.join(src, d, "CMakeLists.txt")))
    errors = []
    deps = read_declarations(src, modules, errors)

    for mod in modules:
        for dep in deps[mod]:
            if dep == APP or (dep in TOP_MODULES and mod != APP):
                errors.append(f"src/{mod}/CMakeLists.txt: {mod} declares sluice_{dep}, but only "
                              f"{APP} may depend on {', '.join(TOP_MODULES)}, and nothing on "
                              f"{APP}")

    cycle = find_cycle(deps)
    if cycle:
        errors.append("dependency cycle: " + " -> ".join(cycle) +
                      " (a module may depend only on modules below it)")

    allowed = {m: closure(deps, m) for m in modules}
    if args.print_layers:
        for m in sorted(modules, key=lambda m: (len(allowed[m]), m)):
            print(f"{m:8} DEPS {', '.join(deps[m]) or '-':40} may include: "
                  f"{', '.join(sorted(allowed[m]))}")

    violations = 0
    for mod in modules:
        mod_dir = os.path.join(src, mod)
        for dirpath, _, files in os.walk(mod_dir):
            for fname in sorted(files):
                if not fname.endswith(SOURCE_EXTS):
                    continue
                path = os.path.join(dirpath, fname)
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.readlines()
                for lineno, line in enumerate(lines, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    bracket, name = m.groups()
                    target = included_module(src, modules, dirpath, bracket, name)
                    if target is None or target in allowed[mod]:
                        continue
                    violations += 1
                    if target == APP or (target in TOP_MODULES and mod != APP):
                        fix = f"only {APP} may use {target}"
                    else:
                        fix = f"declare sluice_{target} if {mod} may sit above {target}"
                    errors.append(
                        f"{os.path.relpath(path)}:{lineno}: {mod} includes \"{name}\", but "
                        f"{target} is not among its dependencies (src/{mod}/CMakeLists.txt "
                        f"DEPS, directly or through their DEPS: "
                        f"{', '.join(sorted(allowed[mod] - {mod})) or 'none'}). Use only "
                        f"those, or {fix}.")

    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check_module_deps: {len(errors)} problem(s), {violations} forbidden include(s); "
              "the rules are in docs/architecture.md, \"Module dependencies\"", file=sys.stderr)
        return 1
    print(f"check_module_deps: {len(modules)} modules, no forbidden include, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
