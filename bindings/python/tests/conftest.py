"""The package under test is the one in this checkout (bindings/python), not an installed one.

PyTorch's own test database (torch.testing._internal: op_db, module_db) imports the small
`expecttest` package, which Debian does not ship; a stand-in with the two names it uses
lets the database load (nothing here runs expect-tests)."""
import os
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
