"""The package's build backend: setuptools' own (setup.py compiles the library), taken from
the interpreter where it is there, so that `pip install ./bindings/python` works offline.

pip builds in an isolated environment that hides the interpreter's packages and fills it
with [build-system] requires from the package index; offline that fails before setup.py
runs ("No matching distribution found for setuptools"). So pyproject.toml requires
nothing, and this backend looks for setuptools and wheel among the interpreter's own
packages (site.getsitepackages(): what --no-build-isolation would use) and asks pip for
them only when they are not there, which online works as for any package."""
import importlib.util
import re
import site
import sys


def _find(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:            # a parent package is missing
        return False


def _interpreters_packages():
    """Puts the interpreter's site-packages after the isolated environment's, when the
    latter has no setuptools (pip's isolation removes them from sys.path)."""
    if not _find("setuptools"):
        for p in site.getsitepackages():
            if p not in sys.path:
                sys.path.append(p)
        importlib.invalidate_caches()


def _missing():
    _interpreters_packages()
    need = []
    if not _find("setuptools"):
        need.append("setuptools>=61")
    if not (_find("wheel") or _find("setuptools.command.bdist_wheel")):
        need.append("wheel")       # setuptools < 70.1 builds wheels through it
    return need


def _backend():
    _interpreters_packages()
    from setuptools import build_meta
    return build_meta


def _requires(hook, config_settings):
    need = _missing()
    if need:
        return need
    return [r for r in getattr(_backend(), hook)(config_settings)
            if not _find(re.match(r"[A-Za-z0-9_.-]*", r).group(0).replace("-", "_").lower())]


def get_requires_for_build_wheel(config_settings=None):
    return _requires("get_requires_for_build_wheel", config_settings)


def get_requires_for_build_sdist(config_settings=None):
    _interpreters_packages()
    return [] if _find("setuptools") else ["setuptools>=61"]


def get_requires_for_build_editable(config_settings=None):
    return _requires("get_requires_for_build_editable", config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _backend().build_sdist(sdist_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _backend().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _backend().build_editable(wheel_directory, config_settings, metadata_directory)
