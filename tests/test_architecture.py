"""ARCHITECTURE.md's tiers hold in the code: every import of an official_bert module (at the top of a file or inside a
function) goes to the same tier or one below, and no modules, nor folders, import each other in a loop.

The tiers are read from ARCHITECTURE.md's "Tiers" block, so the page and this check cannot drift apart.
"""

import ast
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(REPO, "official_bert")


def tiers(text):
    """ARCHITECTURE.md's tiers, highest first: [(name, [paths under official_bert/])], from its block
    ```tiers ... ``` of `name: path path ...` lines."""
    block = re.search(r"```tiers\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no ```tiers block"
    return [(name.strip(), paths.split()) for name, paths in
            (line.split(":", 1) for line in block.group(1).splitlines() if line.strip())]


def module_files(root=PACKAGE):
    """{module name: file} of every module of the package."""
    modules = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                parts = os.path.relpath(path, os.path.dirname(root))[:-3].split(os.sep)
                modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imports(path, modules, lazy_exports):
    """The official_bert modules a file imports (anywhere in it), resolved to modules of `modules`."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in modules:
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                if target in modules:
                    found.add(target)
                elif node.module == "official_bert" and alias.name in lazy_exports:
                    found.add(lazy_exports[alias.name])  # the package's names are imported on first use
                else:
                    found.add(node.module)
    return found


def lazy_exports(modules):
    """official_bert/__init__.py's _EXPORTS: name → the module it comes from."""
    with open(modules["official_bert"], encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def tier_of(module, tier_list):
    """The index of `module`'s tier (0 the highest), by the longest path of a tier that holds it."""
    relative = module.split(".")[1:]
    best = None
    for index, (_, paths) in enumerate(tier_list):
        for path in paths:
            parts = path.rstrip("/").removesuffix(".py").split("/") if path != "__init__.py" else []
            if relative[:len(parts)] == parts and (best is None or len(parts) > best[1]):
                best = (index, len(parts))
    return None if best is None else best[0]


def graph(modules):
    exports = lazy_exports(modules)
    return {module: imports(path, modules, exports) - {module} for module, path in modules.items()}


def loops(edges):
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def violations(modules, tier_list):
    """Every import against the tiers, and every module the tiers do not place, as lines."""
    edges = graph(modules)
    problems = [f"{module}: in no tier of ARCHITECTURE.md" for module in sorted(modules)
                if tier_of(module, tier_list) is None]
    for module, targets in sorted(edges.items()):
        here = tier_of(module, tier_list)
        for target in sorted(targets):
            there = tier_of(target, tier_list)
            if here is not None and there is not None and there < here:
                problems.append(f"{module} ({tier_list[here][0]}) imports {target} ({tier_list[there][0]}), "
                                "a higher tier")
    return problems


def folder_graph(edges):
    """Module edges as edges between the package's top-level folders (and top-level modules)."""
    folders = {}
    for module, targets in edges.items():
        source = ".".join(module.split(".")[:2])
        folders.setdefault(source, set()).update(".".join(t.split(".")[:2]) for t in targets)
    return {folder: targets - {folder} for folder, targets in folders.items()}


@pytest.fixture(scope="module")
def tier_list():
    with open(os.path.join(REPO, "ARCHITECTURE.md"), encoding="utf-8") as f:
        return tiers(f.read())


def test_every_import_goes_to_its_own_tier_or_below(tier_list):
    assert violations(module_files(), tier_list) == []


def test_no_modules_and_no_folders_import_each_other_in_a_loop():
    edges = graph(module_files())
    assert loops(edges) == []
    assert loops(folder_graph(edges)) == []


def test_the_check_fails_on_an_upward_import_and_on_a_loop(tmp_path, tier_list):
    # A copy of the package where a layer imports a task module: the check must name it.
    package = tmp_path / "official_bert"
    for module, path in module_files().items():
        target = package.joinpath(*module.split(".")[1:], "__init__.py") if os.path.basename(path) == \
            "__init__.py" else package.joinpath(*module.split(".")[1:-1], module.split(".")[-1] + ".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(open(path, encoding="utf-8").read(), encoding="utf-8")
    dense = package / "layers" / "dense.py"
    dense.write_text(dense.read_text() + "\nfrom official_bert.tasks import squad  # noqa\n")
    problems = violations(module_files(str(package)), tier_list)
    assert problems == ["official_bert.layers.dense (layers) imports official_bert.tasks.squad (tasks), a higher tier"]
    assert any({"official_bert.layers", "official_bert.tasks"} <= set(loop)
               for loop in loops(folder_graph(graph(module_files(str(package))))))
