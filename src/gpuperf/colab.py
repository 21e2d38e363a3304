"""The notebooks' shared first cell, and a builder for chapter notebooks.

Every chapter notebook starts with the same setup cell (tag ``setup``). On Colab it
installs the tested versions and this package from the repository, and checks that
a GPU runtime is attached; elsewhere it does nothing but import the package. The
repository URL must match ``repository.url`` in ``_config.yml`` (a test checks it).
"""

from __future__ import annotations

REPOSITORY_URL = "https://github.com/gpuperf/gpuperf"

# numpy<2.5: numba-cuda 0.30.4 calls np.row_stack, which numpy 2.5 removed (the
# simulator does not notice; a real GPU does). numba-cuda[cu12]==0.30.4: the version
# the recorded results and the tests were made with.
NUMBA_CUDA = "0.30.4"
PINNED = ['"numpy>=2.0,<2.5"', f'"numba-cuda[cu12]=={NUMBA_CUDA}"']

SETUP_CELL = f'''\
# Setup. On Colab: install the tested versions and the course package, and check for a GPU.
# Anywhere else this cell only imports the package (install it with requirements.txt).
import subprocess
import sys

if "google.colab" in sys.modules:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", {", ".join(PINNED)},
         "gpuperf @ git+{REPOSITORY_URL}"],
        check=True,
    )
    if subprocess.run(["nvidia-smi"], capture_output=True).returncode != 0:
        print("No GPU is attached to this Colab runtime. Choose Runtime > Change runtime type >"
              " T4 GPU, then Runtime > Restart session and run this cell again. Until then the"
              " notebook runs on the CUDA simulator with recorded results.")
    if getattr(sys.modules.get("numba_cuda"), "__version__", "{NUMBA_CUDA}") != "{NUMBA_CUDA}":
        print("An older numba-cuda was imported before this cell installed {NUMBA_CUDA}; it stays"
              " in memory. Choose Runtime > Restart session, then run this cell again.")

# MEASURE = False shows the reference GPU's recorded results instead of measuring every
# experiment again (for a class saving GPU time); exercises, their checkers and the
# explorers' "measure live" buttons still run on the GPU.
MEASURE = True
if not MEASURE:
    import os

    os.environ["GPUPERF_LIVE"] = "0"

import gpuperf as gp

gp.show_device()'''


def new_notebook(cells):
    """A chapter notebook: the setup cell after the title cell, Colab asked for a GPU.

    ``cells`` is a list of ``("md", text)`` or ``("code", source)`` pairs, or
    ``("code", source, {"tags": [...]})``; the first must be the markdown title.
    """
    import nbformat

    from . import validate as v

    cells = v.sequence(cells, "cells")
    for i, cell in enumerate(cells):
        if not isinstance(cell, (tuple, list)) or len(cell) not in (2, 3) \
                or not isinstance(cell[1], str) or (len(cell) == 3 and not isinstance(cell[2], dict)):
            raise TypeError(f"cells[{i}] must be a pair (kind, source) or (kind, source, metadata), "
                            f"e.g. ('md', '# Title'); got {v._short(cell)}.")
        v.choice(cell[0], f"cells[{i}][0]", ("md", "code"))
    if cells[0][0] != "md":
        raise ValueError("cells[0] must be the markdown title cell ('md', '# Title ...').")
    nb = nbformat.v4.new_notebook()
    out = []
    for i, cell in enumerate(cells):
        kind, src = cell[0], cell[1]
        meta = cell[2] if len(cell) > 2 else {}
        if kind == "md":
            out.append(nbformat.v4.new_markdown_cell(src, metadata=meta))
        elif kind == "code":
            out.append(nbformat.v4.new_code_cell(src, metadata=meta))
        else:
            raise ValueError(f"cell {i}: kind must be 'md' or 'code', not {kind!r}")
        if i == 0:
            out.append(nbformat.v4.new_code_cell(SETUP_CELL, metadata={"tags": ["setup", "hide-input"]}))
    nb.cells = out
    nb.metadata.update({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "accelerator": "GPU",
        "colab": {"gpuType": "T4", "provenance": []},
    })
    # Stable ids keep diffs small when a generator script rewrites the notebook.
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i:03d}"
    return nb
