"""A minimal PEP 517 build backend, standard library only.

The package is pure Python with no dependencies, so a wheel is a zip of
cella/ plus the .dist-info files. Writing it here (rather than asking pip
for setuptools or flit) keeps `pip install clients/python` working offline:
with `requires = []` pip has nothing to fetch.
"""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "cella"
VERSION = "0.1.0"
SUMMARY = ("Client for cella, the sandbox for untrusted code: create sandboxes, "
           "run commands, move files.")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
TAG = "py3-none-any"


def _metadata():
    readme = ""
    path = os.path.join(HERE, "README.md")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            f"Summary: {SUMMARY}\nRequires-Python: >=3.9\nLicense: Apache-2.0\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def _package_files():
    root = os.path.join(HERE, NAME)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".typed")):
                full = os.path.join(dirpath, name)
                yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, editable=False):
    filename = f"{NAME}-{VERSION}-{TAG}.whl"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as zf:
        def add(arcname, data):
            zf.writestr(zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0)), data)
            records.append(_record_line(arcname, data))

        if editable:
            add(f"__editable__.{NAME}.pth", (HERE + "\n").encode())
        else:
            for full, arcname in _package_files():
                with open(full, "rb") as f:
                    add(arcname, f.read())
        add(f"{DIST_INFO}/METADATA", _metadata().encode())
        add(f"{DIST_INFO}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: cella-backend\n"
                                   f"Root-Is-Purelib: true\nTag: {TAG}\n").encode())
        records.append(f"{DIST_INFO}/RECORD,,")
        zf.writestr(zipfile.ZipInfo(f"{DIST_INFO}/RECORD", date_time=(2026, 1, 1, 0, 0, 0)),
                    "\n".join(records) + "\n")
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tf:
        files = [(full, arc) for full, arc in _package_files()]
        for extra in ("pyproject.toml", "README.md", "_build/backend.py"):
            files.append((os.path.join(HERE, extra), extra))
        for full, arc in files:
            if os.path.exists(full):
                tf.add(full, arcname=f"{base}/{arc}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return filename
