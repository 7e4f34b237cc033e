"""The package under test is the one in this checkout (bindings/python), not an installed one."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
