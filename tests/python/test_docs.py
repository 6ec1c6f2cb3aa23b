# SPDX-License-Identifier: Apache-2.0
# Every Python snippet in docs/embedding.md and README.md runs (issue 26: docs that cannot rot).
import importlib.util
import os
import re

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def snippets(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        text = f.read()
    for i, m in enumerate(re.finditer(r"```python\n(.*?)```", text, re.S)):
        line = text.count("\n", 0, m.start()) + 2
        yield pytest.param(name, line, m.group(1), id="%s:%d" % (name, line))


@pytest.mark.parametrize("name,line,code", list(snippets("docs/embedding.md")) + list(snippets("README.md")))
def test_snippet_runs(name, line, code):
    if "torch" in code and importlib.util.find_spec("torch") is None:
        pytest.skip("the snippet uses PyTorch, which is not installed")
    if "torch" in code and "import torch" not in code:
        code = "import torch\n" + code
    exec(compile("\n" * (line - 1) + code, os.path.join(ROOT, name), "exec"), {"__name__": "snippet"})


def test_the_docs_have_snippets():
    assert len(list(snippets("docs/embedding.md"))) >= 4
    assert len(list(snippets("README.md"))) >= 1
