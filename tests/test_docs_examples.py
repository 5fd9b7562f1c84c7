"""What the docs tell a user to type or look up exists. The docs: README.md, docs/*.md, examples/*/README.md,
benchmarks/README.md and (for names, variables and files) the instrumentors' module docstrings, their manuals.

Checked offline, without running what the docs would run (one exception: docs/ecp.md's ``fold`` session):

- a ```python block compiles; every name it takes from ``otel_agents`` (``from otel_agents.x import y``,
  ``otel_agents.a.b``) resolves and every call of one binds to its signature; so does each instrumentor's
  usage block;
- a ```sh/```bash/```console line: ``otel-agents …`` parses with our argparse parser (subcommand, options,
  values); ``opentelemetry-instrument`` options are the launcher's; ``ecp …`` (ecp-runtime) names its
  command and options; ``pip install 'otel-agents[…]'`` real extras; ``make X`` a Makefile target;
  ``python``/``bash`` a script of the repository. Commands quoted in prose: subcommands and options exist;
- a whole ECP manifest (```yaml) is one ecp-runtime reads, and its target parses;
- every ``--option``, ``otel_agents.…`` name, ``name(...)`` signature of ours and repository path quoted in
  prose exists as quoted;
- every ``OTEL_AGENTS_*`` the docs name is read by the code, and each the code reads has a row in README's
  configuration reference;
- no link goes to a package registry's page instead of the library's docs or repository.

Each failure names the file and the line.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import io
import json
import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("examples/*/README.md")),
        REPO / "benchmarks" / "README.md"]
SHELL = {"sh", "bash", "console", "shell"}
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass
class Block:
    where: str  # "README.md:123": the line of the block's first line of code
    lang: str
    text: str
    line: int  # 1-based line number of the first line of code


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of ``path`` (indented fences in list items too)."""
    found, open_, lines = [], None, path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if not fence:
            continue
        if open_ is None:
            open_ = (number, fence.group(1), fence.group(2))
        else:
            start, indent, lang = open_
            body = [text[len(indent):] if text.startswith(indent) else text for text in lines[start:number - 1]]
            found.append(Block(f"{path.relative_to(REPO)}:{start + 1}", lang, "\n".join(body) + "\n", start + 1))
            open_ = None
    assert open_ is None, f"{path.relative_to(REPO)}:{open_[0]}: a code block is never closed"
    return found


def all_blocks(*langs: str) -> list[Block]:
    return [b for path in DOCS for b in blocks(path) if b.lang in langs]


def _id(block: Block) -> str:
    return block.where


# -- python blocks --------------------------------------------------------------------------------------------


def _resolve(dotted: str):
    """The object ``otel_agents.a.b`` names (modules imported as needed), or raise ``LookupError``."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        if not hasattr(obj, part) and inspect.ismodule(obj):
            with contextlib.suppress(ModuleNotFoundError):
                importlib.import_module(".".join(parts[:i + 1]))
        if not hasattr(obj, part):
            raise LookupError(f"{'.'.join(parts[:i])} has no attribute {part!r}")
        obj = getattr(obj, part)
    return obj


def _resolves(dotted: str) -> bool:
    try:
        _resolve(dotted)
    except (LookupError, ImportError):
        return False
    return True


def _dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """``otel_agents.x.y`` for an ``ast.Name``/``ast.Attribute`` chain that starts at a name bound to ours."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, names)
        return f"{base}.{node.attr}" if base else None
    return None


def python_problems(source: str) -> list[tuple[int, str]]:
    """``(line in the block, problem)`` for each name taken from otel_agents that does not exist, and each call
    of one whose arguments its signature refuses (``await`` at the top level allowed, as in the asyncio REPL)."""
    tree = compile(source, "<doc>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    names = {"otel_agents": "otel_agents"}  # the README's later blocks use it without importing it again
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "otel_agents":
                    if alias.asname:
                        names[alias.asname] = alias.name
                    try:
                        _resolve(alias.name)
                    except (LookupError, ImportError) as exc:
                        problems.append((node.lineno, f"import {alias.name}: {exc}"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "otel_agents":
            for alias in node.names:
                try:
                    _resolve(f"{node.module}.{alias.name}")
                except (LookupError, ImportError) as exc:
                    problems.append((node.lineno, f"from {node.module} import {alias.name}: {exc}"))
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        dotted = _dotted(node, names) if isinstance(node, ast.Attribute) else None
        if dotted and _resolves(dotted.rsplit(".", 1)[0]):  # the shortest chain that does not: reported once
            try:
                _resolve(dotted)
            except (LookupError, ImportError) as exc:
                problems.append((node.lineno, f"{dotted}: {exc}"))
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func, names)
            try:
                target = _resolve(dotted) if dotted else None
            except (LookupError, ImportError):
                continue  # reported above
            if target is None or not callable(target):
                continue
            try:
                signature = inspect.signature(target)
            except (TypeError, ValueError):
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            try:
                signature.bind_partial(*node.args, **{k.arg: k.value for k in node.keywords})
            except TypeError as exc:
                problems.append((node.lineno, f"{dotted}(...): {exc}"))
    return problems


def unbound_names(tree: ast.AST) -> list[tuple[int, str]]:
    """Names a block reads but neither imports, assigns, defines nor gets from builtins: a block copied
    into a script of its own raises ``NameError`` there (``otel_agents.configure(...)`` without ``import
    otel_agents``, a placeholder such as ``my_span_exporter``)."""
    import builtins
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return [(node.lineno, f"{node.id} is never imported or defined in the block")
            for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
            and node.id not in bound]


@pytest.mark.parametrize("block", all_blocks("python"), ids=_id)
def test_python_block_compiles_and_names_what_exists(block: Block) -> None:
    """Each block runs as written when copied into a script of its own: it compiles, every name it reads is
    imported or defined in it, and what it takes from ``otel_agents`` exists."""
    try:
        tree = compile(block.text, block.where, "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as exc:
        pytest.fail(f"{block.where.split(':')[0]}:{block.line + (exc.lineno or 1) - 1}: {exc.msg}")
    problems = unbound_names(tree) + python_problems(block.text)
    assert not problems, "\n".join(f"{block.where.split(':')[0]}:{block.line + n - 1}: {p}" for n, p in problems)


def usage_blocks() -> list[Block]:
    """The first literal block (``::``) of each instrumentor's module docstring: its usage example."""
    found = []
    for path in sorted((REPO / "src" / "otel_agents" / "instrumentors").glob("*/__init__.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        start = next(n for n, line in enumerate(lines) if line.rstrip().endswith("::")) + 1
        while not lines[start].strip():
            start += 1
        end = start
        while end < len(lines) and (not lines[end].strip() or lines[end].startswith("    ")):
            end += 1
        code = "\n".join(line[4:] for line in lines[start:end]) + "\n"
        found.append(Block(f"{path.relative_to(REPO)}:{start + 1}", "python", code, start + 1))
    return found


@pytest.mark.parametrize("block", usage_blocks(), ids=_id)
def test_instrumentor_usage_names_what_exists(block: Block) -> None:
    """An instrumentor's manual opens with its usage: the class it imports exists, ``instrument()`` takes the
    arguments shown."""
    problems = python_problems(block.text)
    assert not problems, "\n".join(f"{block.where.split(':')[0]}:{block.line + n - 1}: {p}" for n, p in problems)
    assert "Instrumentor" in block.text, block.text


# -- command lines --------------------------------------------------------------------------------------------


def _logical_lines(block: Block) -> list[tuple[int, str]]:
    """``(line number in the file, command)``: continuations joined; in a console block only ``$`` lines."""
    out, pending, first = [], "", 0
    for n, raw in enumerate(block.text.splitlines(), block.line):
        line = raw
        if block.lang == "console" and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if not pending:
            first = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((first, pending + line))
        pending = ""
    return out


def _commands(line: str) -> list[list[str]]:
    """The simple commands of a shell line (split at ``|``, ``&&``, ``||``, ``;``; comments dropped;
    leading ``VAR=value`` assignments and ``export`` lines left out)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, words = [], []
    for token in lexer:
        if token and set(token) <= set("|&;"):
            commands.append(words)
            words = []
        else:
            words.append(token)
    commands.append(words)
    result = []
    for words in commands:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if words and words[0] != "export":
            result.append(words)
    return result


def _parse_ours(argv: list[str]) -> str | None:
    """argparse's complaint about ``otel-agents ARGV``, or ``None`` when it parses (``--help`` included)."""
    from otel_agents.cli import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return None if exc.code == 0 else err.getvalue().strip().splitlines()[-1]
    if not getattr(args, "func", None):
        return "names no command"
    return None


def _instrument_options() -> set[str]:
    """The options ``opentelemetry-instrument`` accepts, as its ``run()`` registers them: for each ``OTEL_…`` name
    of the ``opentelemetry_environment_variables`` entry points, the name without ``OTEL_``/``OTEL_PYTHON_``,
    lower-cased (``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` → ``--disabled_instrumentations``); and its own."""
    from importlib.metadata import entry_points

    options = {"--help", "-h", "--version"}
    for entry_point in entry_points(group="opentelemetry_environment_variables"):
        module = entry_point.load()
        options.update("--" + re.sub(r"OTEL_(PYTHON_)?", "", name).lower() for name in dir(module)
                       if name.startswith("OTEL_"))
    return options


def _parse_ecp_runtime(argv: list[str]) -> str | None:
    """Whether ecp-runtime's own CLI (typer) has the subcommand and options of ``ecp ARGV`` (their values are
    not checked: ``ecp run`` wants the manifest to exist)."""
    import typer
    from ecp_runtime.cli import app

    group = typer.main.get_command(app)
    if not argv or argv[0] not in group.commands:
        return f"ecp has no command {argv[:1]} (it has {sorted(group.commands)})"
    options = {opt for param in group.commands[argv[0]].params for opt in [*param.opts, *param.secondary_opts]}
    unknown = [a.split("=")[0] for a in argv[1:] if a.startswith("-") and a.split("=")[0] not in options | {"--help"}]
    return f"ecp {argv[0]} has no option {unknown}" if unknown else None


def _extras() -> set[str]:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return set(pyproject["project"]["optional-dependencies"])


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", text, re.M)) | set(
        re.findall(r"^\.PHONY:(.*)$", text, re.M)[0].split())


def _ours_options(argv: list[str]) -> str | None:
    """For a command quoted in prose (``otel-agents fold``, ``otel-agents demo --venv``): its subcommands and
    options exist (arguments it leaves out are not asked for)."""
    from otel_agents.cli import build_parser

    parser, path = build_parser(), ["otel-agents"]
    for word in argv:
        if word.startswith("-") and word != "-":
            if word.split("=")[0] not in parser._option_string_actions:
                return f"{' '.join(path)} has no option {word.split('=')[0]}"
        elif parser._subparsers is not None:  # a command with subcommands: the word names one
            choices = parser._subparsers._group_actions[0].choices
            if word not in choices:
                return f"{' '.join(path)} has no subcommand {word!r} (it has {sorted(choices)})"
            parser = choices[word]
            path.append(word)
    return None


def command_problem(words: list[str], whole: bool = True) -> str | None:
    """What is wrong with one simple command the docs show, or ``None``; ``whole=False`` for a command quoted
    in prose, which may leave out its arguments."""
    program, args = words[0], words[1:]
    if program == "otel-agents":
        return _parse_ours(args) if whole else _ours_options(args)
    if program == "opentelemetry-instrument":
        known, i = _instrument_options(), 0
        while i < len(args) and args[i].startswith("-"):
            option = args[i].split("=")[0]
            if option not in known:
                return f"opentelemetry-instrument has no option {option}"
            i += 1 if "=" in args[i] or option in ("--help", "-h", "--version") else 2
        return None if i < len(args) or not whole else "opentelemetry-instrument: no command to run"
    if program == "ecp":
        return _parse_ecp_runtime(args)
    if program == "pip" and args[:1] == ["install"]:
        for requirement in args[1:]:
            extras = re.fullmatch(r"otel-agents\[([\w,-]+)\]", requirement)
            if extras and not set(extras.group(1).split(",")) <= _extras():
                return f"no extra {sorted(set(extras.group(1).split(',')) - _extras())} in pyproject.toml"
        return None
    if program == "make":
        unknown = [t for t in args if not t.startswith("-") and "=" not in t and t not in _make_targets()]
        return f"no Makefile target {unknown}" if unknown else None
    if program in ("python", "python3", "bash") and args and not args[0].startswith("-"):
        script = args[0]
        if "/" in script and not (REPO / script).is_file():
            return f"no file {script} in the repository"
    return None


SHELL_LINES = [(f"{b.where.split(':')[0]}:{n}", line) for b in all_blocks(*SHELL) for n, line in _logical_lines(b)]


@pytest.mark.parametrize(("where", "line"), SHELL_LINES, ids=[w for w, _ in SHELL_LINES])
def test_shell_line_names_real_commands_and_options(where: str, line: str) -> None:
    for words in _commands(line):
        problem = command_problem(words)
        assert problem is None, f"{where}: {shlex.join(words)}: {problem}"


def _docstring(path: Path) -> str:
    """A module's docstring, preceded by as many newlines as lines before it, so offsets give file lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree, clean=False) or ""
    return "\n" * (tree.body[0].lineno - 1) + doc if doc else ""


def _documents() -> list[tuple[str, str]]:
    """``(file, text)``: the markdown DOCS, and the module docstrings of the instrumentors (their manuals) and of
    the CLI's commands (their ``--help``)."""
    docs = [(str(p.relative_to(REPO)), p.read_text(encoding="utf-8")) for p in DOCS]
    sources = [*sorted((REPO / "src" / "otel_agents" / "instrumentors").glob("*/__init__.py")),
               *sorted((REPO / "src" / "otel_agents" / "cli").glob("*.py"))]
    return docs + [(str(path.relative_to(REPO)), _docstring(path)) for path in sources]


def _inline_commands() -> list[tuple[str, str]]:
    """``otel-agents …``, ``pip install …`` and ``opentelemetry-instrument …`` quoted inline in prose (outside
    code blocks) or in a manual's or ``--help``'s docstring."""
    found = []
    for name, text in _documents():
        path = REPO / name
        fenced = {n for b in blocks(path) for n in range(b.line - 1, b.line + b.text.count("\n") + 1)} \
            if path.suffix == ".md" else set()
        for match in re.finditer(r"(?<!`)``?((?:otel-agents|pip install|opentelemetry-instrument) [^`]+)``?(?!`)",
                                 text):
            number = text.count("\n", 0, match.start()) + 1
            command = " ".join(match.group(1).split())
            if number in fenced or "…" in command or "..." in command or re.search(r"\b[A-Z]{2,}\b(?!=)", command):
                continue  # a template (FILE, URL, TARGET) rather than a command
            found.append((f"{name}:{number}", command))
    return found


INLINE = _inline_commands()


@pytest.mark.parametrize(("where", "command"), INLINE, ids=[w for w, _ in INLINE])
def test_inline_command_names_real_commands_and_options(where: str, command: str) -> None:
    for words in _commands(command):
        problem = command_problem(words, whole=False)
        assert problem is None, f"{where}: {shlex.join(words)}: {problem}"


def test_the_guard_sees_the_docs_blocks() -> None:
    """The extraction itself: it finds blocks of every kind it checks, in README.md and in docs/ (a change of
    fence style would otherwise leave these tests checking nothing)."""
    assert len(all_blocks("python")) >= 8 and len(SHELL_LINES) >= 30 and len(INLINE) >= 5
    assert {b.where.split(":")[0] for b in all_blocks("python", *SHELL)} >= {"README.md", "docs/ecp.md", "docs/collect.md"}
    assert command_problem(["otel-agents", "ecp", "serve", "a:b", "--colect", "0"])
    assert command_problem(["opentelemetry-instrument", "--traces-exporter", "console", "python", "app.py"])
    assert command_problem(["ecp", "run", "--manifesto", "m.yaml"])
    assert not command_problem(["opentelemetry-instrument", "--disabled_instrumentations", "crewai", "python", "a.py"])
    assert command_problem(["pip", "install", "otel-agents[zero_code]"])
    assert python_problems("from otel_agents.exporters.ecp import fold_spans\n")
    assert python_problems("from otel_agents.instrumentors.langchain import LangchainInstrumentor\n")
    assert len(python_problems("import otel_agents\notel_agents.presetz.file('t.jsonl')\n")) == 1
    assert len(usage_blocks()) == len(list((REPO / "src" / "otel_agents" / "instrumentors").glob("*/__init__.py")))
    assert python_problems("import otel_agents\notel_agents.configure(exporter=['file'])\n")


# -- environment variables ------------------------------------------------------------------------------------

ENV = re.compile(r"\bOTEL_AGENTS_[A-Z0-9_]+\b")


@functools.cache
def _strings_in_src() -> tuple[tuple[str, str], ...]:
    """``(file, value)`` of every string literal in src/otel_agents."""
    return tuple((str(path.relative_to(REPO)), node.value)
                 for path in sorted((REPO / "src" / "otel_agents").rglob("*.py"))
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Constant) and isinstance(node.value, str))


def _variables_the_code_reads() -> dict[str, str]:
    """``OTEL_AGENTS_*`` string literals in src (variable names; attribute-name constants are identifiers, not
    strings) → the file that names it."""
    found: dict[str, str] = {}
    for where, value in _strings_in_src():
        if ENV.fullmatch(value):
            found.setdefault(value, where)
    return found


def test_every_variable_the_docs_name_is_read_by_the_code() -> None:
    read = _variables_the_code_reads()
    unknown = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
               for name, text in _documents() for m in ENV.finditer(text) if m.group() not in read]
    assert not unknown, "named in the docs, read by no code:\n" + "\n".join(unknown)


def test_every_variable_the_code_reads_has_a_row_in_the_configuration_reference() -> None:
    """README's configuration reference is where a user looks a variable up: ``OTEL_AGENTS_A2A_PROPAGATE`` was
    only a parenthesis in the MCP row, ``OTEL_AGENTS_ECP_TOKEN`` and ``OTEL_AGENTS_DEMO_SEED`` not in the table."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Configuration reference"):]
    table = table[:table.index("\n## ")]
    rows = {m.group(1) for m in re.finditer(r"^\| `(OTEL_AGENTS_[A-Z0-9_]+)`", table, re.M)}
    missing = [f"{where}: {name}" for name, where in _variables_the_code_reads().items() if name not in rows]
    assert not missing, "read by the code, no row in README's configuration reference:\n" + "\n".join(missing)


# -- links ----------------------------------------------------------------------------------------------------

REGISTRIES = re.compile(r"https?://(?:[\w-]+\.)*(?:pypi\.org|pypi\.python\.org|pythonhosted\.org|libraries\.io|"
                        r"pepy\.tech|piwheels\.org|anaconda\.org|npmjs\.com|crates\.io)\b[^\s)>`\"']*")


def test_library_links_go_to_the_library_not_a_package_registry() -> None:
    """A link to a library is to its own documentation or repository, never to a registry's page of it."""
    markdown = []
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "out"]  # venvs, caches, the demo's output
        markdown += [Path(folder, f) for f in files if f.endswith(".md")]
    texts = [(str(p.relative_to(REPO)), p.read_text(encoding="utf-8")) for p in sorted(markdown)]
    texts += [(str(p.relative_to(REPO)), p.read_text(encoding="utf-8"))
              for p in sorted((REPO / "src" / "otel_agents").rglob("*.py"))]
    found = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
             for name, text in texts for m in REGISTRIES.finditer(text)]
    assert not found, "\n".join(found)
    # the guard can fire (the sample is split so that this file holds no registry link of its own)
    assert REGISTRIES.search("see [uv](https://" + "pypi.org/project/uv/)")


def test_the_fold_console_example_shows_folds_own_messages(tmp_path: Path) -> None:
    """docs/ecp.md's ``fold`` session quoted the standard library's JSON error ("Expecting ',' delimiter"); fold
    parses with orjson, whose message it passes on. Replayed here: a trace file whose line 17 lacks a comma."""
    import subprocess
    import sys

    (console,) = [b for b in blocks(REPO / "docs" / "ecp.md") if b.lang == "console" and "fold" in b.text]
    shown = [line for line in console.text.splitlines() if not line.startswith("$ ")]
    good = json.dumps({"resourceSpans": []})
    lines = [good] * 16 + ['{"resourceSpans": [] "x": 1}'] + [good]
    (tmp_path / "traces.jsonl").write_text("\n".join(lines) + "\n")
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", "traces.jsonl", "-o", "envelopes.jsonl"],
                          capture_output=True, text=True, cwd=tmp_path)
    position = re.compile(r"line 1 column \d+ \(char \d+\)|\d+ (?=run|span)")
    assert [position.sub("N", line) for line in proc.stderr.splitlines()] == [position.sub("N", s) for s in shown[:2]]
    assert str(proc.returncode) == shown[2], proc


def test_readme_counts_the_contract_kits_cases() -> None:
    """README's layout said "cases X-1 … X-7" after the kit had grown to X-13."""
    kit = (REPO / "tests" / "contract" / "kit.py").read_text(encoding="utf-8")
    last = max(int(n) for n in re.findall(r"def test_x(\d+)_", kit))
    assert f"(cases X-1 … X-{last})" in (REPO / "README.md").read_text(encoding="utf-8"), last


MANIFESTS = [b for b in all_blocks("yaml") if "manifest_version" in b.text or b.text.startswith("graders:")]


@pytest.mark.parametrize("block", MANIFESTS, ids=_id)
def test_manifest_block_is_a_valid_ecp_manifest(block: Block, tmp_path: Path) -> None:
    """A manifest in the docs (or a step's ``graders:``) is one ecp-runtime reads (its own model, what ``ecp validate`` checks), and
    its target is an ``otel-agents`` command line that parses."""
    from ecp_runtime.manifest import ECPManifest

    text = block.text
    if text.startswith("graders:"):  # a step's graders alone: checked inside a manifest of one step
        text = ('manifest_version: "v1"\nname: "doc"\ntarget: "otel-agents ecp serve agent.py:agent"\n'
                'scenarios:\n  - name: "s"\n    steps:\n      - input: "q"\n'
                + "".join(f"        {line}\n" for line in text.splitlines()))
    (tmp_path / "manifest.yaml").write_text(text, encoding="utf-8")
    manifest = ECPManifest.from_yaml(str(tmp_path / "manifest.yaml"))
    assert manifest.scenarios, block.where
    for words in _commands(manifest.target):
        problem = command_problem(words)
        assert problem is None, f"{block.where}: target {shlex.join(words)}: {problem}"


@pytest.mark.parametrize("path", sorted((REPO / "src" / "otel_agents" / "instrumentors").glob("*/__init__.py")),
                         ids=lambda p: p.parent.name)
def test_files_an_instrumentors_manual_names_exist(path: Path) -> None:
    """LangChain's manual sent its reader to ``../shared/design/semantic-map.md``, a file outside the
    repository: every file a manual names (``docs/…``, ``examples/…``, ``tests/…``) is in it."""
    manual = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    for match in re.finditer(r"``([\w./-]+\.(?:md|py|yaml|json|toml|txt))``", manual):
        named = (REPO / match.group(1)).resolve()
        assert named.is_relative_to(REPO) and named.is_file(), \
            f"{path.relative_to(REPO)}: names {match.group(1)}, not in the repository"


def test_no_source_file_points_outside_the_repository() -> None:
    """The semantic layer's and the envelope's docstrings sent their reader to ``../shared/design/…``, design notes
    beside some checkouts and in no installed package: what a module's reader is pointed at is in the repository."""
    outside = [f"{path.relative_to(REPO)}:{n}" for path in sorted((REPO / "src").rglob("*.py"))
               for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "../shared" in line]
    assert not outside, f"points at ../shared, outside the repository: {outside}"


def test_every_otel_agents_name_in_the_docs_exists() -> None:
    """A quoted ``otel_agents.…`` is a Python name a user imports (``otel_agents.manual.set_providers``) or a
    name the code writes (span attribute ``otel_agents.run.stop_reason``, log record ``otel_agents.ecp.replayed``):
    either way it exists, so a renamed attribute or function cannot stay in the docs under its old name."""
    written = {value for _, value in _strings_in_src()}
    unknown = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)}"
               for name, text in _documents()
               for m in re.finditer(r"(?<!`)``?(otel_agents(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?``?(?!`)", text)
               if m.group(1) not in written and not _resolves(m.group(1))]
    assert not unknown, "named in the docs, neither importable nor written by the code:\n" + "\n".join(unknown)


def _every_option() -> set[str]:
    """Every option of every ``otel-agents`` command, of ``opentelemetry-instrument`` and of ``ecp`` (ecp-runtime)."""
    import typer
    from ecp_runtime.cli import app

    from otel_agents.cli import build_parser

    options, parsers = set(), [build_parser()]
    while parsers:
        parser = parsers.pop()
        options.update(parser._option_string_actions)
        if parser._subparsers is not None:
            parsers += parser._subparsers._group_actions[0].choices.values()
    group = typer.main.get_command(app)
    options.update(o for c in group.commands.values() for p in c.params for o in [*p.opts, *p.secondary_opts])
    return options | _instrument_options()


# not options of a command of ours: pip's, and the secret-redaction examples' ``--password=…``
FOREIGN_OPTIONS = {"--no-binary", "--password"}


def test_every_option_the_docs_quote_exists() -> None:
    """An option quoted in prose (``--collect-grace``, ``--trace-idle``) is one of a command the docs are about,
    so renaming an option cannot leave its old name in a sentence."""
    known = _every_option() | FOREIGN_OPTIONS
    unknown = [f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}: {option}"
               for path in DOCS if path.parent.name != "benchmarks"
               for text in [path.read_text(encoding="utf-8")]
               for m in re.finditer(r"`([^`\n]+)`", text)
               for option in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", m.group(1)) if option not in known]
    assert not unknown, "quoted in the docs, an option of no command:\n" + "\n".join(unknown)


@functools.cache
def _public_callables() -> dict[str, object]:
    """Each public function or class defined in otel_agents whose name only one object has, by name."""
    import pkgutil

    import otel_agents

    found: dict[str, set] = {}
    for module_info in pkgutil.walk_packages(otel_agents.__path__, "otel_agents."):
        if module_info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(module_info.name)
        except Exception:  # a framework's module whose framework is not installed here
            continue
        for name, obj in vars(module).items():
            if not name.startswith("_") and callable(obj) and getattr(obj, "__module__", "").startswith("otel_agents"):
                found.setdefault(name, set()).add(obj)
    return {name: next(iter(objs)) for name, objs in found.items() if len(objs) == 1}


def _signature_problem(text: str, obj: object) -> str | None:
    """What is wrong with ``text``, the inside of ``name(...)`` the docs quote: as a call (``fold(spans,
    problems=list)``), it must bind and name positional parameters as the code does; as a signature
    (``instrument(tracer_provider=None, *, frameworks=None)``), every parameter must exist, in its kind."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    real = signature.parameters
    try:
        call = ast.parse(f"_({text})", mode="eval").body
    except SyntaxError:
        call = None
    if call is not None:
        args = [a for a in call.args if not (isinstance(a, ast.Constant) and a.value is Ellipsis)]  # "..."
        if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in call.keywords):
            return None
        try:
            signature.bind_partial(*args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            return str(exc)
        positional = [p for p in real.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for arg, param in zip(args, positional):
            if isinstance(arg, ast.Name) and arg.id != param.name:
                return f"the parameter is {param.name!r}, not {arg.id!r}"
        return None
    try:
        shown = ast.parse(f"def _({text}): pass").body[0].args
    except SyntaxError:
        return None
    takes_keywords = any(p.kind is p.VAR_KEYWORD for p in real.values())
    for arg in shown.posonlyargs + shown.args:
        if arg.arg not in real:
            return f"has no parameter {arg.arg!r}"
        if real[arg.arg].kind is inspect.Parameter.KEYWORD_ONLY:
            return f"{arg.arg!r} is keyword-only"
    unknown = [a.arg for a in shown.kwonlyargs if a.arg not in real and not takes_keywords]
    return f"has no parameter {unknown[0]!r}" if unknown else None


def test_every_signature_the_docs_quote_is_the_codes() -> None:
    """``read_otlp_json(path_or_lines, errors=None)`` in docs/ecp.md: the parameter is ``source`` and ``errors``
    keyword-only. A ``name(...)`` quoted in the docs, for a function or class of ours, binds to its signature."""
    callables = _public_callables()
    import otel_agents

    assert _signature_problem("tracer_provider=None, *, framework=None", otel_agents.instrument)  # the check checks
    assert _signature_problem("spans, problems=list", otel_agents.exporters.ecp.fold) is None
    wrong = []
    for name, text in _documents():
        for m in re.finditer(r"(?<!`)``?([A-Za-z_][\w.]*)\(([^`()]*)\)``?(?!`)", text):
            obj = callables.get(m.group(1).split(".")[-1])
            problem = obj and _signature_problem(m.group(2), obj)
            if problem:
                wrong.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}: {problem}")
    assert not wrong, "\n".join(wrong)


def test_every_repository_file_the_docs_quote_exists() -> None:
    """A quoted path (``examples/customer_support/manifest.yaml``, ``otel_agents/serve/replay.py``) names a file of
    the repository (from its root, ``src/`` or ``src/otel_agents/``, or the document's folder); ``NAME`` parts are
    placeholders, ``out/`` is what a run writes."""
    bases = (REPO, REPO / "src", REPO / "src" / "otel_agents")
    missing = [f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)}"
               for path in DOCS for text in [path.read_text(encoding="utf-8")]
               for m in re.finditer(r"`([\w.-]+(?:/[\w.-]+)+\.(?:py|md|yaml|yml|sh|toml|txt|json))`", text)
               if not re.search(r"(^|/)[A-Z_]+\.", m.group(1)) and not m.group(1).startswith("out/")  # made by a run
               and not any((base / m.group(1)).exists() for base in (*bases, path.parent))]
    assert not missing, "quoted in the docs, not in the repository:\n" + "\n".join(missing)


def test_every_option_the_help_names_exists() -> None:
    """``--help`` (descriptions, epilogs, each option's help) names only options that exist."""
    from otel_agents.cli import build_parser

    known, wrong, parsers = _every_option(), [], [("otel-agents", build_parser())]
    while parsers:
        name, parser = parsers.pop()
        for text in [parser.description or "", parser.epilog or "", *(a.help or "" for a in parser._actions)]:
            wrong += [f"{name}: {option}" for option in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", text)
                      if option not in known]
        if parser._subparsers is not None:
            parsers += [(f"{name} {n}", p) for n, p in parser._subparsers._group_actions[0].choices.items()]
    assert not wrong, "\n".join(wrong)
