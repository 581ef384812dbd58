"""pip install . (from a checkout): builds the vlbias Python module with the project's own
CMake (Release, into build/ or $VLBIAS_BUILD_DIR, so an existing build is reused) and installs
the package python/vlbias with it. Debian 12 has no scikit-build-core; this plain setuptools
command drives CMake instead. On Debian's system Python:

    pip install --no-build-isolation --break-system-packages .    # or inside a venv
"""
import os
import pathlib
import re
import shutil
import sys
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).parent.resolve()
VERSION = re.search(r"project\(vlbias VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


class CMakeExtension(Extension):
    def __init__(self):
        super().__init__("vlbias._vlbias", sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("VLBIAS_BUILD_DIR", ROOT / "build"))
        subprocess.check_call(
            ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
             "-DCMAKE_BUILD_TYPE=Release", "-DVLBIAS_PYTHON=ON",
             f"-DPython3_EXECUTABLE={sys.executable}"]
        )
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_vlbias"])
        built = sorted((build / "python" / "vlbias").glob("_vlbias*.so"))
        if not built:
            raise RuntimeError(f"the build left no _vlbias module in {build / 'python' / 'vlbias'}")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


# setuptools' own build and egg-info folders go under build/setuptools, not the checkout.
SCRATCH = ROOT / "build" / "setuptools"
SCRATCH.mkdir(parents=True, exist_ok=True)

setup(
    name="vlbias",
    version=VERSION,
    description="Audit vision-language systems for social bias (C++ engine)",
    packages=["vlbias"],
    package_dir={"vlbias": "python/vlbias"},
    package_data={"vlbias": ["*.pyi", "py.typed"]},
    ext_modules=[CMakeExtension()],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
    options={"build": {"build_base": str(SCRATCH)}, "egg_info": {"egg_base": str(SCRATCH)}},
)
