"""Every example on the front page and the docs/ pages is run or compiled by a test, so none
can go stale: a Python or Kotlin example only where a test runs it, a Rust example only on a
page core/src/lib.rs compiles as doctests. Anything else is a fragment (```text, ```sh,
```xml) that no test could run; the Maven dependency shown is the artifact the build installs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from test_readme_example import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Page -> how many examples of the language the tests run there, and which test.
TESTED_EXAMPLES = {
    "python": {
        "README.md": 1,  # test_readme_example.py, test_wheel_install.py
        "docs/python.md": 1,  # test_readme_python_flow.py
        "docs/agents.md": 2,  # test_openai_agents_docs_example.py, test_langgraph_docs_example.py
        "docs/verifiable-logs.md": 1,  # test_verifiable_docs_example.py
    },
    "kotlin": {
        # bindings/ffi/kotlin: ReadmeExampleTest (README), ReadmeFlowExampleTest
        # (docs/kotlin-swift.md) and VerifiableLogExampleTest (docs/verifiable-logs.md) check
        # that the page shows exactly the compiled file.
        "README.md": 1,
        "docs/kotlin-swift.md": 1,
        "docs/verifiable-logs.md": 1,
    },
}
FRAGMENTS = {"text", "sh", "xml"}


def fenced_blocks(page: Path) -> list[str]:
    """The language tag of each fenced code block of ``page``, in order."""
    return re.findall(r"^```(\S*)\n.*?^```$", page.read_text(encoding="utf-8"), re.M | re.S)


def rust_doctest_pages() -> set[str]:
    """The pages whose Rust blocks core/src/lib.rs compiles as doctests."""
    lib = (ROOT / "core" / "src" / "lib.rs").read_text(encoding="utf-8")
    included = re.findall(
        r'#\[cfg\(doctest\)\]\n#\[doc = include_str!\("\.\./\.\./([^"]+)"\)\]', lib
    )
    return set(included)


def test_every_example_is_run_or_compiled_by_a_test() -> None:
    doctested = rust_doctest_pages()
    assert "README.md" in doctested
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        tags = fenced_blocks(page)
        for tag in tags:
            language = tag.split(",")[0]
            if language == "rust":
                assert name in doctested, f"{name} has Rust examples no doctest compiles"
            elif language in TESTED_EXAMPLES:
                tested = TESTED_EXAMPLES[language].get(name, 0)
                shown = sum(1 for t in tags if t == language)
                assert shown == tested, (
                    f"{name} shows {shown} {language} examples, tests run {tested}"
                )
            else:
                assert language in FRAGMENTS, (
                    f"{name}: a ```{tag} block is neither tested nor a fragment"
                )


def test_every_doctest_page_exists_and_has_rust_examples() -> None:
    for name in rust_doctest_pages():
        tags = fenced_blocks(ROOT / name)
        assert any(t.split(",")[0] == "rust" for t in tags), f"{name} has no Rust example"


def test_links_between_the_pages_name_files_that_exist() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links {target}"


def test_the_maven_dependency_shown_is_the_artifact_the_build_installs() -> None:
    page = (ROOT / "docs" / "kotlin-swift.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```xml\n(.*?)^```$", page, re.M | re.S)
    assert len(blocks) == 1, "docs/kotlin-swift.md shows one Maven dependency"
    shown = ET.fromstring(blocks[0])
    pom = ET.parse(ROOT / "bindings" / "ffi" / "kotlin" / "pom.xml").getroot()
    maven = "{http://maven.apache.org/POM/4.0.0}"
    for field in ("groupId", "artifactId", "version"):
        assert shown.findtext(field) == pom.findtext(maven + field), field
