"""What the wheel ships besides the module: the license texts and expression in its metadata, and
python/README.md (the package's description) whose example runs as written."""

import re
from importlib import metadata
from pathlib import Path

import pytest

import dlspan

README = Path(__file__).resolve().parents[1] / "README.md"
ROOT = Path(__file__).resolve().parents[2]


def installed():
    """The distribution the imported `dlspan` comes from (not another one further on the path)."""
    package = Path(dlspan.__file__).resolve().parent
    for dist in metadata.distributions(path=[str(package.parent)]):
        if dist.metadata["Name"] == "dlspan":
            return dist
    pytest.fail(f"no dlspan .dist-info beside {package}")


def test_the_metadata_states_the_license():
    meta = installed().metadata
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    assert sorted(meta.get_all("License-File")) == ["LICENSE-APACHE", "LICENSE-MIT"]


@pytest.mark.parametrize("name", ["LICENSE-MIT", "LICENSE-APACHE"])
def test_the_wheel_ships_the_license_texts(name):
    dist = installed()
    shipped = [f for f in dist.files if f.parts[-2:] == ("licenses", name)]
    assert shipped, f"{name} is not in the wheel's .dist-info/licenses"
    assert shipped[0].read_text() == (ROOT / name).read_text()


def test_the_metadata_describes_the_package_with_its_readme():
    assert installed().metadata.get_payload().strip() == README.read_text().strip()


def test_the_readme_example_runs_as_written():
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)
    assert blocks, "python/README.md has a Python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
