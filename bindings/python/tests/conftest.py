"""The package under test is the one in this checkout (bindings/python), not an installed one.

PyTorch's own test database (torch.testing._internal: op_db, module_db) imports the small
`expecttest` package, which Debian does not ship; a stand-in with the two names it uses
lets the database load (nothing here runs expect-tests)."""
import os
import re
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import expecttest  # noqa: F401
except ImportError:
    _stub = types.ModuleType("expecttest")
    _stub.TestCase = unittest.TestCase
    _stub.ACCEPT = False
    sys.modules["expecttest"] = _stub


# Under the sanitizer pass (`make test SANITIZE=1`: LD_PRELOAD has GCC 12's libasan), a
# process forked while another thread of this threaded test process is inside the
# allocator inherits ASan's allocator lock held and hangs for ever (that runtime does not
# lock its allocator around fork; seen in a DataLoader worker). The tests that fork worker
# processes run in the plain pass; under ASan they are skipped with this reason (the C
# loader's worker processes run under ASan in tests/test_loader_workers.c).
_FORKS = re.compile(r"num_workers\s*=\s*[1-9]|multiprocessing|os\.fork|mp\.Process")


def pytest_collection_modifyitems(config, items):
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        return
    import inspect
    import pytest
    skip = pytest.mark.skip(reason="forks child processes: GCC 12's ASan runtime can hang a child forked from a threaded process")
    for item in items:
        mod = os.path.basename(str(item.fspath))
        try:
            src = inspect.getsource(item.function)
        except (OSError, TypeError, AttributeError):
            src = ""
        if mod in ("test_dataloader_workers.py", "test_multiprocessing.py") or _FORKS.search(src):
            item.add_marker(skip)
