"""Python oracle for the resolver-agreement bench: jedi's goto, run as one long-lived process.

Usage: python jedi_oracle.py ROOT
stdin:  one JSON object per line, a batch for one file: {"path": "pkg/mod.py", "sites": [[id, byte], ...]}
        (byte = UTF-8 offset of the segment to resolve, relative to ROOT's file)
stdout: one JSON line per batch: {"path": ..., "results": [[id, [definition, ...]], ...]}
        definition = {"path": relative-to-ROOT or null when outside the tree, "abs": absolute or null,
                      "line": 1-based, "byte": UTF-8 offset in that file, "name", "type"}
        A site that raised inside jedi answers {"error": "..."} instead of a list.
Batches are per file so that one jedi.Script (and its parse/inference caches) serves all of a file's sites.
"""

import json
import os
import sys

import jedi


def main():
    root = os.path.realpath(sys.argv[1])
    project = jedi.Project(root)
    line_starts_cache = {}
    for raw in sys.stdin:
        if not raw.strip():
            continue
        batch = json.loads(raw)
        path = os.path.join(root, batch["path"])
        with open(path, "rb") as f:
            data = f.read()
        code = data.decode("utf-8", errors="replace")
        script = jedi.Script(code, path=path, project=project)
        results = []
        for site_id, byte in batch["sites"]:
            line, column = byte_to_line_column(data, byte)
            try:
                names = script.goto(line, column, follow_imports=True)
                results.append([site_id, [describe(n, root, line_starts_cache) for n in names]])
            except Exception as e:  # jedi bugs on odd code must not sink the whole run
                results.append([site_id, {"error": f"{type(e).__name__}: {e}"}])
        sys.stdout.write(json.dumps({"path": batch["path"], "results": results}) + "\n")
        sys.stdout.flush()


def byte_to_line_column(data, byte):
    """jedi wants a 1-based line and a 0-based column in characters, not bytes."""
    line_start = data.rfind(b"\n", 0, byte) + 1
    line = data.count(b"\n", 0, line_start) + 1
    column = len(data[line_start:byte].decode("utf-8", errors="replace"))
    return line, column


def describe(name, root, cache):
    module_path = str(name.module_path) if name.module_path else None
    abs_path = os.path.realpath(module_path) if module_path else None
    inside = abs_path is not None and abs_path.startswith(root + os.sep)
    line = name.line or 1  # a module's Name has no position: take the file's start
    column = name.column or 0
    byte = None
    if abs_path and os.path.isfile(abs_path):
        byte = line_column_to_byte(abs_path, line, column, cache)
    return {
        "path": os.path.relpath(abs_path, root) if inside else None,
        "abs": abs_path,
        "line": line,
        "byte": byte,
        "name": name.name,
        "type": name.type,
    }


def line_column_to_byte(path, line, column, cache):
    if path not in cache:  # per file: its lines and each line's starting byte
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        lines = text.split("\n")
        starts, offset = [], 0
        for l in lines:
            starts.append(offset)
            offset += len(l.encode("utf-8")) + 1
        cache[path] = (lines, starts)
    lines, starts = cache[path]
    if line - 1 >= len(lines):
        return None
    return starts[line - 1] + len(lines[line - 1][:column].encode("utf-8"))


if __name__ == "__main__":
    main()
