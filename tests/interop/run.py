#!/usr/bin/env python3
# Runs epgraph's PyTorch interop tests (tests/interop/test_*.py) under pytest; ctest calls it.
# SPDX-License-Identifier: BSD-3-Clause
"""Exit status: pytest's, except 77 (ctest: skipped) when torch or pytest cannot be imported, and 1
when pytest collected no tests (pytest's 5), so an empty run never passes.

Environment (set by ctest, see CMakeLists.txt): EPGRAPH_PT2_EDIT (the pt2_edit binary, required),
EPGRAPH_INTEROP_WORKDIR (folder for the generated programs), EPGRAPH_INTEROP_SHARD (which half
of the tests to run; ctest runs the two halves side by side, see CMakeLists.txt and conftest.py).
Extra arguments go to pytest; when they name test files (test_*.py, relative to this folder), only
those run, else every test_*.py here.
"""

import os
import sys

SKIP = 77


def main() -> int:
    sys.dont_write_bytecode = True  # nothing is written into the source tree
    try:
        import pytest
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        print(f"SKIPPED: pytest cannot be imported ({type(e).__name__}: {e})")
        return SKIP
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"SKIPPED: torch cannot be imported ({type(e).__name__}: {e})")
        return SKIP
    if not os.environ.get("EPGRAPH_PT2_EDIT"):
        print("error: EPGRAPH_PT2_EDIT is not set (the path of the built pt2_edit)")
        return 1
    print(f"torch {torch.__version__}, pytest {pytest.__version__}, "
          f"pt2_edit {os.environ['EPGRAPH_PT2_EDIT']}", flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(here, a) for a in sys.argv[1:] if a.endswith(".py")]
    rest = [a for a in sys.argv[1:] if not a.endswith(".py")]
    for f in files:
        if not os.path.isfile(f):
            print(f"error: no test file {f}")
            return 1
    rc = int(pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", here, *(files or [here]),
                          *rest]))
    if rc == 5:
        print("error: pytest collected no tests")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
