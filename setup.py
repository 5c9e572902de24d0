"""The extension `shapeflow._core` built by CMake for `pip install .` (pyproject.toml has the
rest of the package's description).

The build directory is a temporary one unless SHAPEFLOW_BUILD_DIR names one (configured there on
first use, reused after: a tree already built for this interpreter installs in seconds).
SHAPEFLOW_CMAKE_ARGS adds options to the configuration (`-DSF_TCMALLOC=OFF`)."""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("SHAPEFLOW_BUILD_DIR") or os.path.join(os.path.abspath(self.build_temp), "cmake")
        build_dir = os.path.abspath(build_dir)
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *generator, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DSF_BUILD_TESTS=OFF", "-DSF_BUILD_BENCH=OFF", "-DSF_BUILD_PYTHON=ON",
                                   f"-DPython3_EXECUTABLE={sys.executable}",
                                   *shlex.split(os.environ.get("SHAPEFLOW_CMAKE_ARGS", ""))])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "shapeflow_python"])
        built = glob.glob(os.path.join(build_dir, "src", "python", "shapeflow", "_core*.so"))
        if not built:
            raise RuntimeError(f"the extension was not built in {build_dir} (is pybind11-dev installed?)")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)


# setuptools' own build folder apart from CMake's `build/`.
setup(ext_modules=[Extension("shapeflow._core", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}})
