#!/usr/bin/env python3
"""Development aid: recompute every NAME.expect.json of the VM conformance corpus.

NOT used by the project's tests (they only read the committed .expect.json files).
Expected values come from the independent Python model of Miden VM v0.16
(/work/shared/tools/masm_model, override with $MASM_MODEL_DIR):

    python3 tests/testdata/vm/regen.py [--check] [--stage3] [PATTERN...]

* A program is every NAME.masm below vm/ (or vm_stage3/) that is not inside the top-level
  ``libs/`` folder (those are library modules, linked with "libs" from the expect file).
* Inputs: NAME.inputs (miden-vm JSON, operand_stack last = top) or NAME.toml (miden-debug
  TOML, [inputs] stack leftmost = top); TOML is converted to the JSON form for the model.
* v0.20 surface syntax (``pub proc``, ``proc name``, ``@locals(N)``, ``const X = e``,
  ``use a::b``) is not understood by the model; it is desugared to the classic form
  line-for-line before the program is handed to the model.
* For execution errors "cycles" (clk of the failing operation's row) is only written when
  the existing expect file has it; it is left out for errors raised by control-flow rows
  (SPLIT/LOOP/END of CALL), the cycle cap and the end-of-program depth check.
* Hand-written fields of an existing expect file are kept: "error" (the stable substring the
  project's VM must report), "line"/"col" (1-based position of the offending token of an
  assembly error), "libs", "max_cycles", "kernel".  For failing programs only "cycles" (clk of the
  failing row, execution errors only) is recomputed; the model message is printed when it
  does not contain the substring (the substrings follow upstream miden-vm wording where the
  model's wording differs).
* --check: do not write, report differences (exit 1 if any).
"""
import glob
import json
import os
import re
import sys
import tempfile
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.environ.get("MASM_MODEL_DIR", "/work/shared/tools")
sys.path.insert(0, MODEL_DIR)
from masm_model.cli import run_program  # noqa: E402
from masm_model.assembler import AssemblyError  # noqa: E402
from masm_model.lexer import MasmSyntaxError  # noqa: E402
from masm_model.inputs import InputsError  # noqa: E402
from masm_model.vm import ExecutionError  # noqa: E402

KEEP = ("error", "line", "col", "libs", "max_cycles", "kernel")


def desugar(src):
    """v0.20 surface syntax -> classic v0.16 syntax, preserving line numbers."""
    out = []
    pending_locals = None
    for line in src.split("\n"):
        m = re.match(r"^(\s*)@locals\((\d+)\)\s*$", line)
        if m:
            pending_locals = m.group(2)
            out.append("")
            continue
        m = re.match(r"^(\s*)(pub\s+)?proc\s+([A-Za-z_][A-Za-z0-9_]*)(.*)$", line)
        if m:
            kw = "export" if m.group(2) else "proc"
            name = m.group(3)
            if pending_locals is not None:
                name += "." + pending_locals
                pending_locals = None
            line = "%s%s.%s%s" % (m.group(1), kw, name, m.group(4))
        m = re.match(r"^(\s*)(pub\s+)?const\s+([A-Z_][A-Z0-9_]*)\s*=\s*(.*?)\s*$", line)
        if m:
            line = "%sconst.%s=%s" % (m.group(1), m.group(3), m.group(4).replace(" ", ""))
        m = re.match(r"^(\s*)use\s+([A-Za-z_][\w:]*(->\w+)?)\s*$", line)
        if m:
            line = "%suse.%s" % (m.group(1), m.group(2))
        out.append(line)
    return "\n".join(out)


_LIBCOPIES = {}


def desugared_copy(libdir):
    """Temporary copy of a library folder with every module desugared (see desugar)."""
    if libdir not in _LIBCOPIES:
        tmp = tempfile.mkdtemp(prefix="vmlib_")
        for p in glob.glob(os.path.join(libdir, "**", "*.masm"), recursive=True):
            dst = os.path.join(tmp, os.path.relpath(p, libdir))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(p) as f, open(dst, "w") as g:
                g.write(desugar(f.read()))
        _LIBCOPIES[libdir] = tmp
    return _LIBCOPIES[libdir]


def load_inputs_for(prog):
    base = prog[:-len(".masm")]
    if os.path.isfile(base + ".inputs"):
        with open(base + ".inputs") as f:
            return json.load(f)
    if os.path.isfile(base + ".toml"):
        with open(base + ".toml", "rb") as f:
            t = tomllib.load(f)
        inp = t.get("inputs", {})
        data = {"operand_stack": [str(v) for v in reversed(inp.get("stack", []))]}
        adv = inp.get("advice", {})
        data["advice_stack"] = [str(v) for v in adv.get("stack", [])]
        amap = {}
        for e in adv.get("map", []):
            d = e["digest"]
            amap[d[2:] if d.startswith("0x") else d] = [int(v) for v in e["values"]]
        data["advice_map"] = amap
        return data
    return None


def programs(root):
    res = []
    for p in sorted(glob.glob(os.path.join(root, "**", "*.masm"), recursive=True)):
        rel = os.path.relpath(p, root)
        if rel.split(os.sep)[0] == "libs":
            continue
        res.append(p)
    return res


def compute(prog, old):
    with open(prog) as f:
        src = desugar(f.read())
    libs = {}
    for ns, d in (old.get("libs") or {}).items():
        libs[ns] = desugared_copy(os.path.normpath(os.path.join(os.path.dirname(prog), d)))
    try:
        kernel = old.get("kernel")
        if kernel is not None:
            kernel = os.path.normpath(os.path.join(os.path.dirname(prog), kernel))
        r = run_program(src, libs=libs, source_name=prog, inputs_data=load_inputs_for(prog) or {},
                        max_cycles=old.get("max_cycles"), kernel=kernel)
        new = {"stack": r["stack"], "cycles": r["cycles"]}
        msg = None
    except (AssemblyError, MasmSyntaxError, InputsError) as e:
        new, msg = {"error": "assembly"}, "assembly: %s" % e
    except ExecutionError as e:
        new, msg = {"error": "execution"}, "execution: %s" % e
        # "cycles" of a failing program = clk of the failing row; only kept when the expect
        # file asks for it (errors raised by control-flow rows or at program end carry none)
        if "cycles" in old:
            new["cycles"] = e.clk if e.clk is not None else old["cycles"]
    for k in KEEP:
        if k in old and not (k == "error" and "error" not in new):
            new[k] = old[k]
    if msg is not None and "error" in old and old["error"].lower() not in msg.lower():
        print("  note %s: model says %r" % (os.path.relpath(prog, HERE), msg))
    if msg is not None and "error" not in old:
        print("  UNEXPECTED FAILURE %s: %s (expect file not written)" % (os.path.relpath(prog, HERE), msg))
        return None
    if msg is None and "error" in old:
        print("  EXPECTED FAILURE BUT SUCCEEDED %s" % os.path.relpath(prog, HERE))
    return new


def order(d):
    keys = ["stack", "error", "cycles", "line", "col", "max_cycles", "libs", "kernel"]
    return {k: d[k] for k in keys if k in d}


def main(argv):
    check = "--check" in argv
    roots = [HERE]
    if "--stage3" in argv:
        roots.append(os.path.join(os.path.dirname(HERE), "vm_stage3"))
    pats = [a for a in argv if not a.startswith("--")]
    diffs = 0
    n = 0
    for root in roots:
        for prog in programs(root):
            if pats and not any(p in prog for p in pats):
                continue
            n += 1
            exp = prog[:-len(".masm")] + ".expect.json"
            old = {}
            if os.path.isfile(exp):
                with open(exp) as f:
                    old = json.load(f)
            new = compute(prog, old)
            if new is None:
                diffs += 1
                continue
            new = order(new)
            if new != order(old):
                diffs += 1
                if check:
                    print("DIFF %s: %s -> %s" % (os.path.relpath(prog, HERE), old, new))
                else:
                    with open(exp, "w") as f:
                        f.write(json.dumps(new) + "\n")
    print("%d programs, %d %s" % (n, diffs, "differ" if check else "written"))
    return 1 if (check and diffs) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
