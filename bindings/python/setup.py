"""Builds the package with its own copy of the library: tensor.h compiled into
tensor/libtensor.so at build time (the package then needs nothing else at run time).

    pip install ./bindings/python                          # from the repository root
    pip install --no-build-isolation ./bindings/python     # offline (Debian: python3-setuptools)
    pip wheel --no-build-isolation ./bindings/python       # a wheel

The compiler is $CC (default cc) with $CFLAGS; OpenMP and zlib are used when they build.
The header is ../../tensor.h in the repository, or ./tensor.h in an sdist.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

try:                                    # setuptools < 70.1 builds wheels through the wheel package
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:
    try:
        from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
    except ImportError:
        _bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _header():
    for path in (os.path.join(HERE, "tensor.h"), os.path.join(HERE, "..", "..", "tensor.h")):
        if os.path.isfile(path):
            return os.path.normpath(path)
    sys.exit("tensor: tensor.h not found (expected at ../../tensor.h in the repository, or in the sdist)")


def _version():
    with open(_header()) as f:
        m = re.search(r'#define TENSOR_VERSION_STRING "([^"]+)"', f.read())
    return m.group(1) if m else "0.0.0"


def _builds(cc, flags):
    """Whether cc links an empty program with flags (OpenMP, zlib probes)."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        return subprocess.run([cc, src, "-o", os.path.join(d, "t")] + flags,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


class build_with_library(build_py):
    """build_py, then the shared library next to the package's modules."""

    def run(self):
        super().run()
        cc = os.environ.get("CC", "cc")
        if shutil.which(cc.split()[0]) is None:
            sys.exit(f"tensor: no C compiler ({cc}); install one (Debian: build-essential) or set CC")
        flags = os.environ.get("CFLAGS", "-O3 -fno-math-errno").split()
        omp = ["-fopenmp"] if _builds(cc, ["-fopenmp"]) else []
        zlib = (["-DTENSOR_ZLIB"], ["-lz"]) if _builds(cc, ["-lz"]) else ([], [])
        out = os.path.join(self.build_lib, "tensor", "libtensor.so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cmd = ([cc] + flags + omp + zlib[0] + ["-fPIC", "-shared", "-Wl,-soname,libtensor.so.0", "-DTENSOR_IMPLEMENTATION", "-x", "c", _header(),
               "-o", out, "-lm", "-pthread"] + zlib[1])
        print("tensor: compiling the library:", " ".join(cmd))
        if subprocess.run(cmd).returncode != 0:
            sys.exit("tensor: compiling tensor.h failed (the compiler's message is above)")
        # the header too, for C extensions (tensor.utils.c_extension compiles against it)
        os.makedirs(os.path.join(self.build_lib, "tensor", "include"), exist_ok=True)
        shutil.copy(_header(), os.path.join(self.build_lib, "tensor", "include", "tensor.h"))


class sdist_with_header(sdist):
    """An sdist carries its own tensor.h."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        shutil.copy(_header(), os.path.join(base_dir, "tensor.h"))


cmdclass = {"build_py": build_with_library, "sdist": sdist_with_header}
if _bdist_wheel is not None:
    class bdist_wheel_platform(_bdist_wheel):
        """The wheel carries a compiled library: tagged for this platform (py3-none-linux_x86_64),
        not as pure Python, so pip never installs it on another machine; any Python 3 (ctypes)."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    cmdclass["bdist_wheel"] = bdist_wheel_platform
elif set(sys.argv[1:]) & {"bdist_wheel", "dist_info", "editable_wheel"}:
    # otherwise setuptools stops at "invalid command 'bdist_wheel'" (a venv made without
    # --system-site-packages on Debian has setuptools but not wheel)
    sys.exit("tensor: building a wheel needs the 'wheel' package, which this Python lacks: "
             "pip install wheel, or, offline on Debian, make the venv with "
             "'python3 -m venv --system-site-packages' (python3-wheel) and install with "
             "'pip install --no-build-isolation ./bindings/python'")

setup(version=_version(), cmdclass=cmdclass)
