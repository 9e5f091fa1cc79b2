"""benchmarks/compile_speed.py: warm stage times and the README section it rewrites."""

from __future__ import annotations

from pathlib import Path

from benchmarks import compile_speed

REPO = Path(__file__).resolve().parent.parent


def test_warm_timings_of_a_sample():
    warm = compile_speed.warm_timings(REPO / "samples" / "cumsum.ir", repeat=1)
    assert warm["status"] == "ok"
    assert set(warm["stages_s"]) == set(compile_speed.STAGES)
    assert warm["source_to_spirv_s"] > 0 and warm["spirv_val_s"] > 0 and warm["spirv_bytes"] > 0


def test_readme_section_is_replaced_in_place(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# b\n\n## Before\n\ntext\n\n## Compile speed\n\nold\n| table |\n\n## After\n\nkept\n")
    compile_speed.update_readme(readme, "## Compile speed\n\nnew\n")
    assert readme.read_text() == "# b\n\n## Before\n\ntext\n\n## Compile speed\n\nnew\n\n## After\n\nkept\n"
    compile_speed.update_readme(readme, "## Compile speed\n\nnewer\n")
    assert readme.read_text().count("## Compile speed") == 1 and "newer" in readme.read_text()


def test_markdown_has_a_row_per_sample():
    doc = {"method": "m", "date": "d", "machine": "x", "load_average": [1.0, 1.0, 1.0],
           "python_startup_s": 0.02, "tree": ".", "imports": {"bytecode": [("tinyc", 12.0)]},
           "files": [{"file": "samples/a.ir",
                      "warm": {"status": "ok", "stages_s": dict.fromkeys(compile_speed.STAGES, 0.001),
                               "source_to_spirv_s": 0.005, "source_to_spirv_median_s": 0.006, "spirv_val_s": 0.002, "spirv_val_again_s": 1e-6,
                               "spirv_bytes": 100},
                      "cold": {"bytecode": {"status": "ok", "median_s": 0.1},
                               "source": {"status": "ok", "median_s": 0.2}}}]}
    text = compile_speed.markdown(doc, baseline=doc, baseline_label="itself")
    assert "| samples/a.ir | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 | **5.00** | 6.00 | 2.00 | 0.001 | 100 | 100 | 200 |" in text
    assert "| samples/a.ir | 5.00 → 5.00 | 2.00 → 2.00 | 100 → 100 | 200 → 200 |" in text
